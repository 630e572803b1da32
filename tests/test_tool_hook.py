"""Memory when the agent acts: the PreToolUse hook on file and shell tools, with Claude Code's own payloads, on a
real git repository and store; the direct path and the warm server's; once per session; stale and uncited silent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from orcmem.agent_context.tool_recall import command_terms, command_text, tool_files
from orcmem.host.workspace import locate
from orcmem.models.types import NewMemory, Project, Source
from orcmem.service.memory_service import MemoryService
from tests.test_freshness import APP, git, repo  # noqa: F401 - the fixture
from tests.test_hooks import PAYLOADS, run_hook


def read_call(root: Path, path: str, session: str = "s1", tool: str = "Read") -> dict:
    """Claude Code's PreToolUse payload (its documented Bash example) for a file tool on `path`."""
    return {
        **PAYLOADS["PreToolUse_Bash"],
        "cwd": str(root),
        "session_id": session,
        "tool_name": tool,
        "tool_input": {"file_path": path},
    }


def bash_call(root: Path, command: str, session: str = "s1") -> dict:
    data = dict(PAYLOADS["PreToolUse_Bash"])
    data.update(cwd=str(root), session_id=session, tool_input={**data["tool_input"], "command": command})
    return data


def context(output: str) -> str:
    return json.loads(output)["hookSpecificOutput"]["additionalContext"] if output else ""


@pytest.fixture
def cited(service: MemoryService, repo: Path) -> tuple[Project, str]:  # noqa: F811
    project = service.project(locate(repo))
    assert project is not None
    memory = service.record(
        project,
        NewMemory(
            type="lesson",
            title="Config loading",
            body="`load_config` reads the env first",
            source=Source.USER,
            files=("src/app.py",),
        ),
    ).memory
    service.record(
        project,
        NewMemory(
            type="command", title="Release", body="run `npm publish --tag next`, never latest", source=Source.USER
        ),
    )
    service.check_freshness(project)
    return project, memory.id


def test_parsing_tool_calls() -> None:
    assert tool_files("Read", {"file_path": "/a/b.py"}) == ["/a/b.py"]
    assert tool_files(
        "apply_patch", {"command": "*** Begin Patch\n*** Update File: src/x.py\n@@\n*** Add File: y.md\n"}
    ) == ["src/x.py", "y.md"]
    assert tool_files("Bash", {"command": "cat x"}) == []
    assert command_terms("FOO=1 sudo git rebase -i main && ls -la | npm test") == [["git", "rebase"], ["npm", "test"]]
    assert command_terms("cat README.md") == []


def test_parsing_opencodes_tool_calls() -> None:
    """OpenCode names its tools in lower case and a file by `filePath` (1.18: read, edit, write, bash)."""
    for tool in ("read", "edit", "write"):
        assert tool_files(tool, {"filePath": "/a/b.py", "content": "x"}) == ["/a/b.py"]
    assert command_text("bash", {"command": "npm publish", "description": "publish"}) == "npm publish"
    assert tool_files("glob", {"pattern": "**/*.py", "path": "/a"}) == []


def test_a_cited_file_brings_its_memory_once_per_session(cited, repo: Path) -> None:  # noqa: F811
    out = run_hook("pre-tool-use", read_call(repo, str(repo / "src" / "app.py")))
    assert json.loads(out)["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    assert '<orcmem-context kind="recall"' in context(out) and "Config loading" in context(out)
    assert "Release" not in context(out)
    assert run_hook("pre-tool-use", read_call(repo, "src/app.py", tool="Edit")) == ""  # given already
    assert "Config loading" in context(run_hook("pre-tool-use", read_call(repo, "src/app.py", session="s2")))


def test_an_uncited_file_and_other_tools_are_silent(cited, repo: Path) -> None:  # noqa: F811
    assert run_hook("pre-tool-use", read_call(repo, str(repo / "README.md"))) == ""
    assert run_hook("pre-tool-use", read_call(repo, str(repo / "src" / "app.py"), tool="Glob")) == ""
    assert run_hook("pre-tool-use", bash_call(repo, "ls src && cat src/app.py")) == ""


def test_a_command_brings_the_memory_about_it(cited, repo: Path) -> None:  # noqa: F811
    assert "Release" in context(run_hook("pre-tool-use", bash_call(repo, "npm publish")))
    assert run_hook("pre-tool-use", bash_call(repo, "npm install", session="s3")) == ""


def test_a_stale_memory_is_not_shown(service: MemoryService, cited, repo: Path) -> None:  # noqa: F811
    project, _ = cited
    (repo / "src" / "app.py").write_text(APP.replace("load_config", "read_settings"))
    assert service.check_freshness(project).stale
    assert run_hook("pre-tool-use", read_call(repo, "src/app.py")) == ""


def test_the_warm_server_answers_and_the_direct_path_stands_in(
    service: MemoryService,
    cited,
    repo: Path,  # noqa: F811
    orcmem_home: Path,
) -> None:
    from orcmem.mcp_server.recall_socket import RecallSocket, recall_answer

    class Tools:
        memory = service

    short = Path(tempfile.mkdtemp(dir="/tmp", prefix="om-"))
    shutil.rmtree(short)
    shutil.copytree(orcmem_home, short)
    server = RecallSocket(short, recall_answer(short, lambda: Tools()))  # type: ignore[arg-type, return-value]
    server.start()
    assert server.holding.wait(5)
    try:

        def hook(data: dict) -> str:
            done = subprocess.run(
                [sys.executable, "-m", "orcmem", "hook", "pre-tool-use"],
                input=json.dumps(data),
                capture_output=True,
                text=True,
                timeout=60,
                env={
                    "ORCMEM_HOME": str(short),
                    "PATH": "/usr/bin:/bin",
                    "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
                },
            )
            assert done.returncode == 0 and done.stderr == ""
            return done.stdout

        assert "Config loading" in context(hook(read_call(repo, "src/app.py", session="w")))
        assert hook(read_call(repo, "src/app.py", session="w")) == ""
        assert hook(read_call(repo, "README.md", session="w")) == ""
        log = (short / "logs" / "recall.log").read_text()
        assert "tool, warm" in log and "tool, direct" not in log
    finally:
        server.close()
    try:
        out = subprocess.run(
            [sys.executable, "-m", "orcmem", "hook", "pre-tool-use"],
            input=json.dumps(read_call(repo, "src/app.py", session="d")),
            capture_output=True,
            text=True,
            timeout=60,
            env={"ORCMEM_HOME": str(short), "PATH": "/usr/bin:/bin", "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
        )
        assert "Config loading" in context(out.stdout)
        assert "tool, direct (no warm server)" in (short / "logs" / "recall.log").read_text()
    finally:
        shutil.rmtree(short, ignore_errors=True)


def test_a_broken_store_prints_nothing(orcmem_home: Path, repo: Path) -> None:  # noqa: F811
    orcmem_home.mkdir(parents=True, exist_ok=True)
    (orcmem_home / "orcmem.db").write_bytes(b"definitely not sqlite" * 100)
    done = subprocess.run(
        [sys.executable, "-m", "orcmem", "hook", "pre-tool-use"],
        input=json.dumps(read_call(repo, "src/app.py")),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_the_warm_path_of_the_tool_hook_imports_almost_nothing(tmp_path: Path) -> None:
    """Answered by a warm server, `orcmem hook pre-tool-use` loads no JSON, regex, socket module or database."""
    from tests.test_hooks import WARM_PATH_MODULES, run_warm_hook

    output, loaded, heavy, stderr = run_warm_hook(
        "pre-tool-use",
        read_call(tmp_path, "a.py"),
        lambda request: {"text": f"about {request['tool_call']['tool_name']}", "path": "warm"},
    )
    assert context(output) == "about Read", stderr
    assert loaded == WARM_PATH_MODULES and heavy == "", stderr  # the prompt hook's first step
