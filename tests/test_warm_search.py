"""`orcmem search` through the warm server: the real command asks the session's running `orcmem mcp` (the real
int8 MiniLM loaded) and prints exactly what its own path prints, without loading click, the service or the model;
with no server, or for what only the full command handles, the full command runs as before."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orcmem.cli.quick_search import parse
from orcmem.host.warm import ask, ask_search
from tests.helpers import wait_for
from tests.test_warm_path import CAR, PARAPHRASE, orcmem, profile, start_server, warm_path  # noqa: F401

# Runs `orcmem` as the console script does, then says whether the full command line (click) was loaded.
TELL = (
    "import sys\n"
    "from orcmem.entry import main\n"
    "sys.argv = ['orcmem', *sys.argv[1:]]\n"
    "try:\n"
    "    main()\n"
    "finally:\n"
    "    sys.stderr.write('full path\\n' if 'click' in sys.modules else 'warm path\\n')\n"
)
FULL = "import sys\nfrom orcmem.cli.commands import main\nsys.argv = ['orcmem', *sys.argv[1:]]\nmain()\n"


def run(home: Path, project: Path, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=project,
        env={**os.environ, "ORCMEM_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result


def rounded(value: Any) -> Any:
    """JSON with floats to 4 places: the score's recency moves with the clock between two runs."""
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, list):
        return [rounded(item) for item in value]
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    return value


def digits(text: str) -> str:
    """The text with its decimals to 4 places (the score's recency moves with the clock between two runs)."""
    return re.sub(r"\d+\.\d+", lambda found: f"{float(found.group()):.4f}", text)


@pytest.fixture
def server(profile) -> Iterator[subprocess.Popen[bytes]]:  # noqa: F811
    home, project, _ids = profile
    process = start_server(home, project)
    try:
        wait_for(lambda: warm_path(home, project) == "warm", timeout=90, what="the server's model to load")
        yield process
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize(
    "args",
    [
        ("search", PARAPHRASE),
        ("search", "--explain", PARAPHRASE),
        ("search", PARAPHRASE, "--limit=1", "--provenance", "person"),
        ("search", "nothing here matches zzqx", "--explain"),
    ],
)
def test_the_warm_server_prints_what_the_command_prints(profile, server, args: tuple[str, ...]) -> None:  # noqa: F811
    home, project, _ids = profile
    warm = run(home, project, TELL, *args)
    assert warm.stderr.splitlines()[-1] == "warm path", warm.stderr
    full = run(home, project, FULL, *args)
    assert digits(warm.stdout) == digits(full.stdout)
    if not any("zzqx" in arg for arg in args):
        assert CAR[0] in warm.stdout


def test_the_warm_json_is_the_commands_json(profile, server) -> None:  # noqa: F811
    home, project, ids = profile
    warm = run(home, project, TELL, "--project", str(project), "search", "--json", PARAPHRASE)
    assert warm.stderr.splitlines()[-1] == "warm path", warm.stderr
    full = run(home, project, FULL, "search", "--json", PARAPHRASE)
    hits = json.loads(warm.stdout)
    assert rounded(hits) == rounded(json.loads(full.stdout))
    assert hits[0]["id"] == ids[CAR[0]] and hits[0]["explain"]["meaning_rank"] == 1


def test_without_a_server_the_command_runs_its_own_path(profile) -> None:  # noqa: F811
    home, project, _ids = profile
    found = run(home, project, TELL, "search", PARAPHRASE)
    assert found.stderr.splitlines()[-1] == "full path"
    assert CAR[0] in found.stdout


def test_what_only_the_command_handles_goes_to_it(profile, server) -> None:  # noqa: F811
    home, project, _ids = profile
    team = subprocess.run(
        [sys.executable, "-c", TELL, "search", "--team", PARAPHRASE],
        cwd=project,
        env={**os.environ, "ORCMEM_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert team.stderr.splitlines()[-1] == "full path"
    bad = subprocess.run(
        [sys.executable, "-c", TELL, "search", PARAPHRASE, "--limit", "99"],
        cwd=project,
        env={**os.environ, "ORCMEM_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "--limit" in bad.stderr and bad.stderr.splitlines()[-1] == "full path"


def test_the_server_refuses_a_search_it_cannot_answer_as_the_command_would(profile, server) -> None:  # noqa: F811
    home, project, _ids = profile
    good = {"text": "car", "cwd": str(project), "limit": 8, "provenances": [], "explain": False, "json": False}
    reply, why = ask_search(str(home), good)
    assert why == "warm" and reply is not None and CAR[0] in reply[0] and reply[1] == ""
    unlimited, _why = ask_search(str(home), {**good, "limit": None})  # no --limit: the command's default
    assert unlimited == reply
    for change in (
        {"limit": 0},
        {"limit": 99},
        {"limit": True},
        {"cwd": "relative"},
        {"provenances": ["nowhere"]},
        {"explain": "yes"},
        {"text": 5},
    ):
        reply, why = ask_search(str(home), {**good, **change})
        assert reply is None and why == "warm server refused: not a search this server answers", change
    # Recall over the same socket is unchanged.
    answer, _path = ask(str(home), {"prompt": PARAPHRASE, "cwd": str(project), "session_id": "s"})
    assert answer is not None and CAR[0] in str(answer["text"])


def test_the_arguments_the_warm_path_takes(tmp_path: Path) -> None:
    cwd = os.getcwd()
    base = {"explain": False, "json": False, "cwd": cwd, "limit": None, "provenances": []}
    assert parse(["search", "car"]) == {**base, "text": "car"}
    assert parse(["search", "--json", "--limit=3", "--", "--car"]) == {
        **base,
        "json": True,
        "limit": 3,
        "text": "--car",
    }
    assert parse(["search", "-", "--provenance", "person", "--provenance=agent"]) == {
        **base,
        "text": "-",
        "provenances": ["person", "agent"],
    }
    assert parse(["--project", str(tmp_path), "search", "x"]) == {**base, "cwd": str(tmp_path), "text": "x"}
    for argv in (
        ["search"],
        ["search", "a", "b"],
        ["search", "--team", "x"],
        ["search", "--help"],
        ["search", "-h"],
        ["search", "x", "--limit"],
        ["search", "x", "--limit", "three"],
        ["--project", str(tmp_path / "missing"), "search", "x"],
        ["--project"],
        ["list", "search"],
    ):
        assert parse(argv) is None, argv


def test_the_request_is_json_without_the_json_module() -> None:
    import json as real_json

    from orcmem.host.warm import _json

    request = {
        "text": 'quote " back\\slash \n\t\x01 é \u2028 \udcff',
        "limit": None,
        "n": 3,
        "explain": True,
        "json": False,
        "provenances": ["person", "agent"],
    }
    assert real_json.loads(_json(request)) == request
