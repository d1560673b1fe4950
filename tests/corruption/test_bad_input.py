"""A store directory that is not what it should be: a clear typed error, and not one byte changed on disk but the
DAMAGE marker that records corruption (a file of another format is no damage: nothing at all changes)."""

from __future__ import annotations

import os
import struct

import pytest

from engine import manifest as manifest_module
from engine.check import check_store
from engine.codec import crc32
from engine.errors import CorruptionError, UnsupportedVersion
from engine.format import (
    CURRENT_FILE,
    DAMAGE_FILE,
    FORMAT_VERSION,
    GC_LOCK_FILE,
    SEGMENT_FOOTER_SIZE,
    WRITER_LOCK_FILE,
)
from engine.store import Store
from engine_testkit import rewrite_manifest_as
from tools.testing import damage, reference

NEWER = FORMAT_VERSION + 1


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("bad-input") / "store")
    reference.build(path, seed=7, compact=False)
    return damage.snapshot(path)


@pytest.fixture
def store(tmp_path, pristine):
    path = str(tmp_path / "store")
    damage.restore(path, pristine)
    return path


def file_of(path: str, kind: str) -> str:
    return os.path.join(path, reference.files_by_kind(path)[kind][-1])


def rewrite(path: str, change) -> None:
    with open(path, "rb") as handle:
        data = bytearray(handle.read())
    change(data)
    damage.replace_file(path, bytes(data))


def refused_without_change(path: str, error_type=CorruptionError) -> list:
    """Every way in refuses with `error_type`; check_store reports it; nothing on disk changes but the DAMAGE
    marker, written for corruption in a store that has CURRENT and not for UnsupportedVersion. Returns the errors (writer, reader)."""
    before = damage.digest(damage.snapshot(path))
    entries = set(os.listdir(path))
    errors = []
    for writable in (True, False):
        with pytest.raises(error_type) as caught:
            Store.open(path, writable=writable)
        assert caught.value.path, "the error must name the file"
        errors.append(caught.value)
    assert check_store(path).problems
    after = damage.digest(damage.snapshot(path))
    marked = error_type is not UnsupportedVersion and os.path.exists(os.path.join(path, CURRENT_FILE))
    assert (DAMAGE_FILE in after) == marked
    # every file but the lock files and the marker, byte for byte
    assert {name: digest for name, digest in after.items() if name != DAMAGE_FILE} == before
    assert set(os.listdir(path)) - entries <= {WRITER_LOCK_FILE, GC_LOCK_FILE, DAMAGE_FILE}
    return errors


def set_u32(offset: int, value: int, header_crc_end: int | None = None):
    def change(data: bytearray) -> None:
        data[offset: offset + 4] = struct.pack("<I", value)
        if header_crc_end is not None:
            data[header_crc_end: header_crc_end + 4] = struct.pack("<I", crc32(bytes(data[:header_crc_end])))
    return change


def test_a_manifest_from_a_newer_format_is_unsupported(store):
    rewrite(file_of(store, "manifest"), set_u32(8, NEWER))
    errors = refused_without_change(store, UnsupportedVersion)
    assert errors[0].found == NEWER and "upgrade memctl" in str(errors[0])


def test_a_store_of_format_3_is_refused_with_the_advice_to_migrate(store):
    """Format 3 kept memctl's nodes and documents in one unnamed text index: a format-4 memctl reads it as
    neither, so it refuses it (readers and writers alike) until `memctl migrate` upgrades it (to format 5)."""
    rewrite_manifest_as(store, 3)
    errors = refused_without_change(store, UnsupportedVersion)
    assert all(error.found == 3 and "predates format 5: run `memctl migrate`" in str(error) for error in errors)


def test_a_segment_from_a_newer_format_is_unsupported(store):
    rewrite(file_of(store, "segment:records"), set_u32(8, NEWER, header_crc_end=28))
    refused_without_change(store, UnsupportedVersion)


def test_a_segment_footer_from_a_newer_format_is_unsupported(store):
    path = file_of(store, "segment:records")
    rewrite(path, set_u32(os.path.getsize(path) - SEGMENT_FOOTER_SIZE + 16, NEWER))
    refused_without_change(store, UnsupportedVersion)


def test_a_wal_from_a_newer_format_is_unsupported(store):
    rewrite(file_of(store, "wal"), set_u32(8, NEWER, header_crc_end=28))
    refused_without_change(store, UnsupportedVersion)


def test_a_missing_current_with_files_present_is_refused(store):
    os.unlink(os.path.join(store, CURRENT_FILE))
    errors = refused_without_change(store)
    assert "CURRENT is missing" in str(errors[0])


@pytest.mark.parametrize("keep", [0, 10, 23, 24, 40, -1])
def test_a_truncated_manifest_is_refused(store, keep):
    path = file_of(store, "manifest")
    rewrite(path, lambda data: data.__delitem__(slice(keep, None)))
    errors = refused_without_change(store)
    assert errors[0].path == path


def test_current_naming_a_missing_manifest_is_refused(store):
    os.unlink(file_of(store, "manifest"))
    errors = refused_without_change(store)
    assert "does not exist" in str(errors[0])


@pytest.mark.parametrize("content", [b"", b"MANIFEST-000009", b"MANIFEST-9\n", b"../etc/passwd\n",
                                     b"MANIFEST-\xff\xfe0009\n", b"MANIFEST-000009\nMANIFEST-000010\n"])
def test_current_that_names_no_manifest_is_refused(store, content):
    damage.replace_file(os.path.join(store, CURRENT_FILE), content)
    errors = refused_without_change(store)
    assert errors[0].path.endswith(CURRENT_FILE)


def test_a_segment_named_by_the_manifest_but_missing_is_refused(store):
    os.unlink(file_of(store, "segment:records"))
    refused_without_change(store)


def test_the_pristine_store_opens(store):
    name = manifest_module.read_current(store)
    assert name and Store.open(store, writable=False).get("test.doc", "last") is not None
