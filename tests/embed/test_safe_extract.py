"""safe_extract: plain files and folders inside the target, within limits, or nothing at all."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pytest

from orcmem.embed.archive import safe_extract
from orcmem.models.errors import ModelError
from tests.embed.support import special, tar_gz


def write(tmp_path: Path, data: bytes) -> Path:
    archive = tmp_path / "archive.tar.gz"
    archive.write_bytes(data)
    return archive


def refused(tmp_path: Path, data: bytes, match: str, **limits: int) -> None:
    """Extraction raises ModelError matching `match` and leaves no target folder."""
    target = tmp_path / "out"
    with pytest.raises(ModelError, match=match):
        safe_extract(write(tmp_path, data), target, **limits)
    assert not target.exists()


def test_extracts_files_and_folders(tmp_path: Path) -> None:
    data = tar_gz([special("./", tarfile.DIRTYPE), ("./m/a.txt", b"alpha"), ("m/sub/b.bin", b"\x00\x01")])
    target = tmp_path / "out"
    assert safe_extract(write(tmp_path, data), target) == ["m/a.txt", "m/sub/b.bin"]
    assert (target / "m" / "a.txt").read_bytes() == b"alpha"
    assert (target / "m" / "sub" / "b.bin").read_bytes() == b"\x00\x01"


@pytest.mark.parametrize("name", ["../evil", "m/../../evil", "m/../..", "/etc/evil", "C:/evil", "m\\..\\evil"])
def test_paths_that_could_escape_are_refused(tmp_path: Path, name: str) -> None:
    refused(tmp_path, tar_gz([("m/ok", b"ok"), (name, b"evil")]), "absolute|outside|unsafe")
    assert not (tmp_path / "evil").exists()


@pytest.mark.parametrize(
    ("kind", "linkname"),
    [(tarfile.SYMTYPE, "/etc/passwd"), (tarfile.SYMTYPE, "a"), (tarfile.LNKTYPE, "m/a"), (tarfile.FIFOTYPE, "")],
)
def test_links_and_special_files_are_refused(tmp_path: Path, kind: bytes, linkname: str) -> None:
    data = tar_gz([("m/a", b"a"), special("m/link", kind, linkname)])
    refused(tmp_path, data, "link|not a regular file")


def test_device_entries_are_refused(tmp_path: Path) -> None:
    refused(tmp_path, tar_gz([special("m/dev", tarfile.CHRTYPE)]), "not a regular file")


def test_nested_gzip_payload_is_refused(tmp_path: Path) -> None:
    inner = gzip.compress(b"x" * 10_000)
    refused(tmp_path, tar_gz([("m/model.onnx", inner)]), "Nested model archive compression")


def test_nested_zstd_payload_is_refused(tmp_path: Path) -> None:
    refused(tmp_path, tar_gz([("m/model.onnx", b"\x28\xb5\x2f\xfd" + b"\x00" * 100)]), "Nested")


def test_too_many_entries_are_refused(tmp_path: Path) -> None:
    entries = [(f"m/f{i}", b"") for i in range(257)]
    refused(tmp_path, tar_gz(entries), "extraction limits")  # the default limit is 256


def test_exactly_the_entry_limit_is_fine(tmp_path: Path) -> None:
    entries = [(f"m/f{i}", b"") for i in range(256)]
    assert len(safe_extract(write(tmp_path, tar_gz(entries)), tmp_path / "out")) == 256


def test_an_entry_above_the_size_limit_is_refused(tmp_path: Path) -> None:
    refused(tmp_path, tar_gz([("m/a", b"x" * 101)]), "extraction limits", max_entry_bytes=100)


def test_the_total_size_limit_is_enforced(tmp_path: Path) -> None:
    data = tar_gz([("m/a", b"x" * 60), ("m/b", b"x" * 60)])
    refused(tmp_path, data, "exceeds", max_entry_bytes=100, max_total_bytes=100)


def test_huge_declared_entry_is_refused_before_reading_it(tmp_path: Path) -> None:
    # A header claiming 600 MiB with no data behind it: refused from the header alone.
    header = tarfile.TarInfo("m/huge")
    header.size = 600 * 1024 * 1024
    raw = header.tobuf(format=tarfile.GNU_FORMAT)
    refused(tmp_path, gzip.compress(raw + b"\x00" * 1024), "extraction limits")


def test_duplicate_files_are_refused(tmp_path: Path) -> None:
    refused(tmp_path, tar_gz([("m/a", b"1"), ("m/a", b"2")]), "more than once")


def test_a_file_where_a_folder_must_go_is_refused(tmp_path: Path) -> None:
    refused(tmp_path, tar_gz([("m/a", b"1"), ("m/a/b", b"2")]), "clashes")


def test_not_a_gzip_tar_is_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("m/a")
        tar.addfile(info, io.BytesIO(b""))
    refused(tmp_path, buffer.getvalue(), "not a readable")
    refused(tmp_path, b"plain text, not an archive", "not a readable")


def test_a_truncated_archive_is_refused(tmp_path: Path) -> None:
    data = tar_gz([("m/a", bytes(range(256)) * 400)])
    refused(tmp_path, data[: len(data) // 2], "damaged|not a readable")
