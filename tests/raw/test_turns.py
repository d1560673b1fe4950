"""raw.turns: one compact record per chunk, decoded back into the turn dicts ingest gave, in conversation/time
order, with reference counts that `verify` holds to one per turn."""

from datetime import datetime, timedelta, timezone

import pytest
import zstandard
from hypothesis import given, strategies as st

from engine.codec import pack, unpack
from engine.errors import CorruptionError, EngineError, InputError
from engine.format import RAW_CHUNK_TABLE, RAW_TURNS_TABLE, RAW_ZSTD_LEVEL
from engine.raw import RawStore
from engine.raw.turn_columns import TurnColumns, _split_source_ids, decode_turns, encode_turns, split_source_id
from engine.raw.turn_time import NUMPY_TS_MIN_VALUES, _encode_ts_column, decode_ts, encode_ts, encode_ts_column
from engine.store import Store

CHUNK = "Ann: 你好 😀\nBen: hi\nnote without speaker\n\n".encode()


def span(text: str, data: bytes = CHUNK) -> tuple[int, int]:
    encoded = text.encode()
    return data.index(encoded), len(encoded)


def turn(text, speaker, ts, source_id, extra=None, data=CHUNK) -> dict:
    offset, length = span(text, data)
    return {"speaker": speaker, "ts": ts, "source_id": source_id, "offset": offset, "length": length,
            "extra": extra or {}}


TURNS = [
    {**turn("你好 😀", "Ann", "2023-05-08T13:56:00", "D1:1", {"n": 1}), "session": "1",
     "attachments": [{"kind": "image", "caption": "a cat"}]},
    {**turn("hi", "Ben", "2023-05-08", "D1:2"), "session": "1", "reply_to": "D1:1"},
    turn("note without speaker", None, None, "notes.txt#3", {"place": "广东深圳", "mid": 2}),
]


def put_chunk(raw, data=CHUNK, conv_id="conv-a", turns=TURNS, meta=None):
    with raw.batch() as writer:
        return writer.put_turns(data, meta or {"conv_id": conv_id}, conv_id, turns)


def test_turns_come_back_as_given(store):
    raw = RawStore(store)
    raw_id = put_chunk(raw).raw_id
    decoded = raw.turns(raw_id)
    assert [item["turn_id"] for item in decoded] == [f"{raw_id}:0", f"{raw_id}:1", f"{raw_id}:2"]
    for given_turn, item in zip(TURNS, decoded):
        assert item["conv_id"] == "conv-a"
        assert (item["speaker"], item["ts"], item["source_id"], item["extra"]) == (
            given_turn["speaker"], given_turn["ts"], given_turn["source_id"], given_turn["extra"])
        assert (item["session"], item["attachments"], item["reply_to"]) == (
            given_turn.get("session"), given_turn.get("attachments", []), given_turn.get("reply_to"))
        assert item["raw_ref"] == {"raw_id": raw_id, "offset": given_turn["offset"], "length": given_turn["length"]}
        start, length = item["raw_ref"]["offset"], item["raw_ref"]["length"]
        assert raw.read_span(raw_id, start, length) == CHUNK[start: start + length]
    assert raw.get(raw_id)["refcount"] == 3


def test_the_stored_rows_are_one_zstd_frame_of_the_packed_columns(store):
    """Turn rows are compressed together when the batch publishes: each record still holds the very frame that
    compressing its packed columns alone gives."""
    raw = RawStore(store)
    raw_id = put_chunk(raw).raw_id
    packed = encode_turns("conv-a", TurnColumns.from_dicts(TURNS), len(CHUNK))["turns"]
    expected = zstandard.ZstdCompressor(level=RAW_ZSTD_LEVEL).compress(packed)
    assert store.get(RAW_TURNS_TABLE, raw_id)["turns"] == expected


def test_one_compact_record_per_chunk(store):
    raw = RawStore(store)
    raw_id = put_chunk(raw).raw_id
    [(key, record)] = list(store.scan(RAW_TURNS_TABLE))
    assert key == raw_id
    assert record["conv_id"] == "conv-a" and record["speakers"] == ["Ann", "Ben", None]
    assert record["ts"] == encode_ts("2023-05-08T13:56:00") and isinstance(record["ts"], int)
    assert isinstance(record["turns"], bytes) and isinstance(record["seq"], int)


@pytest.mark.parametrize("source_id, split", [
    ("D1:3", ("D1:", 3)), ("notes.txt#12", ("notes.txt#", 12)), ("a#012", ("a#0", 12)), ("a#00", ("a#0", 0)),
    ("0", ("", 0)), ("", ("", None)), ("msg-abc", ("msg-abc", None)), ("x²", ("x²", None)), ("٣", ("٣", None)),
    ("n" + "9" * 19, ("n" + "9" * 19, None)), ("9" * 18, ("", 10**18 - 1))])
def test_source_ids_split_into_a_prefix_and_a_trailing_number(source_id, split):
    assert split_source_id(source_id) == split
    prefix, number = split
    assert prefix + ("" if number is None else str(number)) == source_id


TIMES = ["2023-05-08T13:56:00", "2023-05-08", "1999-12-31T23:59:59", "2023-11-14T22:13:20+00:00"]


@given(st.lists(st.tuples(st.one_of(st.none(), st.text(max_size=5)),
                          st.one_of(st.none(), st.sampled_from(TIMES)),
                          st.one_of(st.text(max_size=12), st.integers(0, 10**20).map(str),
                                    st.integers(0, 999).map(lambda number: f"D1:{number}")),
                          st.integers(0, 3), st.integers(0, 5),
                          st.one_of(st.none(), st.just({}), st.just({"blip_caption": "a cat", "n": 2}))),
                min_size=1, max_size=30))
def test_turn_columns_round_trip(rows):
    offsets, end = [], 0
    for _, _, _, gap, length, _ in rows:
        offsets.append(end + gap)
        end += gap + length
    columns = TurnColumns([row[0] for row in rows], [row[1] for row in rows], [row[2] for row in rows], offsets,
                          [row[4] for row in rows], [row[5] for row in rows])
    record = encode_turns("c", columns, end)
    decoded = decode_turns("raw_x", {**record, "turns": zstandard.ZstdCompressor().compress(record["turns"])})
    assert [(turn["speaker"], turn["ts"], turn["source_id"], turn["raw_ref"]["offset"], turn["raw_ref"]["length"],
             turn["extra"]) for turn in decoded] == [
        (row[0], row[1], row[2], offset, row[4], row[5] or {}) for row, offset in zip(rows, offsets)]


SESSIONS = st.one_of(st.none(), st.sampled_from(["1", "2", "2024-04-01", "thread-x", ""]))
ATTACHMENTS = st.one_of(st.none(), st.just([]), st.lists(st.fixed_dictionaries(
    {"kind": st.sampled_from(["image", "file"])},
    optional={"caption": st.text(max_size=8), "name": st.text(max_size=5), "url": st.just("https://x/y.png")}),
    min_size=1, max_size=2))
SOURCE_IDS = st.sampled_from(["D1:1", "D1:2", "m-7f3a", "x", "9"])


@given(st.lists(st.tuples(SOURCE_IDS, SESSIONS, ATTACHMENTS, st.one_of(st.none(), SOURCE_IDS,
                                                                       st.text(max_size=6))),
                min_size=1, max_size=20))
def test_sessions_attachments_and_replies_round_trip(rows):
    """The generic turn fields come back as given: sessions through their table, replies to an earlier turn of
    the chunk through a distance back (also when several turns share a source id), others as ids."""
    count = len(rows)
    columns = TurnColumns([None] * count, [None] * count, [row[0] for row in rows], list(range(count)),
                          [1] * count, [None] * count, [row[1] for row in rows], [row[2] for row in rows],
                          [row[3] for row in rows])
    record = encode_turns("c", columns, 2 * count)
    decoded = decode_turns("raw_x", {**record, "turns": zstandard.ZstdCompressor().compress(record["turns"])})
    assert [(turn["source_id"], turn["session"], turn["attachments"], turn["reply_to"]) for turn in decoded] == [
        (source_id, session, attachments or [], reply_to) for source_id, session, attachments, reply_to in rows]


def payload_of(columns: TurnColumns, length: int) -> list:
    return unpack(encode_turns("c", columns, length)["turns"])


def test_a_column_no_turn_uses_is_one_nil_and_repeated_sessions_are_a_table():
    plain = TurnColumns(["a", "b", "a"], [None] * 3, ["D1:1", "D1:2", "D1:3"], [0, 2, 4], [1, 1, 1], [None] * 3)
    assert payload_of(plain, 5)[7:] == [None] * 5
    assert payload_of(TurnColumns(*[getattr(plain, name) for name in ("speakers", "ts", "source_ids", "offsets",
                                                                      "lengths", "extras")],
                                  [None] * 3, [[]] * 3, [None] * 3), 5)[7:] == [None] * 5
    sessions = TurnColumns(["a", "b", "a"], [None] * 3, ["D1:1", "D1:2", "D2:1"], [0, 2, 4], [1, 1, 1],
                           [None] * 3, ["1", "1", "2"], None, ["elsewhere", "D1:1", "D1:1"])
    assert payload_of(sessions, 5)[8:] == [["1", "2"], [0, 0, 1], None, ["elsewhere", 1, 2]]


def test_a_version_3_payload_of_eight_columns_reads_without_the_generic_fields():
    """memctl migrate reads format-3 records with this decoder before it writes them again."""
    columns = TurnColumns(["a"], ["2023-05-08"], ["D1:1"], [0], [1], [{"blip_caption": "a cat"}])
    record = encode_turns("c", columns, 1)
    old = zstandard.ZstdCompressor().compress(pack(unpack(record["turns"])[:8]))
    [decoded] = decode_turns("raw_x", {**record, "turns": old})
    assert (decoded["extra"], decoded["session"], decoded["attachments"], decoded["reply_to"]) == (
        {"blip_caption": "a cat"}, None, [], None)


@pytest.mark.parametrize("field, bad", [("sessions", [3]), ("reply_to", [7])])
def test_a_session_or_reply_that_is_not_a_str_is_refused(field, bad):
    columns = TurnColumns(["a"], [None], ["x"], [0], [1], [None], **{field: bad})
    with pytest.raises(EngineError, match="must be a str or None"):
        encode_turns("c", columns, 1)


def test_the_same_chunk_again_adds_no_turns_and_no_references(store):
    raw = RawStore(store)
    first = put_chunk(raw)
    again = put_chunk(raw, conv_id="another name")
    assert first.new and not again.new and again.stored_bytes == 0
    with raw.batch() as writer:
        assert writer.put_turns(CHUNK, {}, "c", TURNS).new is False
    assert raw.get(first.raw_id)["refcount"] == 3
    assert [item["conv_id"] for item in raw.turns(first.raw_id)] == ["conv-a"] * 3


def test_twice_in_one_batch_counts_once(store):
    raw = RawStore(store)
    with raw.batch() as writer:
        results = [writer.put_turns(CHUNK, {}, "c", TURNS) for _ in range(2)]
    assert [result.new for result in results] == [True, False]
    assert raw.get(results[0].raw_id)["refcount"] == 3 and len(list(store.scan(RAW_TURNS_TABLE))) == 1


def test_releasing_every_reference_deletes_the_turns_too(store):
    raw = RawStore(store)
    raw_id = put_chunk(raw).raw_id
    with raw.batch() as writer:
        assert writer.release(raw_id, 3)
    assert raw.get(raw_id) is None and list(store.scan(RAW_TURNS_TABLE)) == []
    assert put_chunk(raw).new  # and it can be stored again


def test_spans_must_be_ordered_and_inside_the_chunk(store):
    raw = RawStore(store)
    for bad in ([TURNS[1], TURNS[0]], [{**TURNS[0], "length": len(CHUNK)}], []):
        with pytest.raises(EngineError):
            put_chunk(raw, turns=bad)
    assert list(raw.scan()) == []


def test_turns_of_an_unknown_chunk_and_of_a_chunk_without_turns(store):
    raw = RawStore(store)
    with pytest.raises(InputError, match="no raw chunk raw_0000000000000000"):
        raw.turns("raw_0000000000000000")
    with raw.batch() as writer:
        raw_id = writer.put(b"plain blob", {}).raw_id
    assert raw.turns(raw_id) == []


def chunk_with(conv_id: str, ts: str | None, label: str) -> tuple[bytes, list]:
    data = f"X: {label}\n".encode()
    return data, [turn(label, "X", ts, label, data=data)]


def test_iter_turns_orders_conversations_then_time_then_storing_order(store):
    raw = RawStore(store)
    chunks = [
        ("b", "2024-01-02T00:00:00", "b-late"),
        ("b", None, "b-untimed"),
        ("a", "2024-05-01T10:00:00", "a-second"),
        ("b", "2024-01-01", "b-early-date"),  # a bare date counts as its midnight
        ("a", "2024-05-01T09:00:00+00:00", "a-first-zoned"),
        ("a", "2024-05-01T10:00:00", "a-second-tie"),  # same time: stored later, comes later
    ]
    for conv_id, ts, label in chunks[:3]:
        data, turns = chunk_with(conv_id, ts, label)
        put_chunk(raw, data, conv_id, turns)
    with raw.batch() as writer:  # several in one batch keep their storing order too
        for conv_id, ts, label in chunks[3:]:
            data, turns = chunk_with(conv_id, ts, label)
            writer.put_turns(data, {}, conv_id, turns)
    ordered = list(raw.iter_turns(text=True))
    assert [item["source_id"] for item in ordered] == [
        "a-first-zoned", "a-second", "a-second-tie", "b-early-date", "b-late", "b-untimed"]
    assert all(item["text"] == item["source_id"] for item in ordered)
    assert [item["ts"] for item in ordered][:2] == ["2024-05-01T09:00:00+00:00", "2024-05-01T10:00:00"]


def test_a_reader_snapshot_iterates_turns(store):
    raw_id = put_chunk(RawStore(store)).raw_id
    reader = Store.open(store.path, writable=False)
    assert [item["turn_id"] for item in RawStore(reader).iter_turns()] == [f"{raw_id}:{n}" for n in range(3)]


@given(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)))
def test_naive_times_with_whole_seconds_are_ints_that_decode_to_the_same_text(moment):
    text = moment.replace(microsecond=0).isoformat()
    encoded = encode_ts(text)
    assert isinstance(encoded, int)
    assert decode_ts(encoded) == text


@pytest.mark.parametrize("text", [
    "2024-04-01", "2025-09-15T10:35:00+08:00", "2023-11-14T22:13:20+00:00", "2024-01-01T00:00:00.500000",
    "2024-01-01 10:00:00", "not a date", None])
def test_other_times_are_kept_as_given(text):
    assert encode_ts(text) == text and decode_ts(encode_ts(text)) == text


@given(st.lists(st.one_of(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)).map(
    lambda moment: moment.replace(microsecond=0).isoformat()), st.sampled_from(
    ["2024-02-30T10:00:00", "2024-13-01T00:00:00", "2024-01-01T24:00:00", "2024-04-01", None])),
    min_size=1, max_size=8, unique=True))
def test_a_time_column_encodes_as_each_time_alone(values):
    """The whole-column check (one regex for a column of naive whole-second times) gives what encode_ts gives,
    also when one of them is out of range."""
    assert _encode_ts_column(values) == {value: encode_ts(value) for value in values}


@given(st.lists(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 30)), min_size=1, max_size=40),
       st.one_of(st.none(), st.sampled_from(["2024-02-30T10:00:00", "2023-02-29T00:00:00", "2024-01-01T24:00:00",
                                             "2024-01-01T10:60:00", "0000-01-01T00:00:00", "2024-00-10T00:00:00",
                                             "2024-04-01", "2024-01-01 10:00:00", "２０２４-01-01T10:00:00", None])),
       st.sampled_from([1, 3]), st.booleans())
def test_a_long_time_column_encodes_as_each_time_alone(moments, odd_one, repeats, grouped):
    """A batch's column with enough distinct times for the numpy conversion, each once or repeated, spread
    (the column converted) or in runs as a session's turns share theirs (its distinct times converted): the
    same values as encode_ts, also with leap days, century years and one value numpy cannot take (the column
    then goes value by value)."""
    distinct = [(moments[index % len(moments)].replace(microsecond=0) + timedelta(seconds=index)).isoformat()
                for index in range(NUMPY_TS_MIN_VALUES)]
    column = [value for value in distinct for _ in range(repeats)] if grouped else distinct * repeats
    column += ["2000-02-29T12:00:00", "1900-02-28T23:59:59", "1970-01-01T00:00:00", "9999-12-31T23:59:59"]
    if odd_one is not None or len(moments) % 2:
        column.insert(len(moments), odd_one)
    assert encode_ts_column(column) == [encode_ts(value) for value in column]


def test_a_short_time_column_encodes_as_each_time_alone():
    column = ["2024-01-01T10:00:00", None, "2024-01-01T10:00:00", "2024-04-01", "2024-13-01T00:00:00"]
    assert encode_ts_column(column) == [encode_ts(value) for value in column]


def test_a_batch_encoded_time_column_gives_the_same_record():
    times = ["2023-05-08T13:56:00", "2023-05-08T13:57:00", None]
    columns = TurnColumns(["a", "b", "a"], times, ["D1:1", "D1:2", "D1:3"], [0, 2, 4], [1, 1, 1], [None] * 3)
    given_codes = TurnColumns(*[getattr(columns, name) for name in ("speakers", "ts", "source_ids", "offsets",
                                                                     "lengths", "extras")],
                                encoded_ts=encode_ts_column(times))
    assert encode_turns("c", given_codes, 5) == encode_turns("c", columns, 5)


def test_epoch_ints_are_wall_clock_seconds():
    assert encode_ts("1970-01-01T00:00:00") == 0
    assert encode_ts("2023-05-08T13:56:00") == int((datetime(2023, 5, 8, 13, 56) - datetime(1970, 1, 1))
                                                   / timedelta(seconds=1))
    assert encode_ts("1969-12-31T23:59:59") == -1
    assert datetime.fromtimestamp(encode_ts("2023-05-08T13:56:00"), timezone.utc).hour == 13


# --- verify --------------------------------------------------------------------------------------------------


def tamper(store, table, key, value):
    with store.batch() as batch:
        batch.put(table, key, value)


def reasons(store):
    return [(error.path, error.reason) for error in RawStore(store).verify()[0]]


def test_verify_is_clean_after_ingest_like_writes(store):
    raw = RawStore(store)
    put_chunk(raw)
    with raw.batch() as writer:
        writer.put(b"held by something else", {}, refs=2)
    assert RawStore(store).verify() == ([], [])


def test_verify_reports_a_reference_count_that_is_not_one_per_turn(store):
    raw = RawStore(store)
    raw_id = put_chunk(raw).raw_id
    tamper(store, RAW_CHUNK_TABLE, raw_id, {**raw.get(raw_id), "refcount": 2})
    assert reasons(store) == [(f"raw.chunk/{raw_id}",
                               f"reference count 2, but 3 turn(s) in raw.turns/{raw_id} cite it")]


def test_verify_reports_turns_without_a_chunk_and_a_chunk_without_references(store):
    raw = RawStore(store)
    raw_id = put_chunk(raw).raw_id
    turns_record = store.get(RAW_TURNS_TABLE, raw_id)
    tamper(store, RAW_TURNS_TABLE, "raw_00000000000000ff", turns_record)
    with raw.batch() as writer:
        orphan = writer.put(b"unreferenced", {}, refs=1).raw_id
    tamper(store, RAW_CHUNK_TABLE, orphan, {**raw.get(orphan), "refcount": 0})
    assert sorted(reasons(store)) == sorted([
        (f"raw.chunk/{orphan}", "reference count 0; a stored chunk has at least 1"),
        ("raw.turns/raw_00000000000000ff", "turns of raw_00000000000000ff, which has no raw.chunk record"),
    ])


def test_verify_reports_spans_outside_the_chunk_or_inside_a_character(store):
    raw = RawStore(store)
    raw_id = put_chunk(raw).raw_id
    record = store.get(RAW_TURNS_TABLE, raw_id)

    def with_rows(rows, generic=(None, None, None, None)):
        """A payload of three turns holding `rows` [speaker, ts, prefixes, prefix, number, gap, length, extra] and
        the columns [sessions, session, attachments, reply_to] as given."""
        columns = [[row[index] for row in rows] for index in range(8)] + list(generic)
        columns[2] = rows[0][2]
        return {**record, "turns": zstandard.ZstdCompressor().compress(pack(columns))}

    tamper(store, RAW_TURNS_TABLE, raw_id, with_rows([[0, None, ["x"], 0, None, 0, 1000, None]] * 3))
    assert reasons(store) == [(f"raw.turns/{raw_id}", f"turn {raw_id}:0 spans past the chunk's {len(CHUNK)} bytes")]
    cut = CHUNK.index("你".encode()) + 1
    tamper(store, RAW_TURNS_TABLE, raw_id, with_rows([[0, None, ["x"], 0, None, cut, 2, None]] * 3))
    assert reasons(store) == [(f"raw.turns/{raw_id}", f"turn {raw_id}:0 does not span whole UTF-8 characters")]
    expected = ("malformed turn row 0 (expected the columns speaker/ts/prefixes/prefix/number/gap/length/extra/"
                "sessions/session/attachments/reply_to)")
    for malformed in ([[-1, None, ["x"], 0, None, 0, 1, None]] * 3, [[0, None, ["x"], 0, None, 0, -1, None]] * 3,
                      [[0, None, [7], 0, None, 0, 1, None]] * 3, [[0, None, ["x"], 1, None, 0, 1, None]] * 3,
                      [[0, None, ["x"], 0, -5, 0, 1, None]] * 3, [[0, None, ["x"], 0, "1", 0, 1, None]] * 3,
                      [[0, None, ["x"], 0, None, 0, 1, ["not", "a", "map"]]] * 3):
        tamper(store, RAW_TURNS_TABLE, raw_id, with_rows(malformed))
        assert reasons(store) == [(f"raw.turns/{raw_id}", expected)]
    good = [[0, None, ["x"], 0, None, 0, 1, None]] * 3
    for generic, row in (((["1"], [0, 0, 5], None, None), 0), ((["1"], [0, -1, 0], None, None), 0),
                         (([7], [0, 0, 0], None, None), 0), ((None, None, [None, [], None], None), 1),
                         ((None, None, [None, [{"caption": "no kind"}], None], None), 1),
                         ((None, None, [[{"kind": "image", "caption": 3}], None, None], None), 0),
                         ((None, None, None, [1, None, None]), 0), ((None, None, None, [None, 2, None]), 1),
                         ((None, None, None, [None, None, b"id"]), 2), ((None, None, None, [None, None]), 0)):
        tamper(store, RAW_TURNS_TABLE, raw_id, with_rows(good, generic))
        assert reasons(store) == [(f"raw.turns/{raw_id}", expected.replace("row 0", f"row {row}"))], generic
    tamper(store, RAW_TURNS_TABLE, raw_id, with_rows(good, (["1", None], [0, 1, 0], [[{"kind": "file"}], None, None],
                                                             [None, 1, "elsewhere"])))
    assert reasons(store) == []
    tamper(store, RAW_TURNS_TABLE, raw_id, {**record, "turns": zstandard.ZstdCompressor().compress(pack([[0], []]))})
    assert reasons(store) == [(f"raw.turns/{raw_id}", expected)]
    with pytest.raises(CorruptionError, match="malformed turn row 0"):
        raw.turns(raw_id)
    tamper(store, RAW_TURNS_TABLE, raw_id, {**record, "turns": b"not zstd"})
    assert [path for path, _ in reasons(store)] == [f"raw.turns/{raw_id}"]


SOURCE_ID_PIECES = ["a", "#", ":", "D1:", "0", "00", "1", "9", "12", "٣", "²", "9" * 19, "\0"]


def counting_run(prefix: str, first: int, length: int) -> list[str]:
    return [f"{prefix}{number}" for number in range(first, first + length)]


SOURCE_ID_RUNS = st.builds(counting_run, st.sampled_from(["D1:", "a#0", "x", "9", "²", ""]),
                           st.sampled_from([0, 1, 8, 99, 10**18 - 3, 10**19]), st.integers(1, 6))


@given(st.lists(st.one_of(st.lists(st.sampled_from(SOURCE_ID_PIECES), max_size=4).map(lambda ids: ["".join(ids)]),
                          st.integers(0, 10**20).map(lambda number: [f"f.txt#{number}"]),
                          st.integers(0, 50).map(lambda number: [f"x0{number}"]),
                          SOURCE_ID_RUNS), min_size=1, max_size=6).map(lambda runs: sum(runs, [])))
def test_the_source_id_column_splits_exactly_as_each_id_alone(source_ids):
    """The column fast path (ids that go on counting from a split one) stores the same bytes as
    split_source_id: across the digit limit, a prefix ending in digits, runs that break off."""
    prefixes, prefix_column, numbers = _split_source_ids(source_ids)
    splits = [split_source_id(source_id) for source_id in source_ids]
    assert list(prefixes) == list(dict.fromkeys(prefix for prefix, _ in splits))
    assert [list(prefixes)[index] for index in prefix_column] == [prefix for prefix, _ in splits]
    assert numbers == [number for _, number in splits]
