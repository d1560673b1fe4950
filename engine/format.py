"""Every constant of memctl's on-disk formats, in one place.

Readers, writers, tools/ dumpers and tests import these names; nothing else spells a magic number, a header
size or a record type. MANIFEST.spec (repository root) documents each one; change both together and bump
FORMAT_VERSION when any byte on disk changes meaning.
"""

from __future__ import annotations

# A store whose files carry a higher version is refused (UnsupportedVersion), never misread.
FORMAT_VERSION = 1

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

# Segment kinds written by the core store (derived kinds register their own names).
KIND_RECORDS = "records"
RECORD_FLAG_TOMBSTONE = 1

# --- MANIFEST-<number> and CURRENT ---------------------------------------------------------------------
MANIFEST_MAGIC = b"MEMCTLMF"
# magic[8] | version u32 | body_length u32 | body_crc u32 | reserved u32, then a msgpack body
MANIFEST_HEADER_FORMAT = "<8sIIII"
MANIFEST_HEADER_SIZE = 24
MANIFEST_MAX_BODY_BYTES = 256 << 20
CURRENT_FILE = "CURRENT"
MANIFEST_PREFIX = "MANIFEST-"
NUMBER_DIGITS = 6  # MANIFEST-000007, wal/000007.log, seg/000007.records.seg

# --- locks ---------------------------------------------------------------------------------------------
WRITER_LOCK_FILE = "LOCK"
GC_LOCK_FILE = "LOCK.gc"

# --- directories inside a tenant store ---------------------------------------------------------------
WAL_DIR = "wal"
SEGMENT_DIR = "seg"
RAW_DIR = "raw"
TEMP_SUFFIX = ".tmp"
