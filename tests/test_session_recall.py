"""Recall within a session (given once, near-identical shown once, what was cut counted) and the hook's side of
the warm socket when the server misbehaves."""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from orcmem.agent_context.session_recall import (
    SESSION_FILE_MAX_AGE_S,
    prune_sessions,
    recall_for_session,
    select,
    session_file,
)
from orcmem.host.warm import ask, run_dir, socket_path
from orcmem.models.constants import RECALL_MAX_CHARS, RECALL_MAX_MEMORIES
from orcmem.store.recall import RecallRow


def row(n: int, title: str | None = None, body: str | None = None, updated: int = 0) -> RecallRow:
    return RecallRow(
        "lesson", title or f"memory {n} title", body or f"body of memory {n}", "user", 0, False, f"m{n}", updated
    )


def test_a_near_identical_memory_is_shown_once_and_counted() -> None:
    rows = [
        row(1, "Run the tests with the forks pool", "vitest --pool=forks avoids worker crashes"),
        row(2, "run the tests with the forks pool.", "Vitest --pool=forks avoids worker crashes"),
        row(3, "Release checklist", "Bump the version and tag the commit"),
    ]
    chosen = select(rows, {}, now=0)
    assert [r.id for r in chosen.shown] == ["m1", "m3"] and chosen.collapsed == 1 and chosen.repeated == 0


def test_what_the_limits_cut_is_counted() -> None:
    many = [row(n) for n in range(RECALL_MAX_MEMORIES + 3)]
    chosen = select(many, {}, now=0)
    assert len(chosen.shown) == RECALL_MAX_MEMORIES and chosen.cut == 3
    huge = [row(n, body="x" * (RECALL_MAX_CHARS // 2)) for n in range(4)]
    chosen = select(huge, {}, now=0)
    assert len(chosen.text) <= RECALL_MAX_CHARS + 600 and chosen.cut == 4 - len(chosen.shown)


def test_a_given_memory_comes_back_only_when_changed(tmp_path: Path) -> None:
    home = str(tmp_path)
    first = recall_for_session(home, "s", [row(1), row(2)], now=0)
    assert len(first.shown) == 2
    again = recall_for_session(home, "s", [row(1), row(2, updated=5), row(3)], now=0)
    assert [r.id for r in again.shown] == ["m2", "m3"] and again.repeated == 1
    assert len(recall_for_session(home, None, [row(1)], now=0).shown) == 1  # no session: nothing remembered
    assert len(recall_for_session(home, None, [row(1)], now=0).shown) == 1


def test_a_strange_session_id_gets_a_safe_file_name_and_a_broken_file_is_ignored(tmp_path: Path) -> None:
    path = session_file(str(tmp_path), "../../etc/passwd\x00")
    assert path is not None and Path(path).parent == tmp_path / "sessions" and "/" not in Path(path).name[7:]
    Path(path).parent.mkdir(parents=True)
    Path(path).write_text("{not json")
    assert len(recall_for_session(str(tmp_path), "../../etc/passwd\x00", [row(1)], now=0).shown) == 1
    saved = json.loads(Path(path).read_text())
    assert {key: value for key, value in saved.items() if not key.startswith("#")} == {"m1": 0}
    assert os.stat(path).st_mode & 0o777 == 0o600


def test_old_session_files_are_pruned(tmp_path: Path) -> None:
    recall_for_session(str(tmp_path), "old", [row(1)], now=0)
    recall_for_session(str(tmp_path), "new", [row(1)], now=0)
    old = session_file(str(tmp_path), "old")
    assert old is not None
    stale = time.time() - SESSION_FILE_MAX_AGE_S - 60
    os.utime(old, (stale, stale))
    assert prune_sessions(str(tmp_path)) == 1
    assert sorted(p.name for p in (tmp_path / "sessions").iterdir()) == ["recall-new.json"]


@pytest.fixture
def fake_server(tmp_path: Path) -> Iterator[Callable[[Callable[[socket.socket], None]], str]]:
    """A socket server at the profile's warm path that answers as `behave` does."""
    home = tmp_path / "h"
    listeners: list[socket.socket] = []

    def serve(behave: Callable[[socket.socket], None]) -> str:
        folder = run_dir(str(home))
        os.makedirs(folder, mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(socket_path(str(home)))
        listener.listen(1)
        listeners.append(listener)

        def loop() -> None:
            connection, _ = listener.accept()
            with connection:
                behave(connection)

        threading.Thread(target=loop, daemon=True).start()
        return str(home)

    yield serve
    for listener in listeners:
        listener.close()


def test_a_server_that_hangs_costs_the_hook_its_timeout_only(fake_server) -> None:
    home = fake_server(lambda connection: time.sleep(3))
    started = time.monotonic()
    assert ask(home, {"prompt": "x"}, timeout=0.3) == (None, "warm server timed out")
    assert time.monotonic() - started < 1.5


@pytest.mark.parametrize("reply", [b"not json", b'["a list"]', b'{"text": 3}'])
def test_a_bad_answer_is_no_answer(fake_server, reply: bytes) -> None:
    def behave(connection: socket.socket) -> None:
        connection.recv(65536)
        connection.sendall(reply)

    answer, why = ask(fake_server(behave), {"prompt": "x"})
    assert answer is None and why.startswith("warm server")


def test_a_socket_in_a_folder_others_can_enter_is_not_asked(tmp_path: Path) -> None:
    home = tmp_path / "h"
    folder = Path(run_dir(str(home)))
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(socket_path(str(home)))
    listener.listen(1)
    try:
        assert ask(str(home), {"prompt": "x"}) == (None, "no warm server")
    finally:
        listener.close()


def test_one_server_holds_the_socket_and_the_next_takes_over_when_it_closes() -> None:
    """Two servers of one profile (in its own short folder): the first answers; once it closes, the second does."""
    from orcmem.mcp_server.recall_socket import CLAIM_RETRY_S, RecallSocket

    home = Path(tempfile.mkdtemp(dir="/tmp", prefix="om-"))
    try:
        first = RecallSocket(home, lambda request: {"text": "first", "path": "warm"})
        second = RecallSocket(home, lambda request: {"text": "second", "path": "warm"})
        first.start()
        assert first.holding.wait(5)
        second.start()
        assert not second.holding.wait(0.5)
        assert Path(socket_path(str(home))).parent == home / "run"
        assert ask(str(home), {"prompt": "x"})[0] == {"text": "first", "path": "warm"}
        first.close()
        assert second.holding.wait(CLAIM_RETRY_S + 2)
        assert ask(str(home), {"prompt": "x"})[0] == {"text": "second", "path": "warm"}
        second.close()
        assert ask(str(home), {"prompt": "x"}) == (None, "no warm server")
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def short_home() -> Iterator[Path]:
    home = Path(tempfile.mkdtemp(dir="/tmp", prefix="om-"))
    yield home
    shutil.rmtree(home, ignore_errors=True)


def test_a_request_no_parser_takes_does_not_stop_the_server(short_home: Path) -> None:
    """Deeply nested JSON (a RecursionError, not a ValueError) gets an error answer; the next request is served."""
    from orcmem.mcp_server.recall_socket import RecallSocket

    server = RecallSocket(short_home, lambda request: {"text": "fine", "path": "warm"})
    server.start()
    try:
        assert server.holding.wait(5)
        client = socket.socket(socket.AF_UNIX)
        client.connect(socket_path(str(short_home)))
        client.sendall(b"json\n" + b"[" * 100_000)
        client.shutdown(socket.SHUT_WR)
        client.recv(65536)
        client.close()
        assert ask(str(short_home), {"prompt": "x"})[0] == {"text": "fine", "path": "warm"}
    finally:
        server.close()


def test_a_late_answer_marks_nothing_as_given(short_home: Path) -> None:
    """A client that gave up answered itself from words: the server must not record what it never delivered."""
    from orcmem.host.warm import WARM_TIMEOUT_S
    from orcmem.mcp_server.recall_socket import REMEMBER, RecallSocket

    remembered: list[str] = []

    def answer(request: dict) -> dict:
        time.sleep(float(request["delay"]))
        return {"text": "t", "path": "warm", REMEMBER: lambda: remembered.append(request["prompt"])}

    server = RecallSocket(short_home, answer)
    server.start()
    try:
        assert server.holding.wait(5)
        assert ask(str(short_home), {"prompt": "quick", "delay": 0})[0] == {"text": "t", "path": "warm"}
        assert ask(str(short_home), {"prompt": "late", "delay": WARM_TIMEOUT_S + 0.2}) == (
            None,
            "warm server timed out",
        )
        time.sleep(0.5)  # the server finishes the late answer meanwhile
        assert remembered == ["quick"]
    finally:
        server.close()


def test_the_log_names_a_strange_session_safely(tmp_path: Path) -> None:
    from orcmem.agent_context.session_recall import RECALL_LOG_NAME, log_recall

    log_recall(str(tmp_path), "warm", 1.0, "a\nfake line \udc80", select([row(1)], {}, 0))
    [line] = (tmp_path / "logs" / RECALL_LOG_NAME).read_text().splitlines()
    assert "fake line" not in line and "shown=1" in line


def test_a_client_that_stopped_waiting_is_not_an_error(short_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On a busy machine the hook's second can pass; the server's answer then finds no reader, and says nothing."""
    from orcmem.host.warm import WARM_TIMEOUT_S
    from orcmem.mcp_server.recall_socket import RecallSocket

    def answer(request: dict) -> dict:
        time.sleep(float(request["delay"]))
        size = 1_000_000 if request["delay"] else 1  # a late answer larger than a socket buffer: its write fails
        return {"text": "x" * size, "path": "warm"}

    server = RecallSocket(short_home, answer)
    server.start()
    try:
        assert server.holding.wait(5)
        assert ask(str(short_home), {"prompt": "late", "delay": WARM_TIMEOUT_S + 0.2})[1] == "warm server timed out"
        time.sleep(WARM_TIMEOUT_S)  # the late answer is written to nobody meanwhile
        assert ask(str(short_home), {"prompt": "next", "delay": 0})[0] is not None
    finally:
        server.close()
    assert "failed" not in capsys.readouterr().err
