"""--raw PATH (file, directory, glob, -) and --text arguments become Sources; oversized files are refused
without being read."""

import io
import os

import pytest

from engine.errors import InputError
from memctl.ingest import sources


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


def test_files_directories_and_globs(tmp_path):
    write(tmp_path / "a.txt", b"a")
    write(tmp_path / "dir" / "b.jsonl", b"b")
    write(tmp_path / "dir" / "sub" / "c.txt", b"c")
    write(tmp_path / "dir" / ".hidden", b"h")
    write(tmp_path / "dir" / ".git" / "config", b"g")
    found = sources.collect([str(tmp_path / "a.txt"), str(tmp_path / "dir"), str(tmp_path / "**" / "c.txt")])
    names = [os.path.relpath(source.name, tmp_path) for source in found]
    assert names == ["a.txt", os.path.join("dir", "b.jsonl"), os.path.join("dir", "sub", "c.txt"),
                     os.path.join("dir", "sub", "c.txt")]
    assert [source.data for source in found] == [b"a", b"b", b"c", b"c"]


def test_stdin_and_text_arguments():
    found = sources.collect(["-"], ["以后优先中文回答"], stdin=io.BytesIO(b"Alice: hi\n"))
    assert [(source.name, source.data) for source in found] == [
        ("stdin", b"Alice: hi\n"), ("text", "以后优先中文回答".encode())]
    assert [source.name for source in sources.collect([], ["one", "two"])] == ["text1", "text2"]


@pytest.mark.parametrize("argument, message", [
    ("missing.txt", "no such file or directory"),
    ("*.nothing", "no file matches this pattern"),
    ("empty-dir", "directory holds no files"),
])
def test_paths_that_name_nothing(tmp_path, monkeypatch, argument, message):
    monkeypatch.chdir(tmp_path)
    os.mkdir("empty-dir")
    with pytest.raises(InputError, match=message) as raised:
        sources.collect([argument])
    assert raised.value.where == argument


def test_nothing_to_ingest():
    with pytest.raises(InputError, match="nothing to ingest"):
        sources.collect([], [])


def test_oversized_file_is_refused_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "big.txt"
    with open(path, "wb") as handle:
        handle.truncate(10 * 1024 * 1024)

    def must_not_read(*arguments):
        raise AssertionError("the file was read")

    monkeypatch.setattr(sources, "read_stream", must_not_read)
    with pytest.raises(InputError, match="above the limit of 1,000,000 bytes per file") as raised:
        sources.read_file(str(path), size_limit=1_000_000)
    assert raised.value.where == str(path)


def test_endless_stdin_is_cut_one_byte_past_the_limit():
    class Endless(io.RawIOBase):
        requested = []

        def read(self, size=-1):
            self.requested.append(size)
            return b"x" * size

    with pytest.raises(InputError, match="input is 101 bytes, above the limit of 100 bytes"):
        sources.read_stream(Endless(), "stdin", size_limit=100)
    assert Endless.requested == [101]


@pytest.mark.parametrize("held, told", [(50, 50), (20, 50), (80, 50)])
def test_a_file_is_read_whole_whatever_its_size_said(held, told):
    """read_file passes fstat's size; a file that shrank or grew since is still read exactly, to its end."""
    assert sources.read_stream(io.BytesIO(b"x" * held), "f.txt", size_limit=100, size=told).data == b"x" * held


def test_a_file_grown_past_the_limit_since_fstat_is_refused():
    with pytest.raises(InputError, match="input is 101 bytes, above the limit of 100 bytes"):
        sources.read_stream(io.BytesIO(b"x" * 150), "f.txt", size_limit=100, size=50)


def test_unreadable_file(tmp_path):
    with pytest.raises(InputError, match="cannot read") as raised:
        sources.read_file(str(tmp_path))
    assert raised.value.where == str(tmp_path)
