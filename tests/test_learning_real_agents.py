"""Learning end to end with stand-ins that run sessions as the real `claude` and `codex` do (tests/standin_agent.py).

Each test wires the agent with `orcmem setup`, then drives sessions whose hooks the stand-in runs from the files
setup wrote, in the real order: Claude Code's Stop before the turn's last line, its SessionEnd after; an idle pass
while the session stays open; a pass at the session's end; a resume. Real hooks, real background workers, the
stand-in as the distilling CLI on PATH.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from orcmem.host.workspace import locate
from orcmem.service.memory_service import MemoryService
from orcmem.worker.control import stop_workers
from tests.helpers import wait_for

STANDIN = Path(__file__).with_name("standin_agent.py")
ALWAYS = "Run the tests with uv run pytest"


@pytest.fixture
def agent_env(tmp_path: Path, orcmem_home: Path) -> Iterator[dict[str, str]]:
    """A HOME of its own, stand-in `claude` and `codex` first on PATH, and orcmem's console script beside them."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("claude", "codex"):
        script = bin_dir / name
        script.write_text(f"#!{sys.executable}\n" + STANDIN.read_text(encoding="utf-8"), encoding="utf-8")
        script.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "ORCMEM_HOME": str(orcmem_home),
        "PATH": f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "STANDIN_PROMPTS": str(tmp_path / "prompts.txt"),
    }
    env.pop("CODEX_HOME", None)
    yield env
    stop_workers(orcmem_home)


def orcmem(env: dict[str, str], cwd: Path, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "orcmem", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def agent(env: dict[str, str], cwd: Path, name: str, *args: str) -> None:
    subprocess.run([name, *args], cwd=cwd, env=env, check=True, timeout=120, capture_output=True)


def prompts_sent(env: dict[str, str]) -> list[str]:
    """The distillation prompts the stand-in got (a contradiction judgement, the short second call, is not one)."""
    path = Path(env["STANDIN_PROMPTS"])
    sent = path.read_text(encoding="utf-8").split("\n\f\n") if path.exists() else []
    return [p for p in sent if "Run to distill:" in p]


def settled(home: Path, passes: int, env: dict[str, str]) -> bool:
    """`passes` model calls made, and no job waiting or running."""
    service = MemoryService.open(home, vectors=False)
    try:
        busy = any(job.state in ("queued", "running") for job, _run in service.store.jobs.list(None, 100))
    finally:
        service.close()
    return len(prompts_sent(env)) >= passes and not busy


def new_events(prompt: str) -> str:
    return prompt.split("Run to distill:", 1)[1]


@pytest.mark.parametrize("name", ["claude", "codex"])
def test_each_thing_is_learned_once_across_idle_passes_the_end_and_a_resume(
    name: str, agent_env: dict[str, str], project_dir: Path, orcmem_home: Path
) -> None:
    setup = ["setup", "claude", "--scope", "project"] if name == "claude" else ["setup", "codex"]
    orcmem(agent_env, project_dir, *setup)
    orcmem(agent_env, project_dir, "memory", "on")
    orcmem(agent_env, project_dir, "memory", "idle", "0.02")  # a session left open is distilled after 1.2 s

    # Turn 1, and the person stops typing: the Stop hook's worker distils it once the session is idle.
    agent(agent_env, project_dir, name, "--session-id", "S1", "--open", "prompt 1")
    wait_for(lambda: settled(orcmem_home, 1, agent_env), what="the idle pass")
    # Turn 2, then the session ends: one pass for what is new.
    agent(agent_env, project_dir, name, "--session-id", "S1", "prompt 2")
    wait_for(lambda: settled(orcmem_home, 2, agent_env), what="the pass at the session's end")
    # Another idle sweep finds nothing new: no call.
    orcmem(agent_env, project_dir, "worker", "--no-linger")
    # The session is resumed for a third turn, and ends again.
    agent(agent_env, project_dir, name, "--resume", "S1", "prompt 3")
    wait_for(lambda: settled(orcmem_home, 3, agent_env), what="the pass after the resume")

    sent = prompts_sent(agent_env)
    assert len(sent) == 3  # one model call per pass
    for turn, prompt in enumerate(sent, start=1):
        others = {f"prompt {n}" for n in (1, 2, 3) if n != turn}
        assert f"prompt {turn}" in new_events(prompt)
        assert not any(other in new_events(prompt) for other in others), prompt  # only what is new
    assert "Opening request: prompt 1" in sent[2]

    service = MemoryService.open(orcmem_home, vectors=False)
    try:
        project = service.project(locate(project_dir), create=False)
        memories = {m.title: m for m in service.list(project)}
        assert sorted(memories) == sorted([ALWAYS] + [f"Lesson learned in turn {n}" for n in (1, 2, 3)])
        assert memories[ALWAYS].evidence_count == 1  # one run said it three times: one piece of evidence
        [(job, run)] = service.store.jobs.list(None)
        assert (run.turns, run.state, run.session_id, job.state) == (3, "ended", "S1", "done")
        assert json.loads(run.agent_command)[-1].endswith(f"/bin/{name}")  # the agent running the hooks, kept
        assert service.context.brief(project).count(ALWAYS) == 1
    finally:
        service.close()


def test_a_hook_whose_ingest_fails_registers_no_project(agent_env: dict[str, str], tmp_path: Path, orcmem_home: Path):
    orcmem(agent_env, tmp_path, "memory", "on")
    shadow = tmp_path / "shadow"
    shadow.write_text("root:*:19000:0:99999:7:::\n")
    targets = [str(shadow)] + (["/etc/shadow"] if Path("/etc/shadow").exists() else [])
    for target in targets:
        payload = json.dumps({"session_id": "s", "transcript_path": target, "cwd": "/"})
        result = subprocess.run(
            [sys.executable, "-m", "orcmem", "hook", "stop"],
            input=payload,
            text=True,
            capture_output=True,
            env=agent_env,
        )
        assert (result.returncode, result.stdout) == (0, "{}")
    assert orcmem(agent_env, tmp_path, "projects").startswith("No projects yet")
    assert "neither a Claude Code nor a Codex transcript" in (orcmem_home / "logs" / "hooks.log").read_text()
