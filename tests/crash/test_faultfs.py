"""tools.testing.faultfs models what survives a power cut; these pin its semantics (the harness's own tests)."""

from __future__ import annotations

import errno
import inspect
import os

import pytest

from engine import fs
from tools.testing import faultfs


@pytest.fixture
def root(tmp_path):
    return str(tmp_path / "root")


def write_file(path, data, sync=True):
    fd = fs.ops.open_new(path)
    fs.ops.write(fd, data)
    if sync:
        fs.ops.fsync(fd)
    fs.ops.close(fd)


def append(path, data, sync):
    fd = fs.ops.open_append(path)
    fs.ops.write(fd, data)
    if sync:
        fs.ops.fsync(fd)
    fs.ops.close(fd)


def test_every_file_operation_of_the_engine_is_modelled():
    public = {name for name, _ in inspect.getmembers(fs.FileOps, inspect.isfunction) if not name.startswith("_")}
    overridden = {name for name in public if getattr(faultfs.FaultOps, name) is not getattr(fs.FileOps, name)}
    assert overridden == public, "a new FileOps method needs a model in FaultOps: " + ", ".join(public - overridden)
    assert set(faultfs.OPERATIONS) == public - {"close"}


def test_drop_keeps_synced_bytes_and_loses_the_rest(root):
    with faultfs.installed(root) as fault:
        path = os.path.join(root, "log")
        write_file(path, b"synced")
        fs.fsync_dir(root)
        append(path, b"+unsynced", sync=False)
    assert fault.post_crash_state("drop")[path] == b"synced"
    assert fault.post_crash_state("forget")[path] == b"synced+unsynced"


def test_zero_keeps_the_length_but_not_the_data(root):
    with faultfs.installed(root) as fault:
        path = os.path.join(root, "log")
        write_file(path, b"synced")
        fs.fsync_dir(root)
        append(path, b"abcd", sync=False)
    assert fault.post_crash_state("zero")[path] == b"synced" + bytes(4)


def test_prefix_is_a_prefix_between_the_synced_and_the_written_content(root):
    with faultfs.installed(root, seed=7) as fault:
        path = os.path.join(root, "log")
        write_file(path, b"synced")
        fs.fsync_dir(root)
        for index in range(5):
            append(path, b"%d" % index * 100, sync=False)
    seen = set()
    for _ in range(40):
        content = fault.post_crash_state("prefix")[path]
        assert b"".join([b"synced"] + [b"%d" % index * 100 for index in range(5)]).startswith(content)
        assert content.startswith(b"synced")
        seen.add(len(content))
    assert len(seen) > 5


def test_scramble_keeps_or_zeroes_whole_pages(root):
    with faultfs.installed(root, seed=3) as fault:
        path = os.path.join(root, "log")
        write_file(path, b"")
        fs.fsync_dir(root)
        append(path, b"x" * (faultfs.PAGE_SIZE * 8), sync=False)
    content = fault.post_crash_state("scramble")[path]
    pages = {content[start: start + faultfs.PAGE_SIZE] for start in range(0, len(content), faultfs.PAGE_SIZE)}
    assert pages == {b"x" * faultfs.PAGE_SIZE, bytes(faultfs.PAGE_SIZE)}


def test_a_file_created_without_a_directory_fsync_disappears(root):
    with faultfs.installed(root) as fault:
        write_file(os.path.join(root, "new"), b"data")
    assert os.path.join(root, "new") not in fault.post_crash_state("drop")
    assert fault.post_crash_state("prefix")[os.path.join(root, "new")] == b"data"


def test_a_forgotten_rename_over_a_file_restores_the_old_content(root):
    os.makedirs(root)
    with open(os.path.join(root, "CURRENT"), "wb") as handle:
        handle.write(b"old")
    with faultfs.installed(root) as fault:
        write_file(os.path.join(root, "CURRENT.tmp"), b"new")
        fs.ops.rename(os.path.join(root, "CURRENT.tmp"), os.path.join(root, "CURRENT"))
    state = fault.post_crash_state("forget")
    assert state[os.path.join(root, "CURRENT")] == b"old"
    assert os.path.join(root, "CURRENT.tmp") not in state  # its creation was not covered either


def test_a_directory_fsync_makes_the_rename_durable(root):
    os.makedirs(root)
    with open(os.path.join(root, "CURRENT"), "wb") as handle:
        handle.write(b"old")
    with faultfs.installed(root) as fault:
        write_file(os.path.join(root, "CURRENT.tmp"), b"new")
        fs.ops.rename(os.path.join(root, "CURRENT.tmp"), os.path.join(root, "CURRENT"))
        fs.fsync_dir(root)
    state = fault.post_crash_state("drop")
    assert state[os.path.join(root, "CURRENT")] == b"new" and os.path.join(root, "CURRENT.tmp") not in state


def test_an_unlink_without_a_directory_fsync_comes_back(root):
    os.makedirs(root)
    with open(os.path.join(root, "old.log"), "wb") as handle:
        handle.write(b"records")
    with faultfs.installed(root) as fault:
        fs.ops.unlink(os.path.join(root, "old.log"))
    assert fault.post_crash_state("drop")[os.path.join(root, "old.log")] == b"records"


def test_a_directory_whose_creation_was_not_synced_vanishes_with_its_files(root):
    with faultfs.installed(root) as fault:
        fs.ops.mkdir(os.path.join(root, "seg"))
        write_file(os.path.join(root, "seg", "a.seg"), b"data")
        fs.fsync_dir(os.path.join(root, "seg"))
    state = fault.post_crash_state("drop")
    assert os.path.join(root, "seg") not in state and os.path.join(root, "seg", "a.seg") not in state


def test_sync_filesystem_makes_everything_durable(root):
    with faultfs.installed(root) as fault:
        fs.ops.mkdir(os.path.join(root, "raw"))
        write_file(os.path.join(root, "raw", "blob"), b"data", sync=False)
        fs.sync_filesystem(root)
    assert fault.post_crash_state("drop")[os.path.join(root, "raw", "blob")] == b"data"


def test_after_a_failed_fsync_a_retried_fsync_does_not_make_the_lost_pages_durable(root):
    with faultfs.installed(root) as fault:
        path = os.path.join(root, "log")
        write_file(path, b"synced")
        fs.fsync_dir(root)
        fault.fail("fsync", 2)
        fd = fs.ops.open_append(path)
        fs.ops.write(fd, b"+lost")
        with pytest.raises(OSError) as caught:
            fs.ops.fsync(fd)
        fs.ops.fsync(fd)  # "succeeds", as on Linux after the error was reported once
        fs.ops.close(fd)
    assert caught.value.errno == errno.EIO
    assert fault.post_crash_state("forget")[path] == b"synced" + bytes(5)


def test_injected_errors_once_and_persistent(root):
    with faultfs.installed(root) as fault:
        fault.fail("rename", 2, errno.ENOSPC)
        fault.fail("mkdir", 1, errno.EIO, persistent=True)
        write_file(os.path.join(root, "a"), b"")
        fs.ops.rename(os.path.join(root, "a"), os.path.join(root, "b"))
        with pytest.raises(OSError) as caught:
            fs.ops.rename(os.path.join(root, "b"), os.path.join(root, "c"))
        fs.ops.rename(os.path.join(root, "b"), os.path.join(root, "c"))
        for name in ("d1", "d2"):
            with pytest.raises(OSError):
                fs.ops.mkdir(os.path.join(root, name))
    assert caught.value.errno == errno.ENOSPC
    assert [failure[0] for failure in fault.failures] == ["rename", "mkdir", "mkdir"]


def test_a_partial_write_leaves_half_the_data(root):
    with faultfs.installed(root) as fault:
        fault.fail("write", 1, errno.ENOSPC, partial=True)
        fd = fs.ops.open_new(os.path.join(root, "a"))
        with pytest.raises(OSError):
            fs.ops.write(fd, b"12345678")
        fs.ops.close(fd)
    with open(os.path.join(root, "a"), "rb") as handle:
        assert handle.read() == b"1234"


def test_a_crash_stops_every_later_operation_but_close(root):
    with faultfs.installed(root) as fault:
        fault.crash(3)
        fd = fs.ops.open_new(os.path.join(root, "a"))
        fs.ops.write(fd, b"x")
        with pytest.raises(faultfs.SimulatedCrash):
            fs.ops.fsync(fd)
        with pytest.raises(faultfs.SimulatedCrash):
            fs.ops.write(fd, b"y")
        fs.ops.close(fd)
    assert fault.crashed and fault.describe(3).startswith("#3 fsync")


def test_materialise_in_place_and_into_a_copy(root, tmp_path):
    with faultfs.installed(root) as fault:
        write_file(os.path.join(root, "kept"), b"kept")
        fs.fsync_dir(root)
        write_file(os.path.join(root, "lost"), b"lost")
    copy = str(tmp_path / "copy")
    fault.materialise("drop", into=copy)
    assert sorted(os.listdir(copy)) == ["kept"]
    fault.materialise("drop")
    assert sorted(os.listdir(root)) == ["kept"]


def test_descriptors_opened_before_installation_are_modelled(root):
    os.makedirs(root)
    path = os.path.join(root, "log")
    with open(path, "wb") as handle:
        handle.write(b"before")
    fd = fs.ops.open_append(path)
    with faultfs.installed(root) as fault:
        fs.ops.write(fd, b"+synced")
        fs.ops.fsync(fd)
        fs.ops.write(fd, b"+unsynced")
    fs.ops.close(fd)
    assert fault.post_crash_state("drop")[path] == b"before+synced"
