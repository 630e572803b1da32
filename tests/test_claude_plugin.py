"""The Claude Code plugin in plugin/ and its marketplace in .claude-plugin/: checked and installed by the real
Claude Code CLI, its hooks the same as `orcmem setup claude` writes, its launcher failing open."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from orcmem.setup_agents.claude import claude_hook_specs
from tests.test_real_agent_clis import cli

REPO = Path(__file__).resolve().parents[1]
PLUGIN = REPO / "plugin"
LAUNCHER = PLUGIN / "bin" / "orcmem-run"


def _claude(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(cli("claude")), *args], env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def claude_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "NO_COLOR": "1"}
    env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
    return env


def test_the_real_cli_validates_both_manifests_strictly(claude_env: dict[str, str]) -> None:
    for target in (PLUGIN, REPO):
        result = _claude(claude_env, "plugin", "validate", "--strict", str(target))
        assert result.returncode == 0, result.stdout + result.stderr
        assert "Validation passed" in result.stdout


def test_the_plugin_installs_from_the_repository_with_its_hooks_and_server(claude_env: dict[str, str]) -> None:
    added = _claude(claude_env, "plugin", "marketplace", "add", str(REPO))
    assert added.returncode == 0, added.stdout + added.stderr
    installed = _claude(claude_env, "plugin", "install", "orcmem@orcmem")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    [plugin] = json.loads(_claude(claude_env, "plugin", "list", "--json").stdout)
    assert plugin["id"] == "orcmem@orcmem" and plugin["enabled"] and plugin["version"] == _version()
    assert plugin["mcpServers"]["orcmem"]["args"] == ["mcp"]
    assert os.access(Path(plugin["installPath"]) / "bin" / "orcmem-run", os.X_OK)
    details = _claude(claude_env, "plugin", "details", "orcmem@orcmem").stdout
    assert re.search(r"Hooks \(5\)\s+SessionStart, UserPromptSubmit, PreToolUse, Stop, SessionEnd", details)


def _version() -> str:
    return str(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"])


def test_versions_agree() -> None:
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    assert manifest["version"] == market["plugins"][0]["version"] == _version()


def test_the_plugin_hooks_are_the_ones_setup_writes() -> None:
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    for spec in claude_hook_specs(["/bin/orcmem"]):
        [group] = hooks[spec.event]
        [handler] = group["hooks"]
        name = spec.handler["command"].removeprefix("/bin/orcmem ")
        assert handler["command"] == f'"${{CLAUDE_PLUGIN_ROOT}}/bin/orcmem-run" {name}'
        assert {k: v for k, v in handler.items() if k != "command"} == {
            k: v for k, v in spec.handler.items() if k != "command"
        }
        # Plugin tools are named mcp__plugin_<plugin>_<server>__<tool>.
        expected = None if spec.matcher is None else "mcp__plugin_orcmem_orcmem__.*"
        assert group.get("matcher") == expected


def test_the_launcher_runs_orcmem_from_path(tmp_path: Path, project_dir: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "orcmem").symlink_to(shutil.which("orcmem", path=str(Path(sys.executable).parent)) or "")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin"}
    subprocess.run([bin_dir / "orcmem", "memory", "on"], env=env, check=True, capture_output=True)
    subprocess.run(
        [bin_dir / "orcmem", "--project", str(project_dir), "add", "--type", "command", "--title", "Run scripts/check"]
        + ["--body", "It runs the linters and the tests."],
        env=env,
        check=True,
        capture_output=True,
    )
    payload = {"hook_event_name": "UserPromptSubmit", "cwd": str(project_dir), "prompt": "how do I run scripts/check?"}
    result = subprocess.run(
        [LAUNCHER, "hook", "prompt"], input=json.dumps(payload), env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0 and "Run scripts/check" in result.stdout


def test_without_orcmem_a_hook_does_nothing_and_the_server_says_how_to_install(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    env.pop("ORCMEM_BIN", None)
    hook = subprocess.run([LAUNCHER, "hook", "prompt"], input="{}", env=env, capture_output=True, text=True)
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", "")
    server = subprocess.run([LAUNCHER, "mcp"], input="", env=env, capture_output=True, text=True)
    assert server.returncode == 1 and "pipx install 'orcmem[model]'" in server.stderr
