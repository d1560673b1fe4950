"""Publishing new blobs: files written under their final names without fsync, ONE sync_filesystem, then the WAL
commit; and what a crash before that sync may leave (blobs without their data, named by no record)."""

import ctypes
import errno
import hashlib
import os
import subprocess
import sys
import threading
from contextlib import contextmanager
from datetime import datetime, timezone

import pytest

from engine import fs
from engine.blob_files import compress_all
from engine.raw import RawStore, blob_path, raw_id_for, record_blob_path
from engine.errors import StoreClosed
from engine.raw.writer import FEW_BLOBS
from engine.store import Store
from tools.testing import faultfs

from raw_testkit import blob_files

REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIXED_DAY = datetime(2025, 9, 15, 10, 35, tzinfo=timezone.utc)
CHUNKS = [f"chunk {index}: 蓝牙打不开 0x8007045D 😀\n".encode() * 20 for index in range(5)]


class CountingOps(fs.FileOps):
    def __init__(self):
        self.calls: list = []

    def fsync(self, fd):
        self.calls.append("fsync")
        super().fsync(fd)

    def fsync_dir(self, path):
        self.calls.append("fsync_dir")
        super().fsync_dir(path)

    def sync_filesystem(self, path):
        self.calls.append(("sync_filesystem", path))
        super().sync_filesystem(path)

    def rename(self, source, target):
        self.calls.append("rename")
        super().rename(source, target)

    def open_new(self, path):
        self.calls.append(("open_new", os.path.basename(path)))
        return super().open_new(path)


@contextmanager
def file_ops(ops):
    """engine.fs's operations replaced by `ops` inside the block."""
    previous = fs.set_ops(ops)
    try:
        yield ops
    finally:
        fs.set_ops(previous)


@pytest.fixture
def counting():
    with file_ops(CountingOps()) as ops:
        yield ops


def test_a_batch_of_new_blobs_costs_one_sync_filesystem_and_one_wal_fsync(store, counting):
    raw = RawStore(store)
    with raw.batch() as writer:
        for data in CHUNKS:
            writer.put(data, {})
    names = sorted(f"raw_{hashlib.sha256(data).hexdigest()}.blob.zst" for data in CHUNKS)
    created = sorted(call[1] for call in counting.calls if call[0] == "open_new")
    assert created == names  # each blob written once, under its final name: no temp file, no rename
    assert [call for call in counting.calls if call[0] != "open_new"] == [("sync_filesystem", store.path), "fsync"]
    assert all(raw.read(raw_id_for(hashlib.sha256(data).hexdigest())) == data for data in CHUNKS)


def test_a_batch_without_new_blobs_does_not_sync_the_filesystem(store, counting):
    raw = RawStore(store)
    with raw.batch() as writer:
        raw_id = writer.put(CHUNKS[0], {}).raw_id
    counting.calls.clear()
    with raw.batch() as writer:
        writer.acquire(raw_id)
    assert counting.calls == ["fsync"]


def test_a_lost_blob_is_restored_by_temp_file_and_rename(store, counting):
    """Its record is committed, so its name must never hold a partial file."""
    raw = RawStore(store)
    with raw.batch() as writer:
        raw_id = writer.put(CHUNKS[0], {}).raw_id
    os.remove(os.path.join(store.path, record_blob_path(raw.get(raw_id))))
    counting.calls.clear()
    with raw.batch() as writer:
        writer.put(CHUNKS[0], {})
    assert counting.calls == [("open_new", os.path.basename(record_blob_path(raw.get(raw_id))) + ".tmp"), "rename",
                              ("sync_filesystem", store.path), "fsync"]
    assert raw.read(raw_id) == CHUNKS[0] and raw.get(raw_id)["refcount"] == 2


def test_released_and_stored_again_in_one_batch_keeps_the_committed_file(store, counting):
    raw = RawStore(store, clock=lambda: FIXED_DAY)
    with raw.batch() as writer:
        raw_id = writer.put(CHUNKS[0], {}).raw_id
    stored_bytes = raw.get(raw_id)["stored_bytes"]
    counting.calls.clear()
    with raw.batch() as writer:
        assert writer.release(raw_id)
        again = writer.put(CHUNKS[0], {})
    assert again.new and again.stored_bytes == 0 and counting.calls == ["fsync"]
    assert raw.get(raw_id)["stored_bytes"] == stored_bytes and raw.read(raw_id) == CHUNKS[0]


def test_the_commit_comes_after_the_sync(store):
    raw = RawStore(store)
    seen = []
    fs.arm("raw.after_sync", action=lambda: seen.append(store.sequence))
    fs.arm("wal.append.before_fsync", action=lambda: seen.append("wal"))
    with raw.batch() as writer:
        writer.put(CHUNKS[0], {})
    assert seen == [0, "wal"] and store.sequence == 1



def test_released_and_stored_again_rewrites_a_lost_blob(store):
    raw = RawStore(store, clock=lambda: FIXED_DAY)
    with raw.batch() as writer:
        raw_id = writer.put(CHUNKS[0], {}).raw_id
    os.remove(os.path.join(store.path, record_blob_path(raw.get(raw_id))))
    with raw.batch() as writer:
        writer.release(raw_id)
        again = writer.put(CHUNKS[0], {})
    assert again.stored_bytes > 0 and raw.read(raw_id) == CHUNKS[0]

# --- sync_filesystem itself ----------------------------------------------------------------------------------


def test_sync_filesystem_returns_on_a_store_directory(tmp_path):
    fs.sync_filesystem(str(tmp_path))
    with pytest.raises(FileNotFoundError):
        fs.sync_filesystem(str(tmp_path / "missing"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="syncfs(2) is Linux's")
def test_a_failing_syncfs_raises_oserror(tmp_path, monkeypatch):
    class FailingLibc:
        @staticmethod
        def syncfs(fd):
            ctypes.set_errno(errno.EIO)
            return -1

    monkeypatch.setattr(fs, "_libc", lambda: FailingLibc)
    with pytest.raises(OSError) as raised:
        fs.sync_filesystem(str(tmp_path))
    assert raised.value.errno == errno.EIO and raised.value.filename == str(tmp_path)


def test_other_systems_fall_back_to_sync(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(os, "sync", lambda: calls.append("sync"))
    fs.sync_filesystem(str(tmp_path))
    assert calls == ["sync"]


# --- after a crash before the sync -------------------------------------------------------------------------------


def test_a_blob_file_no_record_names_is_rewritten_not_trusted(store):
    """A crash before the sync can leave a blob with its data lost (zeros, or nothing at all).
    Storing the same content again must write it anew: the record decides, not the file's existence."""
    raw = RawStore(store, clock=lambda: FIXED_DAY)
    sha = hashlib.sha256(CHUNKS[0]).hexdigest()
    damaged = os.path.join(store.path, blob_path(sha, int(FIXED_DAY.timestamp())))
    os.makedirs(os.path.dirname(damaged))
    with open(damaged, "wb") as handle:
        handle.write(bytes(40))
    with raw.batch() as writer:
        result = writer.put(CHUNKS[0], {})
    assert result.new and result.stored_bytes > 0
    assert os.path.join(store.path, record_blob_path(raw.get(result.raw_id))) == damaged
    assert raw.read(result.raw_id) == CHUNKS[0]


CRASHING_BATCH = """
import sys
from engine.raw import RawStore
from engine.store import Store
store = Store.open(sys.argv[1])
with RawStore(store).batch() as writer:
    for line in sys.argv[2:]:
        writer.put(line.encode(), {})
print("ACK")
"""


def crash_during_publish(store_path: str, failpoint: str) -> None:
    environment = dict(os.environ, MEMCTL_FAILPOINT=f"{failpoint}:1", PYTHONPATH=REPOSITORY)
    result = subprocess.run([sys.executable, "-c", CRASHING_BATCH, store_path] + [data.decode() for data in CHUNKS],
                            env=environment, capture_output=True, text=True, cwd=REPOSITORY)
    assert result.returncode == -9 and "ACK" not in result.stdout, result.stderr


def lose_unsynced_data(store_path: str) -> list[str]:
    """What a power loss may do to blobs written but never synced: keep the names, drop the data."""
    blobs = [name for name in blob_files(store_path) if name.endswith(".blob.zst")]
    for index, relative in enumerate(blobs):
        with open(os.path.join(store_path, relative), "r+b") as handle:
            handle.truncate(0 if index % 2 else 16)
    return blobs


@pytest.mark.parametrize("failpoint", ["raw.before_sync", "raw.after_sync"])
def test_gc_removes_the_blobs_of_a_batch_killed_before_its_commit(tmp_path, failpoint):
    store_path = str(tmp_path / "store")
    crash_during_publish(store_path, failpoint)
    blobs = lose_unsynced_data(store_path)
    assert len(blobs) == len(CHUNKS)
    with Store.open(store_path) as store:
        raw = RawStore(store)
        assert list(raw.scan()) == []
        problems, unnamed = raw.verify()
        assert problems == [] and sorted(unnamed) == blobs
        assert sorted(raw.gc()) == blobs
        assert blob_files(store_path) == []


def test_storing_again_after_a_crash_before_the_sync_rewrites_the_damaged_blobs(tmp_path):
    store_path = str(tmp_path / "store")
    crash_during_publish(store_path, "raw.before_sync")
    damaged = lose_unsynced_data(store_path)
    with Store.open(store_path) as store:
        raw = RawStore(store)
        with raw.batch() as writer:
            results = [writer.put(data, {}) for data in CHUNKS]
        assert all(result.new for result in results)
        assert [raw.read(result.raw_id) for result in results] == CHUNKS
        problems, unnamed = raw.verify()
        assert problems == []
        named = sorted(record_blob_path(raw.get(result.raw_id)) for result in results)
        # Same UTC day as the crash (the usual case): the damaged files were replaced in place.
        assert sorted(unnamed) == sorted(set(damaged) - set(named))


class FullDiskOps(fs.FileOps):
    """Blob files after the second fail as on a full disk."""

    def __init__(self):
        self.created = 0

    def open_new(self, path):
        self.created += 1
        if self.created > 2:
            raise OSError(errno.ENOSPC, "No space left on device", path)
        return super().open_new(path)


def test_a_blob_write_failing_fails_the_batch_and_leaves_nothing(store):
    raw = RawStore(store)
    with file_ops(FullDiskOps()):
        with pytest.raises(OSError, match="No space left"):
            with raw.batch() as writer:
                for data in CHUNKS:
                    writer.put(data, {})
    assert list(raw.scan()) == [] and blob_files(store.path) == []
    assert not os.path.exists(os.path.join(store.path, "raw"))  # the directories it made are gone too
    with raw.batch() as writer:  # the store still takes batches
        writer.put(CHUNKS[0], {})
    assert raw.read(raw_id_for(hashlib.sha256(CHUNKS[0]).hexdigest())) == CHUNKS[0]


def directories(store_path: str) -> list[str]:
    return sorted(os.path.relpath(folder, store_path) for folder, _, _ in os.walk(os.path.join(store_path, "raw")))


def test_a_failed_batch_removes_only_the_directories_it_made(store):
    raw = RawStore(store, clock=lambda: FIXED_DAY)
    with raw.batch() as writer:
        writer.put(CHUNKS[0], {})
    before = directories(store.path)
    new_directory = os.path.dirname(blob_path(hashlib.sha256(CHUNKS[1]).hexdigest(), int(FIXED_DAY.timestamp())))
    assert new_directory not in before  # the failing put makes a hash directory first
    failing = FullDiskOps()
    failing.created = 2  # the next blob file fails, after its hash directory was made
    with file_ops(failing):
        with pytest.raises(OSError, match="No space left"):
            with raw.batch() as writer:
                writer.put(CHUNKS[1], {})
    assert directories(store.path) == before and len(blob_files(store.path)) == 1


def stored_state(store) -> tuple[dict, dict]:
    """Every chunk record and every blob file's bytes."""
    files = {}
    for name in blob_files(store.path):
        with open(os.path.join(store.path, name), "rb") as handle:
            files[name] = handle.read()
    return dict(RawStore(store).scan()), files


class HeldCompression:
    """engine.raw.writer.compress_all, held until release(): the puts of a batch then all come before the frames."""

    def __init__(self):
        self.released = threading.Event()

    def __call__(self, datas):
        self.released.wait()
        return compress_all(datas)


@pytest.mark.parametrize("timing", ["as it comes", "frames first", "puts first"])
def test_blobs_written_ahead_give_the_same_files_and_records(tmp_path, monkeypatch, timing):
    """write_ahead: the coming puts' blobs compressed on another thread, their files written when that is done
    (before the puts, or among or after them, records waiting for their sizes), with the same bytes and records
    as blobs written put by put. A put of bytes not given ahead writes them itself; a repeat of a chunk only
    counts a reference."""
    held = HeldCompression()
    if timing == "puts first":
        monkeypatch.setattr("engine.raw.writer.compress_all", held)
    outcomes = []
    for ahead in (False, True):
        with Store.open(str(tmp_path / f"ahead-{ahead}")) as store:
            raw = RawStore(store, clock=lambda: FIXED_DAY)
            with raw.batch() as writer:
                if ahead:
                    writer.write_ahead(CHUNKS[:4])
                    if timing == "frames first":
                        writer._frames.result()  # done before the first put, which then writes every file
                stored = sum(writer.put(data, {}).stored_bytes for data in CHUNKS + CHUNKS[:1])
                held.released.set()
            outcomes.append((stored_state(store), stored + writer.deferred_stored_bytes))
    assert outcomes[0] == outcomes[1]
    (records, files), stored = outcomes[1]
    assert stored == sum(map(len, files.values())) and len(files) == len(CHUNKS)
    assert sorted(record["stored_bytes"] for record in records.values()) == sorted(map(len, files.values()))


@pytest.mark.parametrize("frames_first", [True, False])
def test_blobs_written_ahead_are_synced_before_the_commit(store, counting, frames_first):
    """However the compression and the puts interleave, every blob file is created before the batch's last
    sync_filesystem, which comes before the WAL fsync; a blob a put writes after the sync of the files written
    ahead started gets a sync of its own."""
    raw = RawStore(store, clock=lambda: FIXED_DAY)
    names = [f"raw_{hashlib.sha256(data).hexdigest()}.blob.zst" for data in CHUNKS]
    with raw.batch() as writer:
        writer.write_ahead(CHUNKS[:4])
        if frames_first:
            writer._frames.result()
        assert all(writer.put(data, {}).new for data in CHUNKS)
    sync = ("sync_filesystem", store.path)
    created = [call[1] for call in counting.calls if call[0] == "open_new"]
    assert sorted(created) == sorted(names) and counting.calls[-1] == "fsync"
    last_sync = len(counting.calls) - 1 - counting.calls[::-1].index(sync)
    assert all(counting.calls.index(("open_new", name)) < last_sync for name in names)
    if frames_first:  # the four files, their sync, then the fifth file (its put came after) and another sync
        assert counting.calls == [("open_new", name) for name in names[:4]] + [sync, ("open_new", names[4]), sync,
                                                                                  "fsync"]
    assert [raw.read(raw_id_for(hashlib.sha256(data).hexdigest())) for data in CHUNKS] == CHUNKS


def test_a_batch_whose_blobs_were_all_written_ahead_syncs_once(store, counting):
    raw = RawStore(store)
    with raw.batch() as writer:
        writer.write_ahead(CHUNKS + CHUNKS[:2])  # repeats are written once
        for data in CHUNKS:
            writer.put(data, {})
    assert [call for call in counting.calls if call[0] != "open_new"] == [("sync_filesystem", store.path), "fsync"]
    assert len([call for call in counting.calls if call[0] == "open_new"]) == len(CHUNKS)


class FailingSyncOps(fs.FileOps):
    def sync_filesystem(self, path):
        raise OSError(errno.EIO, "Input/output error", path)


def test_a_failed_sync_ahead_fails_the_batch_and_the_store(store):
    raw = RawStore(store)
    with file_ops(FailingSyncOps()):
        with pytest.raises(OSError, match="Input/output error"):
            with raw.batch() as writer:
                writer.write_ahead(CHUNKS)
                for data in CHUNKS:
                    writer.put(data, {})
    assert store.sequence == 0 and blob_files(store.path) == []
    with pytest.raises(StoreClosed, match="unusable after an I/O error"):
        with store.batch() as batch:
            batch.put("t", "k", 1)


def test_a_chunk_written_ahead_and_released_in_its_batch_leaves_no_blob(store):
    raw = RawStore(store, clock=lambda: FIXED_DAY)
    with raw.batch() as writer:
        writer.write_ahead(CHUNKS[:2])
        released = writer.put(CHUNKS[0], {}).raw_id
        kept = writer.put(CHUNKS[1], {}).raw_id
        assert writer.release(released)
    assert raw.get(released) is None and raw.read(kept) == CHUNKS[1]
    assert blob_files(store.path) == [record_blob_path(raw.get(kept))]


def test_a_blob_written_ahead_that_no_put_names_is_removed(store):
    raw = RawStore(store, clock=lambda: FIXED_DAY)
    with raw.batch() as writer:
        writer.write_ahead(CHUNKS)
        kept = [writer.put(data, {}).raw_id for data in CHUNKS[:2]]
    assert blob_files(store.path) == sorted(record_blob_path(raw.get(raw_id)) for raw_id in kept)


def test_a_failed_batch_with_blobs_written_ahead_leaves_nothing(store):
    raw = RawStore(store)
    with pytest.raises(RuntimeError):
        with raw.batch() as writer:
            writer.write_ahead(CHUNKS)
            raw_id = writer.put(CHUNKS[0], {}).raw_id
            raise RuntimeError("the caller failed")
    assert raw.get(raw_id) is None and blob_files(store.path) == []
    assert not os.path.exists(os.path.join(store.path, "raw"))


def test_a_blob_write_failing_ahead_fails_the_batch_and_leaves_nothing(store):
    raw = RawStore(store)
    with file_ops(FullDiskOps()):
        with pytest.raises(OSError, match="No space left"):
            with raw.batch() as writer:
                writer.write_ahead(CHUNKS)
    assert list(raw.scan()) == [] and blob_files(store.path) == []
    assert not os.path.exists(os.path.join(store.path, "raw"))


def test_chunks_stored_before_and_given_ahead_again_only_count_references(store, counting):
    raw = RawStore(store)
    with raw.batch() as writer:
        raw_ids = [writer.put(data, {}).raw_id for data in CHUNKS]
    counting.calls.clear()
    with raw.batch() as writer:
        writer.write_ahead(CHUNKS)
        assert not any(writer.put(data, {}).new for data in CHUNKS)
    assert counting.calls == ["fsync"]
    assert [raw.get(raw_id)["refcount"] for raw_id in raw_ids] == [2] * len(CHUNKS)


def directory_flags(path: str, new_flags: int | None = None) -> int | None:
    """The inode flags of a directory (FS_IOC_GETFLAGS), after setting them to `new_flags` if given; None
    where the filesystem has none."""
    import fcntl
    import struct

    from engine.blob_files import FS_IOC_GETFLAGS, FS_IOC_SETFLAGS

    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if new_flags is not None:
            fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("i", new_flags))
        return struct.unpack("i", fcntl.ioctl(fd, FS_IOC_GETFLAGS, bytes(4)))[0]
    except OSError:
        return None
    finally:
        os.close(fd)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inode flags are a Linux interface")
def test_the_raw_directory_asks_to_spread_its_subdirectories(store):
    """On ext2/3/4 the raw directory carries the top-of-hierarchy attribute, set before its first year
    directory is made, also in a store whose raw directory existed without it."""
    from engine.blob_files import FS_TOPDIR_FL

    raw_directory = os.path.join(store.path, "raw")
    with RawStore(store, clock=lambda: FIXED_DAY).batch() as writer:
        writer.put(CHUNKS[0], {})
    flags = directory_flags(raw_directory)
    if flags is None:
        pytest.skip("this filesystem has no inode flags")
    assert flags & FS_TOPDIR_FL
    directory_flags(raw_directory, flags & ~FS_TOPDIR_FL)
    with RawStore(store, clock=lambda: datetime(2031, 1, 1, tzinfo=timezone.utc)).batch() as writer:
        writer.put(CHUNKS[1], {})
    assert directory_flags(raw_directory) & FS_TOPDIR_FL


def test_marking_a_top_directory_is_only_a_hint(tmp_path):
    from engine.blob_files import mark_top_directory

    mark_top_directory(str(tmp_path / "missing"))
    (tmp_path / "file").write_bytes(b"x")
    mark_top_directory(str(tmp_path / "file"))
    assert os.listdir(tmp_path) == ["file"]


def test_a_few_blobs_written_ahead_are_synced_file_by_file_not_by_a_sync_filesystem(store, counting):
    """An agent's exchange (at most FEW_BLOBS blobs): an fsync of each file and of each directory naming one,
    all before the WAL's fsync; a sync_filesystem would cost whatever the whole filesystem holds unwritten."""
    raw = RawStore(store, clock=lambda: FIXED_DAY)
    with raw.batch() as writer:
        writer.write_ahead(CHUNKS[:FEW_BLOBS])
        for data in CHUNKS[:FEW_BLOBS]:
            writer.put(data, {})
    calls = [call if isinstance(call, str) else call[0] for call in counting.calls]
    assert "sync_filesystem" not in calls
    # raw/, YYYY/, MM/, DD/ and the sha prefix directories are new: each entry's parent is synced
    assert calls[: 2 * FEW_BLOBS] == ["open_new", "fsync"] * FEW_BLOBS
    assert set(calls[2 * FEW_BLOBS:-1]) == {"fsync_dir"} and calls[-1] == "fsync"


@pytest.mark.parametrize("variant", ["drop", "forget", "combo"])
def test_a_few_blobs_synced_file_by_file_survive_a_power_cut_after_the_commit(tmp_path, variant):
    disk = tmp_path / "disk"
    with faultfs.installed(str(disk), seed=7) as fault:
        with Store.open(str(disk / "store")) as store:
            with RawStore(store).batch() as writer:
                writer.write_ahead(CHUNKS[:FEW_BLOBS])
                raw_ids = [writer.put(data, {}).raw_id for data in CHUNKS[:FEW_BLOBS]]
    fault.materialise(variant, into=str(tmp_path / "after"))
    with Store.open(str(tmp_path / "after" / "store")) as store:
        assert [RawStore(store).read(raw_id) for raw_id in raw_ids] == CHUNKS[:FEW_BLOBS]
