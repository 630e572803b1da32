"""`orcmem import sessions`: past Claude Code and Codex sessions found, estimated, distilled within a budget, resumed
after Ctrl-C, and undone. The sessions are written by the stand-in agents (tests/standin_agent.py) as the real CLIs
write them; the distiller is the same stand-in on PATH; orcmem runs as a real subprocess."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from orcmem.app.session_import import CHARS_PER_TOKEN, find_sessions
from orcmem.host.agent_homes import claude_folder_name, java_string_hash
from orcmem.host.workspace import locate
from orcmem.service.memory_service import MemoryService
from tests.helpers import wait_for

STANDIN = Path(__file__).with_name("standin_agent.py")
ALWAYS_BODY = "uv run pytest runs the suite with the project's locked dependencies."  # the stand-in says it each pass
# A `claude` that hangs on its second distillation call while $STANDIN_HANG exists, else is the stand-in.
HANGING = """#!{python}
import os, sys, time
if "-p" in sys.argv:
    with open(os.environ["STANDIN_CALLS"], "a") as log:
        log.write("call\\n")
    with open(os.environ["STANDIN_CALLS"]) as log:
        calls = len(log.read().splitlines())
    if calls == 2 and os.path.exists(os.environ["STANDIN_HANG"]):
        time.sleep(120)
os.execv(sys.executable, [sys.executable, {standin!r}, *sys.argv[1:]])
"""


@pytest.fixture
def env(tmp_path: Path, orcmem_home: Path) -> dict[str, str]:
    """A HOME of its own, the stand-in `claude` and `codex` first on PATH, memory on."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("claude", "codex"):
        script = bin_dir / name
        script.write_text(f"#!{sys.executable}\n" + STANDIN.read_text(encoding="utf-8"), encoding="utf-8")
        script.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    environment = {
        **os.environ,
        "HOME": str(home),
        "ORCMEM_HOME": str(orcmem_home),
        "PATH": f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "STANDIN_PROMPTS": str(tmp_path / "prompts.txt"),
    }
    environment.pop("CODEX_HOME", None)
    environment.pop("CLAUDE_CONFIG_DIR", None)
    service = MemoryService.open(orcmem_home, vectors=False)
    service.settings.set_enabled(True)
    service.close()
    return environment


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit, a linked worktree beside it (`repo-wt`) and a subfolder."""
    root = tmp_path / "repo"
    root.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], check=True)
    subprocess.run([*git, "worktree", "add", "-q", str(tmp_path / "repo-wt")], check=True)
    (root / "sub").mkdir()
    return root


def session(env: dict[str, str], cwd: Path, agent: str, session_id: str, *prompts: str) -> None:
    cwd.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [agent, "--session-id", session_id, *prompts], cwd=cwd, env=env, check=True, timeout=60, capture_output=True
    )


def orcmem(env: dict[str, str], cwd: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "orcmem", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == code, result.stdout + result.stderr
    return result


def prompts_sent(env: dict[str, str]) -> list[str]:
    """The distillation prompts the stand-in got (a contradiction judgement, the short second call, is not one)."""
    path = Path(env["STANDIN_PROMPTS"])
    sent = [p for p in path.read_text(encoding="utf-8").split("\n\f\n") if p.strip()] if path.exists() else []
    return [p for p in sent if "Run to distill:" in p]


def plan(env: dict[str, str], cwd: Path, *args: str) -> dict[str, object]:
    found: dict[str, object] = json.loads(orcmem(env, cwd, "import", "sessions", "--dry-run", "--json", *args).stdout)
    return found


def titles(home: Path, folder: Path) -> set[str]:
    service = MemoryService.open(home, vectors=False)
    try:
        project = service.project(locate(folder), create=False)
        return {memory.title for memory in service.list(project)} if project else set()
    finally:
        service.close()


def test_finds_the_sessions_of_the_root_every_worktree_and_subfolders_and_no_other_project(
    env: dict[str, str], repo: Path, tmp_path: Path
) -> None:
    session(env, repo, "claude", "root-claude", "prompt 1")
    session(env, tmp_path / "repo-wt", "claude", "worktree-claude", "prompt 2")
    session(env, repo / "sub", "claude", "sub-claude", "prompt 3")
    session(env, repo / "sub", "codex", "sub-codex", "prompt 4")
    # Another project whose folder name starts like this one's (`-…-repo-other`), and one elsewhere.
    session(env, tmp_path / "repo-other", "claude", "other-claude", "prompt 8")
    session(env, tmp_path / "elsewhere", "codex", "other-codex", "prompt 9")
    found = find_sessions(locate(repo), env)
    assert sorted(s.session_id for s in found) == ["root-claude", "sub-claude", "sub-codex", "worktree-claude"]
    # The same from the worktree: one project.
    assert {s.path for s in find_sessions(locate(tmp_path / "repo-wt"), env)} == {s.path for s in found}


def test_claude_config_dir_and_codex_home_are_where_the_sessions_are_looked_for(
    env: dict[str, str], repo: Path, tmp_path: Path
) -> None:
    session(env, repo, "claude", "s-claude", "prompt 1")
    session(env, repo, "codex", "s-codex", "prompt 2")
    home = Path(env["HOME"])
    shutil.move(home / ".claude", tmp_path / "claude-config")
    shutil.move(home / ".codex", tmp_path / "codex-home")
    assert find_sessions(locate(repo), env) == []
    moved = {**env, "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config"), "CODEX_HOME": str(tmp_path / "codex-home")}
    assert sorted(s.session_id for s in find_sessions(locate(repo), moved)) == ["s-claude", "s-codex"]


def test_a_long_folder_name_is_cut_and_hashed_as_claude_code_does() -> None:
    # Claude Code's hash is Java's String.hashCode: these two values are well known.
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("polygenelubricants") == -(2**31)
    folder = "/home/u/" + "deep.folder/" * 30
    name = claude_folder_name(folder)
    assert name.startswith(("-home-u-" + "deep-folder-" * 30)[:200] + "-")
    assert name.endswith("-" + _base36(abs(java_string_hash(folder)))) and len(name) > 201
    assert claude_folder_name("/home/u/my.app") == "-home-u-my-app"


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while number:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
    return out or "0"


def test_the_estimate_comes_first_and_matches_what_the_distiller_gets(env: dict[str, str], repo: Path) -> None:
    session(env, repo, "claude", "s1", "prompt 1 fix the build", "prompt 2 add a test")
    session(env, repo, "codex", "s2", "prompt 3 tidy the docs")
    estimate = plan(env, repo)
    assert (estimate["sessions"], estimate["runs"], estimate["nothing_to_learn"]) == (2, 2, 0)
    assert prompts_sent(env) == [] and titles(Path(env["ORCMEM_HOME"]), repo) == set()  # nothing distilled
    text = orcmem(env, repo, "import", "sessions", "--dry-run").stdout
    assert "To distil: 2 runs, about" in text and "prompt tokens" in text
    # Without --yes and without a terminal, nothing is distilled.
    refused = orcmem(env, repo, "import", "sessions", code=1)
    assert "pass --yes" in refused.stderr and prompts_sent(env) == []
    orcmem(env, repo, "import", "sessions", "--yes")
    sent = prompts_sent(env)
    assert len(sent) == 2
    actual = sum(len(prompt) for prompt in sent) / CHARS_PER_TOKEN
    assert abs(int(str(estimate["tokens"])) - actual) <= 0.05 * actual


def test_the_budget_and_the_order_choose_the_runs(env: dict[str, str], repo: Path) -> None:
    for n in (1, 2, 3):
        session(env, repo, "claude", f"s{n}", f"prompt {n}")
    everything = plan(env, repo)
    assert everything["runs"] == 3
    per_run = int(str(everything["tokens"])) // 3
    assert plan(env, repo, "--max-tokens", str(per_run - 5)) | {"files": []} == everything | {
        "runs": 0,
        "tokens": 0,
        "seconds": 0.0,
        "over_budget": 3,
        "files": [],
    }
    result = orcmem(env, repo, "import", "sessions", "--yes", "--max-runs", "1", "--order", "newest")
    assert "1 session left for a later import" not in result.stdout and "2 sessions left" in result.stdout
    [sent] = prompts_sent(env)
    assert "prompt 3" in sent and "prompt 1" not in sent
    orcmem(env, repo, "import", "sessions", "--yes", "--max-tokens", str(per_run * 2 + 20))
    assert ["prompt 1" in p for p in prompts_sent(env)] == [False, True, False]
    assert "prompt 2" in prompts_sent(env)[2]


def test_a_second_import_adds_nothing_and_undo_erases_only_what_the_import_created(
    env: dict[str, str], repo: Path
) -> None:
    home = Path(env["ORCMEM_HOME"])
    # What the user wrote before: the stand-in's lesson repeats it, which confirms it.
    orcmem(env, repo, "add", "--type", "command", "--title", "Run the tests with uv run pytest", "--body", ALWAYS_BODY)
    session(env, repo, "claude", "s1", "prompt 1", "prompt 2")
    session(env, repo, "codex", "s2", "prompt 3")
    before = titles(home, repo)
    result = orcmem(env, repo, "import", "sessions", "--yes")
    assert "Distilled 2 runs into 3 new memories" in result.stdout
    learned = titles(home, repo)
    assert learned == before | {"Lesson learned in turn 1", "Lesson learned in turn 2", "Lesson learned in turn 3"}
    again = orcmem(env, repo, "import", "sessions", "--yes")
    assert "2 sessions already imported" in again.stdout and "Nothing to distil." in again.stdout
    assert len(prompts_sent(env)) == 2 and titles(home, repo) == learned
    listed = json.loads(orcmem(env, repo, "import", "sessions", "--list", "--json").stdout)
    assert sorted(len(item["memory_ids"]) for item in listed) == [1, 2]
    assert {Path(item["session_file"]).name.endswith(("s1.jsonl", "s2.jsonl")) for item in listed} == {True}
    shown = orcmem(env, repo, "show", listed[0]["memory_ids"][0]).stdout
    assert f"imported from: {listed[0]['session_file']}" in shown
    undone = orcmem(env, repo, "import", "sessions", "--undo")
    assert "Erased 3 memories and 2 imported runs." in undone.stdout
    assert titles(home, repo) == before
    assert orcmem(env, repo, "import", "sessions", "--list").stdout.strip() == "Nothing imported into this project."
    assert plan(env, repo)["runs"] == 2  # undone: the sessions can be imported again


def test_a_session_the_hooks_saw_live_is_left_to_them(env: dict[str, str], repo: Path) -> None:
    session(env, repo, "claude", "live", "prompt 1")
    session(env, repo, "claude", "past", "prompt 2")
    [live] = [s for s in find_sessions(locate(repo), env) if s.session_id == "live"]
    orcmem(env, repo, "ingest", str(live.path))
    estimate = plan(env, repo)
    assert (estimate["runs"], estimate["learned_live"]) == (1, 1)


def test_ctrl_c_keeps_the_runs_done_and_a_rerun_resumes(env: dict[str, str], repo: Path, tmp_path: Path) -> None:
    for n in (1, 2, 3):
        session(env, repo, "claude", f"s{n}", f"prompt {n}")
    hang_bin = tmp_path / "hang-bin"
    hang_bin.mkdir()
    wrapper = hang_bin / "claude"
    wrapper.write_text(HANGING.format(python=sys.executable, standin=str(tmp_path / "bin" / "claude")))
    wrapper.chmod(0o755)
    calls, hang = tmp_path / "calls.txt", tmp_path / "hang"
    hang.touch()
    hanging = {
        **env,
        "PATH": f"{hang_bin}{os.pathsep}{env['PATH']}",
        "STANDIN_CALLS": str(calls),
        "STANDIN_HANG": str(hang),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "orcmem", "import", "sessions", "--yes"],
        cwd=repo,
        env=hanging,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: calls.exists() and len(calls.read_text().splitlines()) == 2, what="the second model call")
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert "stopped after 1 run of 3" in err and "Run `orcmem import sessions` again to resume" in err
    assert "Traceback" not in err
    service = MemoryService.open(Path(env["ORCMEM_HOME"]), vectors=False)
    try:
        states = sorted(job.state for job, _run in service.store.jobs.list(None, 10))
    finally:
        service.close()
    assert states == ["done", "queued"]  # the interrupted run went back; the third was never read
    assert [("prompt 1" in p) for p in prompts_sent(env)] == [True]
    hang.unlink()
    resumed = orcmem(env, repo, "import", "sessions", "--yes", "--json")
    report = json.loads(resumed.stdout)
    assert (report["runs"], report["already_learned"], report["timed_here"]) == (2, 1, True)
    assert (report["distilled"], report["new_memories"], report["failed"]) == (2, 2, 0)
    sent = prompts_sent(env)
    assert [n for n in (1, 2, 3) for p in sent if f"prompt {n}" in p] == [1, 2, 3]  # each session distilled once


def test_a_project_whose_folder_name_is_cut_is_found_under_either_hash(env: dict[str, str], tmp_path: Path) -> None:
    deep = tmp_path / ("long-folder-name-" * 8) / ("and-more-" * 8) / "project"
    twin = deep.with_name("project-twin")  # the same first 200 characters of the folder name
    projects = Path(env["HOME"]) / ".claude" / "projects"
    for folder, sid in ((deep, "mine"), (twin, "theirs")):
        folder.mkdir(parents=True)
        # The stand-in writes under the uncut name, too long for a file name here: write it where Claude Code does.
        session(env, tmp_path / "short", "claude", sid, "prompt 1")
        [written] = projects.glob(f"*/{sid}.jsonl")
        target = projects / claude_folder_name(str(folder)) / f"{sid}.jsonl"
        target.parent.mkdir(exist_ok=True)
        target.write_text(written.read_text().replace(str(tmp_path / "short"), str(folder)))
        written.unlink()
    assert len(claude_folder_name(str(deep))) < len(str(deep))
    assert [s.session_id for s in find_sessions(locate(deep), env)] == ["mine"]
    # Another Claude Code version hashed the path differently: the cut name and the cwd still find it.
    own = projects / claude_folder_name(str(deep))
    own.rename(projects / (claude_folder_name(str(deep))[:200] + "-otherhash"))
    assert [s.session_id for s in find_sessions(locate(deep), env)] == ["mine"]
