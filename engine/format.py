"""Every constant of memctl's on-disk formats, in one place.

Readers, writers, tools/ dumpers and tests import these names; nothing else spells a magic number, a header
size or a record type. MANIFEST.spec (repository root) documents each one; change both together and bump
FORMAT_VERSION when any byte on disk changes meaning.
"""

from __future__ import annotations

# A store whose files carry a higher version is refused (UnsupportedVersion), never misread.
FORMAT_VERSION = 5
# A store whose MANIFEST carries an older version is refused: format 5 keeps the version chains of slot facts
# (a format-4 store holds the claims without them, and a format-4 writer would add claims without chains);
# format 4 names the text index instances, and a format-3 store keeps memctl's nodes and documents in the one
# unnamed `text` index. Version-1 WAL files and segments are still read.
OLDEST_STORE_FORMAT_VERSION = 5
# Stores from this version on are refused with the advice to run `memctl migrate`; older ones (format 1:
# raw.turns in the old row layout) with the advice to re-create the store.
OLDEST_MIGRATABLE_FORMAT_VERSION = 2

# --- checksums ------------------------------------------------------------------------------------------
# CRC-32/IEEE (zlib.crc32), masked like LevelDB so that a CRC computed over bytes that embed CRCs stays
# meaningful: masked = rotate_right(crc, 15) + CRC_MASK_DELTA (mod 2**32).
CRC_MASK_DELTA = 0xA282EAD8

# --- write-ahead log: wal/<number>.log ----------------------------------------------------------------
WAL_MAGIC = b"MEMCTLWL"
# magic[8] | version u32 | wal_number u64 | salt u32 | reserved u32 | header_crc u32  (little-endian)
WAL_HEADER_FORMAT = "<8sIQIII"
WAL_HEADER_SIZE = 32
WAL_BLOCK_SIZE = 32768
# masked_crc u32 | length u16 | type u8; the CRC covers salt (u32 LE) + type byte + payload.
WAL_RECORD_HEADER_FORMAT = "<IHB"
WAL_RECORD_HEADER_SIZE = 7
WAL_TYPE_ZERO = 0  # reserved: zero-filled space (a crash can expose it); never written
WAL_TYPE_FULL = 1
WAL_TYPE_FIRST = 2
WAL_TYPE_MIDDLE = 3
WAL_TYPE_LAST = 4
WAL_TYPES = (WAL_TYPE_FULL, WAL_TYPE_FIRST, WAL_TYPE_MIDDLE, WAL_TYPE_LAST)
# A logical record (one batch) larger than this is refused when written and treated as corruption when read.
WAL_MAX_BATCH_BYTES = 1 << 30

# Operations inside a batch payload: msgpack [sequence, [op, ...]].
OP_PUT = 1  # [1, table, key, value]
OP_DELETE = 2  # [2, table, key]
OP_COUNTER = 3  # [3, counter_name, new_value]  (absolute value: replay is idempotent)

# --- segments: seg/<number>.<kind>.seg ------------------------------------------------------------------
SEGMENT_MAGIC = b"MEMCTLSG"
# magic[8] | version u32 | kind[16] ascii, NUL-padded | header_crc u32
SEGMENT_HEADER_FORMAT = "<8sI16sI"
SEGMENT_HEADER_SIZE = 32
SEGMENT_KIND_BYTES = 16
SEGMENT_COLUMN_ALIGNMENT = 64
# directory_offset u64 | directory_length u32 | directory_crc u32 | version u32 | reserved u32 | magic[8]
SEGMENT_FOOTER_FORMAT = "<QIIII8s"
SEGMENT_FOOTER_SIZE = 32
SEGMENT_FOOTER_MAGIC = b"MEMCTLSF"
# A directory claims no more than this many bytes: a corrupt length must not cause a huge read.
SEGMENT_MAX_DIRECTORY_BYTES = 64 << 20
# Columns are checksummed in blocks of this many bytes (the directory records the size it was written with):
# a read verifies only the blocks it touches. On the recall bench store (100k nodes, 1M edges) the first 500
# point reads of a process cost the same CPU with 16 or 64 KiB blocks and more with 4 KiB (a longer CRC list
# to load), and checked reads after them cost least with 64 KiB.
SEGMENT_CHECKSUM_BLOCK_BYTES = 64 << 10
SEGMENT_MAX_CHECKSUM_BLOCK_BYTES = 1 << 30
# zstd levels of what segments compress (records blocks, and the columns of derived kinds' segments that pay):
# a flush runs inside a write command; a compaction runs apart, and its segments are read many times.
SEGMENT_FLUSH_LEVEL = 3
SEGMENT_COMPACTION_LEVEL = 9

# Segment kinds written by the core store (derived kinds register their own names).
KIND_RECORDS = "records"
RECORD_FLAG_TOMBSTONE = 1
# Records segments (MANIFEST.spec section 4) are written in layout 2: rows in zstd-compressed blocks found by
# their first keys. Layout 1 (every key and value as is, found by 64-bit key hashes) is still read.
RECORDS_LAYOUT_BLOCKS = 2
# A block is cut once its rows' keys and values reach this many bytes (the last row may take it past).
# Measured on the records of LoCoMo dev after R2G: 16 / 32 / 64 KiB blocks compress to 24% / 22% / 21% of
# the rows' bytes at level 3, and a point read decompresses one block (about 30 µs at 32 KiB).
RECORDS_BLOCK_BYTES = 32 << 10
# A compaction's blocks, read more than they are written. At level 9, 32 / 64 / 128 KiB blocks of LoCoMo dev's
# records take 4.91 / 4.55 / 4.26 MB; MemDaily dev's (issue 17: its near-duplicate turns repeat their words and
# node keys far apart in key order) take 4.13 / 3.48 / 3.22 / 3.00 MB in 128 KiB / 512 KiB / 1 MiB / 2 MiB
# blocks, a block 0.3 / 0.9 / 2.0 / 3.6 ms to decompress and check. Large blocks pay where reads are few, or
# sorted (get_many) or sequential (merges); the tables read row by row across their keys keep small ones.
RECORDS_COMPACTION_BLOCK_BYTES = 2 << 20
# A compaction's blocks of the tables read row by row all over their key range (RECORDS_POINT_READ_TABLES):
# a cold recall on the 6 MiB generated store reads 227 blocks of graph.node (its candidates' records), an r2g
# of one more conversation 414; with them in 2 MiB blocks that r2g took 1.6x the CPU, and 1 MiB blocks made a
# recall decompress 3.5x the bytes (104 MB). Every other table in 2 MiB blocks: recall and r2g as before.
RECORDS_POINT_READ_BLOCK_BYTES = 128 << 10
# A block frame declaring more decompressed bytes than this is corruption (one record is at most a WAL batch).
RECORDS_MAX_BLOCK_BYTES = 2 << 30
# Decompressed blocks a store keeps for later reads (a point read of a cached block decompresses nothing).
RECORDS_CACHE_BYTES = 32 << 20

# --- owners: derived kinds and their instances (engine/kinds.py; MANIFEST.spec section 4a) --------------
# An owner is a derived kind's unnamed instance, "<kind>", or a named one, "<kind>:<instance>". Its record
# tables and counters are named "<owner>.<suffix>" (owned_name); its segments are found by the MANIFEST
# entries' "owner".
INSTANCE_SEPARATOR = ":"
INSTANCE_NAME_PATTERN = r"[a-z][a-z0-9_]{0,31}"


def owned_name(owner: str, suffix: str) -> str:
    """The record table or counter `suffix` of `owner`: owned_name("text:nodes", "doc") is "text:nodes.doc"."""
    return f"{owner}.{suffix}"


# --- MANIFEST-<number> and CURRENT ---------------------------------------------------------------------
MANIFEST_MAGIC = b"MEMCTLMF"
# magic[8] | version u32 | body_length u32 | body_crc u32 | reserved u32, then a msgpack body
MANIFEST_HEADER_FORMAT = "<8sIIII"
MANIFEST_HEADER_SIZE = 24
MANIFEST_MAX_BODY_BYTES = 256 << 20
CURRENT_FILE = "CURRENT"
MANIFEST_PREFIX = "MANIFEST-"
NUMBER_DIGITS = 6  # MANIFEST-000007, wal/000007.log, seg/000007.records.seg

# --- DAMAGE: the corruption marker (engine/damage.py; MANIFEST.spec section 15) --------------------------
# Written by a reader or `check` that finds corruption; writers refuse the store until `memctl repair` ran.
DAMAGE_FILE = "DAMAGE"
DAMAGE_MAGIC = b"MEMCTLDM"
# magic[8] | version u32 | body_length u32 | body_crc u32 | reserved u32, then a msgpack body (as a MANIFEST)
DAMAGE_HEADER_FORMAT = MANIFEST_HEADER_FORMAT
DAMAGE_HEADER_SIZE = MANIFEST_HEADER_SIZE
DAMAGE_MAX_BODY_BYTES = 1 << 20
DAMAGE_MAX_FINDINGS = 64  # findings kept; more are counted, not listed

# --- locks ---------------------------------------------------------------------------------------------
WRITER_LOCK_FILE = "LOCK"
GC_LOCK_FILE = "LOCK.gc"

# --- directories inside a tenant store ---------------------------------------------------------------
WAL_DIR = "wal"
SEGMENT_DIR = "seg"
RAW_DIR = "raw"
TEMP_SUFFIX = ".tmp"

# --- raw chunks: raw/YYYY/MM/DD/<sha[0:2]>/raw_<sha256>.blob.zst (engine/raw/; appended by the raw-memory
# helper, issue 3) ------------------------------------------------------------------------------------------
# key raw_id → {len_bytes, sha256 (32 bytes), created_at (UTC epoch seconds: the blob's day), refcount,
# stored_bytes, meta, and mime only when it is not RAW_MIME_TEXT}
RAW_CHUNK_TABLE = "raw.chunk"
# key raw_id → {conv_id, seq, ts, speakers: [name or None], turns: one zstd frame of a msgpack array of columns,
# one entry per turn in chunk order (MANIFEST.spec section 8): speaker index, ts (ints as deltas), source_id as
# a prefix table, prefix index and trailing number (as deltas), gap, length, extra (nil when no turn has one)}
RAW_TURNS_TABLE = "raw.turns"
RAW_TURN_COLUMNS = ("speaker", "ts", "prefixes", "prefix", "number", "gap", "length", "extra", "sessions",
                    "session", "attachments", "reply_to")
RAW_TURN_COLUMNS_ADDED_IN_4 = RAW_TURN_COLUMNS[8:]  # a version-3 payload holds the first 8 only
RAW_SEQUENCE_COUNTER = "raw.seq"  # numbers raw.turns records in storing order (ties in time order)
RAW_ID_PREFIX = "raw_"
RAW_ID_HEX_DIGITS = 16  # raw_id = "raw_" + the first 16 hex digits of the content's sha256
RAW_BLOB_SUFFIX = ".blob.zst"  # one zstd frame with its content size declared
RAW_MIME_TEXT = "text/plain; charset=utf-8"
RAW_BLOB_MAX_BYTES = 64 << 20  # decompressed; a frame declaring more is refused before decompression
# Measured on 1-2k-token chunks of LoCoMo / of the generated zh/en corpus: level 3 compresses to 0.43 / 0.56 at
# about 130 MB/s; level 5 saves 2-3% at half that speed, level 12 saves 4-6% at a tenth.
RAW_ZSTD_LEVEL = 3
RAW_KIND = "raw"  # the derived kind that owns the raw.* tables: the raw passage index (MANIFEST.spec §4c)
RAW_PASSAGES_SEGMENT_KIND = "raw.passages"  # text postings over passages, keyed by span (engine/raw/passage_kind.py)
RAW_ZSTD_MAX_WINDOW_BYTES = 1 << 24  # level 3 uses at most 2 MiB; a frame asking for more than this is refused

# --- text index segments (engine/text/: build.py, postings.py, termdict.py) ----------------------------
# Appended by the text-index helper; see engine/text/postings.py and termdict.py for the byte layouts.
TEXT_KIND = "text"  # a kind with named instances: "text", "text:nodes", "text:documents"…
TEXT_SEGMENT_KIND = "text.postings"
TEXT_SEGMENT_VERSION = 1  # meta["version"] of a text.postings segment
TEXT_BLOCK_ENTRIES = 128  # postings entries per skip block
TEXT_TERMS_PER_BLOCK = 32  # terms per front-coded term dictionary block
# Suffixes of an instance's tables and counter (owned_name; engine/text/tables.py composes them):
TEXT_DOCUMENTS = "doc"  # records: external key -> document (MANIFEST.spec, section 4a)
TEXT_DEAD = "dead"  # records: docno (16 hex digits) -> 1, a document number deleted or replaced
TEXT_DOCNO = "docno"  # counter: document numbers below it are allocated
TEXT_META = "meta"  # records: "tokenizer" -> the analysis signature of the indexed documents

# --- graph (engine/graph/: kind.py, part.py, csr.py; MANIFEST.spec section 4b) ---------------------------
GRAPH_SEGMENT_KIND = "graph.csr"  # one per flush (sparse rows) or compaction (dense rows)
GRAPH_SEGMENT_VERSION = 1  # meta["version"] of a graph.csr segment
GRAPH_NODE_TABLE = "graph.node"  # external node key -> {id, type, props, created_at, updated_at, deleted}
GRAPH_EDGE_TABLE = "graph.edge"  # edge key -> {id, src, dst, type, weight, confidence, ts, since, until, props, ...}
GRAPH_TYPE_TABLE = "graph.type"  # "node:<Name>" / "edge:<Name>" -> small int type id
GRAPH_DEAD_TABLE = "graph.dead"  # "n:<16 hex>" / "e:<16 hex>" -> 1: an internal id deleted for good
GRAPH_NODE_COUNTER = "graph.node_id"  # dense internal node ids, never reused
GRAPH_EDGE_COUNTER = "graph.edge_id"  # dense internal edge ids, never reused
GRAPH_NODE_TYPE_COUNTER = "graph.node_type"
GRAPH_EDGE_TYPE_COUNTER = "graph.edge_type"
GRAPH_MAX_TYPES = 1 << 16  # type ids are stored as uint16
# The records tables a compaction cuts into RECORDS_POINT_READ_BLOCK_BYTES blocks (section 4 of MANIFEST.spec).
RECORDS_POINT_READ_TABLES = (GRAPH_NODE_TABLE,)

# --- text index: external keys (engine/text/keys.py; appended by the search helper, issue 4) ------------
TEXT_KEYS_PER_BLOCK = 16  # document keys per front-coded block of a text.postings segment
