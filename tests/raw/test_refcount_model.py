"""Random put/release sequences, batched, against a dict model: records, refcounts and blob files agree."""

import tempfile

from hypothesis import given, settings, strategies as st

from engine.raw import RawStore
from engine.store import Store

from raw_testkit import blob_files

CONTENTS = [f"chunk {index} 蓝牙 😀".encode() for index in range(4)]
operation = st.tuples(st.sampled_from(["put", "release"]), st.integers(0, len(CONTENTS) - 1), st.integers(1, 3))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(operation, min_size=1, max_size=4), min_size=1, max_size=6))
def test_refcounts_follow_a_dict_model(batches):
    model: dict[bytes, int] = {}
    with tempfile.TemporaryDirectory() as directory, Store.open(f"{directory}/store") as store:
        raw = RawStore(store)
        ids = {}
        for batch in batches:
            with raw.batch() as writer:
                for kind, index, count in batch:
                    content = CONTENTS[index]
                    if kind == "put":
                        ids[content] = writer.put(content, {}, refs=count).raw_id
                        model[content] = model.get(content, 0) + count
                    elif content in model:
                        writer.release(ids[content], count)
                        model[content] -= count
                        if model[content] <= 0:
                            del model[content]
            stored = {raw_id: record["refcount"] for raw_id, record in raw.scan()}
            assert stored == {ids[content]: count for content, count in model.items()}
            assert len(blob_files(store.path)) == len(model)
            assert all(raw.read(ids[content]) == content for content in model)
