"""The warm path: the real `orcmem hook prompt` asks the session's running `orcmem mcp` (the real int8 MiniLM loaded)
over the profile's socket, gets recall by meaning, and falls back to words when no server answers.

Every process here is real: the server and the hook run as the agents start them, on a profile whose model was
installed from the `model` extra.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from orcmem.agent_context.session_recall import RECALL_LOG_NAME
from orcmem.host.warm import ask, socket_path
from orcmem.worker.control import stop_workers, worker_running
from tests.helpers import wait_for

CAR = ("The car will not start in winter", "The battery drains overnight when it is freezing outside.")
TABS = ("Use tabs for indentation", "Every Go file in this repository is formatted by gofmt.")
PARAPHRASE = "why won't my vehicle turn on when it's cold"  # no word in common with CAR


def orcmem(home: Path, project: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ORCMEM_HOME": str(home)}
    result = subprocess.run(
        [sys.executable, "-m", "orcmem", *args], cwd=project, env=env, input=stdin, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result


def prompt_hook(home: Path, project: Path, prompt: str, session: str = "s1", event: str = "UserPromptSubmit") -> str:
    """What the real prompt hook adds before `prompt` (the recall text, or ""); its answer names the event asked."""
    payload = {"hook_event_name": event, "session_id": session, "cwd": str(project), "prompt": prompt}
    out = orcmem(home, project, "hook", "prompt", stdin=json.dumps(payload)).stdout
    if not out:
        return ""
    assert json.loads(out)["hookSpecificOutput"]["hookEventName"] == event
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


def last_log_line(home: Path) -> str:
    return (home / "logs" / RECALL_LOG_NAME).read_text().splitlines()[-1]


@pytest.fixture
def profile(tmp_path: Path, orcmem_home: Path, int8_models_dir: Path) -> Iterator[tuple[Path, Path, dict[str, str]]]:
    """Memory on, the model installed, two memories (their ids by title), all embedded."""
    project = tmp_path / "project"
    project.mkdir()
    orcmem(orcmem_home, project, "memory", "on")
    orcmem(orcmem_home, project, "model", "install", "--from", str(int8_models_dir / "minilm-l6-v2-int8"))
    ids = {}
    for title, body in (CAR, TABS):
        ids[title] = orcmem(orcmem_home, project, "add", "--type", "lesson", "--title", title, "--body", body).stdout
    orcmem(orcmem_home, project, "reindex")
    try:
        yield orcmem_home, project, {title: memory_id.strip() for title, memory_id in ids.items()}
    finally:
        stop_workers(orcmem_home)


def vectors(home: Path, project: Path) -> int:
    return int(json.loads(orcmem(home, project, "model", "status", "--json").stdout)["vectors"])


ADD_AND_TELL = (
    "import sys\n"
    "from orcmem.cli.commands import main\n"
    "sys.argv = ['orcmem', *sys.argv[1:]]\n"
    "try:\n"
    "    main()\n"
    "finally:\n"
    "    print('model loaded here' if 'onnxruntime' in sys.modules else 'no model here', file=sys.stderr)\n"
)


def add_and_tell(home: Path, project: Path, title: str, body: str) -> str:
    """Run `orcmem add` and say whether that process loaded the model."""
    result = subprocess.run(
        [sys.executable, "-c", ADD_AND_TELL, "add", "--type", "lesson", "--title", title, "--body", body],
        cwd=project,
        env={**os.environ, "ORCMEM_HOME": str(home)},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    return result.stderr.strip().splitlines()[-1]


def start_server(home: Path, project: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "ORCMEM_HOME": str(home)}
    return subprocess.Popen(
        [sys.executable, "-m", "orcmem", "mcp", "--project", str(project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )


def warm_path(home: Path, project: Path) -> str | None:
    answer, why = ask(str(home), {"prompt": "probe", "cwd": str(project), "session_id": None})
    return why if answer is not None else None


@pytest.fixture
def server(profile) -> Iterator[subprocess.Popen[bytes]]:
    home, project, _ids = profile
    process = start_server(home, project)
    try:
        wait_for(lambda: warm_path(home, project) == "warm", timeout=90, what="the server's model to load")
        yield process
    finally:
        process.kill()
        process.wait()


def test_the_hook_recalls_by_meaning_through_the_warm_server(profile, server) -> None:
    home, project, _ids = profile
    assert CAR[0] in prompt_hook(home, project, PARAPHRASE)
    assert last_log_line(home).split()[1] == "warm" and "shown=1" in last_log_line(home)
    explained = orcmem(home, project, "recall", "--explain", PARAPHRASE).stdout
    assert (
        explained.startswith("path: warm: recall by meaning and by words on the running server") and CAR[0] in explained
    )


def test_gemini_clis_prompt_hook_is_answered_warm_under_its_event_name(profile, server) -> None:
    home, project, _ids = profile
    assert CAR[0] in prompt_hook(home, project, PARAPHRASE, session="g1", event="BeforeAgent")
    assert last_log_line(home).split()[1] == "warm"


def test_a_payload_without_an_absolute_folder_gets_nothing_from_the_server(profile, server) -> None:
    """The server never falls back to its own folder's project for a payload that names none."""
    home, _project, _ids = profile
    for cwd in ("", "relative/path"):
        answer, _path = ask(str(home), {"prompt": PARAPHRASE, "cwd": cwd, "session_id": "x"})
        assert answer is not None and answer["text"] == ""


def test_the_socket_is_this_users_alone(profile, server) -> None:
    home, _project, _ids = profile
    path = Path(socket_path(str(home)))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_ISSOCK(path.stat().st_mode)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to try the socket as another user")
def test_another_user_cannot_reach_the_socket(profile, server) -> None:
    home, project, _ids = profile
    code = (
        "import socket, sys; s = socket.socket(socket.AF_UNIX)\n"
        "try: s.connect(sys.argv[1])\n"
        "except PermissionError: print('refused')\n"
        "else: print('connected')\n"
    )
    python = shutil.which("python3", path="/usr/bin:/bin")  # one the other user may run (this venv is root's)
    if python is None:
        pytest.skip("no system python3 for the other user")
    other = subprocess.run(
        [python, "-c", code, socket_path(str(home))],
        user=65534,
        capture_output=True,
        text=True,
        cwd="/",
    )
    assert other.stdout.strip() == "refused", other.stderr


def test_a_session_is_given_a_memory_once_until_it_changes(profile, server) -> None:
    home, project, ids = profile
    assert CAR[0] in prompt_hook(home, project, PARAPHRASE, session="a")
    assert prompt_hook(home, project, PARAPHRASE, session="a") == ""  # given already, unchanged
    assert "repeated=1" in last_log_line(home)
    assert CAR[0] in prompt_hook(home, project, PARAPHRASE, session="b")  # another session
    orcmem(home, project, "edit", ids[CAR[0]], "--body", "The battery drains overnight below freezing.")
    assert "below freezing" in prompt_hook(home, project, PARAPHRASE, session="a")  # changed since
    end = {"hook_event_name": "SessionEnd", "session_id": "a", "cwd": str(project), "reason": "other"}
    orcmem(home, project, "hook", "session-end", stdin=json.dumps(end))
    assert not list((home / "sessions").glob("recall-a.json"))


def test_without_a_server_the_hook_recalls_by_words(profile) -> None:
    home, project, _ids = profile
    assert prompt_hook(home, project, PARAPHRASE) == ""  # meaning needs the warm server
    assert "no warm server" in last_log_line(home)
    assert orcmem(home, project, "recall", "--explain", PARAPHRASE).stdout.startswith("path: words (no warm server)")
    assert CAR[0] in prompt_hook(home, project, "the car will not start in winter again")
    assert last_log_line(home).split()[1] == "words"


def test_a_killed_server_leaves_the_hook_on_words_and_the_next_server_takes_over(profile, server) -> None:
    home, project, _ids = profile
    second = start_server(home, project)
    try:
        time.sleep(1)  # it finds the socket held and waits its turn
        server.send_signal(signal.SIGKILL)
        server.wait()
        assert Path(socket_path(str(home))).exists()  # the killed holder could not clean up
        wait_for(lambda: warm_path(home, project) == "warm", timeout=90, what="the second server to take over")
        assert CAR[0] in prompt_hook(home, project, PARAPHRASE, session="after")
    finally:
        second.kill()
        second.wait()
    assert prompt_hook(home, project, PARAPHRASE, session="later") == ""
    assert "no warm server" in last_log_line(home)


def test_add_leaves_its_vector_to_the_warm_server(profile, server) -> None:
    home, project, _ids = profile
    assert (
        add_and_tell(home, project, "Ship with make release", "It builds the wheel and uploads it.") == "no model here"
    )
    assert not worker_running(home)  # the server took it
    wait_for(lambda: vectors(home, project) == 3, timeout=30, what="the server to embed the new memory")
    hits = json.loads(orcmem(home, project, "search", "publish a new version of the package", "--json").stdout)
    assert hits[0]["title"] == "Ship with make release" and hits[0]["explain"]["meaning_rank"] == 1


def test_add_without_a_server_leaves_its_vector_to_a_background_worker(profile) -> None:
    home, project, _ids = profile
    assert (
        add_and_tell(home, project, "Ship with make release", "It builds the wheel and uploads it.") == "no model here"
    )
    assert "Ship with make release" in orcmem(home, project, "search", "make release").stdout  # by words at once
    wait_for(lambda: vectors(home, project) == 3, timeout=90, what="a background worker to embed the new memory")
    wait_for(lambda: not worker_running(home), timeout=60, what="the worker to finish")
