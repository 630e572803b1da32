"""download_archive against a loopback server: exact size and hash, or nothing on disk."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from orcmem.embed.download import download_archive
from orcmem.models.errors import ModelError
from tests.embed.support import Route, Server, sha256

BODY = bytes(range(256)) * 1000  # 256,000 bytes


def test_a_good_download_lands_at_dest_with_progress(tmp_path: Path, server: Server) -> None:
    server.routes["/a.tar.gz"] = Route(body=BODY)
    dest = tmp_path / "a.tar.gz"
    seen: list[tuple[int, int]] = []
    result = download_archive(
        server.url("/a.tar.gz"), dest, size=len(BODY), sha256=sha256(BODY), progress=lambda d, t: seen.append((d, t))
    )
    assert result == dest
    assert dest.read_bytes() == BODY
    assert seen[-1] == (len(BODY), len(BODY))
    assert all(t == len(BODY) for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tar.gz"]


def test_http_404_gives_a_clear_error_and_leaves_nothing(tmp_path: Path, server: Server) -> None:
    dest = tmp_path / "a.tar.gz"
    with pytest.raises(ModelError, match=r"^The embedding model download failed with HTTP 404\.$"):
        download_archive(server.url("/missing"), dest, size=10, sha256="0" * 64)
    assert list(tmp_path.iterdir()) == []


def test_http_500_gives_a_clear_error(tmp_path: Path, server: Server) -> None:
    server.routes["/a"] = Route(status=500, body=b"oops")
    with pytest.raises(ModelError, match="HTTP 500"):
        download_archive(server.url("/a"), tmp_path / "a", size=4, sha256=sha256(b"oops"))
    assert list(tmp_path.iterdir()) == []


def test_a_hash_mismatch_is_refused_and_leaves_nothing(tmp_path: Path, server: Server) -> None:
    altered = b"X" + BODY[1:]
    server.routes["/a"] = Route(body=altered)
    with pytest.raises(ModelError, match="does not match its pinned SHA-256"):
        download_archive(server.url("/a"), tmp_path / "a", size=len(BODY), sha256=sha256(BODY))
    assert list(tmp_path.iterdir()) == []


def test_a_declared_length_above_the_pin_is_refused_before_reading(tmp_path: Path, server: Server) -> None:
    server.routes["/a"] = Route(body=BODY)
    with pytest.raises(ModelError, match="larger than the pinned archive"):
        download_archive(server.url("/a"), tmp_path / "a", size=1000, sha256=sha256(BODY[:1000]))
    assert list(tmp_path.iterdir()) == []


def test_an_undeclared_oversized_body_is_cut_off_early(tmp_path: Path, server: Server) -> None:
    huge = b"\x00" * (64 * 1024 * 1024)
    server.routes["/a"] = Route(body=huge, send_length=False)
    started = time.monotonic()
    with pytest.raises(ModelError, match="larger than the pinned archive"):
        download_archive(server.url("/a"), tmp_path / "a", size=1000, sha256="0" * 64)
    assert time.monotonic() - started < 5
    assert list(tmp_path.iterdir()) == []
    assert server.finished.wait(10)
    # The client hung up after its first chunk: the server could not push the whole 64 MiB.
    assert server.sent["/a"] < len(huge)


def test_a_short_body_is_refused(tmp_path: Path, server: Server) -> None:
    server.routes["/a"] = Route(body=BODY[:1000], send_length=False)
    with pytest.raises(ModelError, match="stopped after 1,000 of 256,000 bytes"):
        download_archive(server.url("/a"), tmp_path / "a", size=len(BODY), sha256=sha256(BODY))
    assert list(tmp_path.iterdir()) == []


def test_an_unreachable_server_gives_a_clear_error(tmp_path: Path, server: Server) -> None:
    port = int(server.base.rsplit(":", 1)[1])
    url = f"http://127.0.0.1:{port + 1 if port < 65535 else port - 1}/a"
    with pytest.raises(ModelError, match="could not be downloaded"):
        download_archive(url, tmp_path / "a", size=10, sha256="0" * 64, timeout=2)
    assert list(tmp_path.iterdir()) == []


def test_only_http_urls_are_accepted(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.write_bytes(b"data")
    with pytest.raises(ModelError, match="http"):
        download_archive(source.as_uri(), tmp_path / "a", size=4, sha256=sha256(b"data"))
    assert not (tmp_path / "a").exists()


def test_a_failing_progress_callback_leaves_nothing(tmp_path: Path, server: Server) -> None:
    server.routes["/a"] = Route(body=BODY)

    def progress(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        download_archive(server.url("/a"), tmp_path / "a", size=len(BODY), sha256=sha256(BODY), progress=progress)
    assert list(tmp_path.iterdir()) == []


def test_a_stale_part_file_is_overwritten(tmp_path: Path, server: Server) -> None:
    server.routes["/a"] = Route(body=BODY)
    (tmp_path / "a.part").write_bytes(b"left by a killed process")
    download_archive(server.url("/a"), tmp_path / "a", size=len(BODY), sha256=sha256(BODY))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]


def test_the_network_guard_blocks_other_hosts(tmp_path: Path) -> None:
    # 192.0.2.1 is TEST-NET-1: never routed, so even without the guard nothing would leave the machine.
    with pytest.raises(AssertionError, match="tried to reach 192.0.2.1"):
        download_archive("http://192.0.2.1/a", tmp_path / "a", size=1, sha256="0" * 64, timeout=1)
    assert list(tmp_path.iterdir()) == []
