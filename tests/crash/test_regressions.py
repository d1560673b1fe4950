"""One test per engine bug the crash tools found: each failed before its fix."""

from __future__ import annotations

import errno
import os
import struct

import pytest

from engine import fs, wal
from engine.check import check_store
from engine.codec import crc32
from engine.errors import CorruptionError, StoreClosed
from engine.format import (
    CURRENT_FILE,
    WAL_BLOCK_SIZE,
    WAL_DIR,
    WAL_HEADER_SIZE,
)
from engine.store import Store
from tools.testing import faultfs

T = "test.doc"


@pytest.fixture(autouse=True)
def disarmed():
    yield
    fs.disarm_all()


def crash_at(name: str, hit: int = 1) -> None:
    """The process dies at the failpoint: in-process, the disk is left exactly as a SIGKILL would leave it."""
    def die():
        raise faultfs.SimulatedCrash(name)
    fs.arm(name, hit, die)


def put(store, key, value):
    with store.batch() as batch:
        batch.put(T, key, value)


def test_a_crash_after_the_next_wal_was_created_does_not_let_that_number_be_reused(tmp_path):
    # Found by failpoint_sweep (flush.after_new_wal twice): the second flush renamed an empty log over the
    # live WAL that held the batch acknowledged in between.
    path = str(tmp_path / "store")
    store = Store.open(path)
    put(store, "a", 1)
    crash_at("flush.after_new_wal")
    with pytest.raises(faultfs.SimulatedCrash):
        store.flush()
    store.close()
    fs.disarm_all()
    assert check_store(path).problems == []
    store = Store.open(path)
    put(store, "acknowledged", 2)
    crash_at("manifest.before_current")
    with pytest.raises(faultfs.SimulatedCrash):
        store.flush()
    store.close()
    store = Store.open(path)
    assert (store.get(T, "a"), store.get(T, "acknowledged")) == (1, 2)
    store.close()
    assert check_store(path).problems == []


@pytest.mark.parametrize("failpoint", ["manifest.before_current", "manifest.file.before_rename",
                                       "manifest.after_rename.before_dirsync", "wal.create.before_rename"])
def test_a_crash_while_creating_a_store_leaves_it_creatable(tmp_path, failpoint):
    path = str(tmp_path / "store")
    crash_at(failpoint)
    with pytest.raises(faultfs.SimulatedCrash):
        Store.open(path)
    fs.disarm_all()
    store = Store.open(path)
    put(store, "a", 1)
    store.close()
    assert Store.open(path, writable=False).get(T, "a") == 1
    assert check_store(path).problems == []


def test_a_store_that_lost_current_after_holding_data_is_still_refused(tmp_path):
    path = str(tmp_path / "store")
    store = Store.open(path)
    put(store, "a", 1)
    store.close()
    os.unlink(os.path.join(path, CURRENT_FILE))
    with pytest.raises(CorruptionError, match="CURRENT is missing"):
        Store.open(path)


def new_wal(path: str, payloads: list) -> bytes:
    data = bytearray(wal.encode_header(1, 77))
    for payload in payloads:
        data += wal.frame(payload, 77, len(data))
    with open(path, "wb") as handle:
        handle.write(data)
    return bytes(data)


def test_a_torn_multiblock_append_whose_later_pages_survived_is_a_torn_tail(tmp_path):
    # Found by power_loss (scramble): the last append's first page was lost, a later block's LAST fragment
    # survived, and the store refused to open although nothing acknowledged was damaged.
    path = str(tmp_path / "000001.log")
    data = bytearray(new_wal(path, [b"acknowledged", b"in flight" * 8000]))
    first_record_end = WAL_HEADER_SIZE + 7 + len(b"acknowledged")
    data[first_record_end: first_record_end + 4096] = bytes(4096)
    with open(path, "wb") as handle:
        handle.write(data)
    result = wal.scan(path)
    assert (result.status, result.payloads) == ("torn_tail", [b"acknowledged"])


@pytest.mark.parametrize("damaged", [1000, 2 * WAL_BLOCK_SIZE + 100], ids=["first-fragment", "last-fragment"])
def test_damage_inside_a_multiblock_record_that_is_not_the_last_is_corruption(tmp_path, damaged):
    # Found by bitflip (zeroed pages): the record after the damaged one (in the block of its LAST fragment)
    # was dropped as if the damage were a torn tail.
    path = str(tmp_path / "000001.log")
    data = bytearray(new_wal(path, [b"one", b"big" * 30000, b"after"]))
    data[damaged: damaged + 100] = bytes(100)
    with open(path, "wb") as handle:
        handle.write(data)
    assert wal.scan(path).status == "corruption"


def test_damage_followed_by_a_record_in_the_same_block_is_corruption(tmp_path):
    path = str(tmp_path / "000001.log")
    data = bytearray(new_wal(path, [b"batch %d" % index for index in range(10)]))
    data[WAL_HEADER_SIZE + 9] ^= 1
    with open(path, "wb") as handle:
        handle.write(data)
    assert wal.scan(path).status == "corruption"


def test_a_failed_directory_fsync_after_current_moved_refuses_later_batches(tmp_path):
    # Found by ioerror (flush fsync_dir): the handle kept appending to the old WAL, which the MANIFEST the
    # failed publish had already made current declares obsolete: those batches vanished on reopen.
    root = str(tmp_path)
    store = Store.open(os.path.join(root, "store"))
    put(store, "a", 1)
    with faultfs.installed(root) as fault:
        fault.fail("fsync_dir", 4, errno.EIO)  # seg/, wal/, MANIFEST's directory, then CURRENT's
        with pytest.raises(OSError):
            store.flush()
        renames = [os.path.basename(path) for operation, path in fault.log if operation == "rename"]
        assert renames[-1] == CURRENT_FILE + ".tmp" and fault.failures[0][1] == store.path
        with pytest.raises(StoreClosed):
            put(store, "after", 2)
    store.close()
    store = Store.open(os.path.join(root, "store"))
    assert store.get(T, "a") == 1
    store.close()


def test_files_whose_deletion_a_power_cut_undid_are_ignored_then_deleted_again(tmp_path):
    """Obsolete files are deleted without a directory fsync: after a power cut they may be back (the model's
    "forget" keeps no undurable directory change), and must change nothing."""
    root = str(tmp_path)
    path = os.path.join(root, "store")
    store = Store.open(path)
    put(store, "a", 1)
    with faultfs.installed(root) as fault:
        store.flush()
        put(store, "a", 2)
        store.compact()
        put(store, "b", 3)
    store.close()
    removed = [file for operation, file in fault.log if operation == "unlink" and not file.endswith(".tmp")]
    state = fault.materialise("forget")
    # What the compaction's clean-up deleted is back: no later directory fsync made those deletions durable.
    back = {os.path.relpath(file, root) for file in removed if state.get(file)}
    assert {"store/seg/000003.records.seg", "store/seg/000006.records.seg"} <= back
    with Store.open(path, writable=False) as reader:
        assert (reader.get(T, "a"), reader.get(T, "b")) == (2, 3)
    with Store.open(path) as writer:
        assert (writer.get(T, "a"), writer.get(T, "b")) == (2, 3) and not writer.obsolete_files()


def test_a_zeroed_wal_header_with_records_after_it_is_corruption(tmp_path):
    path = str(tmp_path / "store")
    store = Store.open(path)
    for index in range(200):
        put(store, f"k{index}", "x" * 50)
    store.close()
    log = wal.wal_path(os.path.join(path, WAL_DIR), 1)
    with open(log, "r+b") as handle:
        handle.write(bytes(4096))
    with pytest.raises(CorruptionError):
        Store.open(path, writable=False)


def test_a_failed_raw_sync_refuses_later_batches(tmp_path):
    from engine.raw import RawStore

    root = str(tmp_path)
    store = Store.open(os.path.join(root, "store"))
    with faultfs.installed(root) as fault:
        fault.fail("sync_filesystem", 1, errno.EIO)
        with pytest.raises(OSError):
            with RawStore(store).batch() as writer:
                writer.put(b"chunk", {})
        with pytest.raises(StoreClosed):
            put(store, "after", 1)
    store.close()


def test_the_wal_header_crc_residue_makes_crafted_headers_invisible_to_the_file_crc():
    # Not a bug, a property the bitflip judge relies on: a header embedding the CRC of its own bytes has a
    # constant CRC, so check's whole-file CRC cannot see a crafted header (only the header CRC protects it).
    header = wal.encode_header(1, 77)
    crafted = bytearray(header)
    crafted[20:24] = struct.pack("<I", 78)
    crafted[28:32] = struct.pack("<I", crc32(bytes(crafted[:28])))
    assert crc32(header) == crc32(bytes(crafted))
