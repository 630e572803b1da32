"""The Claude Code plugin in plugin/ and its marketplace in .claude-plugin/: checked and installed by the real
Claude Code CLI, its hooks the same as `orcmem setup claude` writes, its launcher failing open."""

from __future__ import annotations

import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from orcmem.host import plugin_install as plugin_install_module
from orcmem.host.plugin_install import LOCK, READY
from orcmem.setup_agents.claude import claude_hook_specs
from orcmem.setup_agents.entries import pre_tool_matcher
from tests.fakes import loopback_http
from tests.helpers import WHEELHOUSE, checkout_wheelhouse, wait_for
from tests.model_apis import AnthropicMessages
from tests.test_real_agent_clis import cli, run_claude

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
        expected = None if spec.matcher is None else pre_tool_matcher("mcp__plugin_orcmem_orcmem__.*")
        assert group.get("matcher") == expected


def _launch(args: list[str], env: dict[str, str], payload: str = "{}") -> subprocess.CompletedProcess[str]:
    return subprocess.run([LAUNCHER, *args], input=payload, env=env, capture_output=True, text=True, timeout=60)


def _prompt_payload(project_dir: Path) -> str:
    return json.dumps(
        {"hook_event_name": "UserPromptSubmit", "cwd": str(project_dir), "prompt": "how do I run scripts/check?"}
    )


def _with_a_memory(env: dict[str, str], project_dir: Path) -> None:
    orcmem = shutil.which("orcmem", path=str(Path(sys.executable).parent)) or ""
    subprocess.run([orcmem, "memory", "on"], env=env, check=True, capture_output=True)
    subprocess.run(
        [orcmem, "--project", str(project_dir), "add", "--type", "command", "--title", "Run scripts/check"]
        + ["--body", "It runs the linters and the tests."],
        env=env,
        check=True,
        capture_output=True,
    )


def test_the_launcher_runs_orcmem_bin_when_set(tmp_path: Path, project_dir: Path) -> None:
    env = {**os.environ, "ORCMEM_BIN": shutil.which("orcmem", path=str(Path(sys.executable).parent)) or ""}
    env["CLAUDE_PLUGIN_DATA"] = str(tmp_path / "data")
    _with_a_memory(env, project_dir)
    result = _launch(["hook", "prompt"], env, _prompt_payload(project_dir))
    assert result.returncode == 0 and "Run scripts/check" in result.stdout
    assert not (tmp_path / "data").exists()  # nothing installed: ORCMEM_BIN is the user's own orcmem


def test_the_launcher_runs_the_private_install_once_it_is_ready(tmp_path: Path, project_dir: Path) -> None:
    """A venv marked ready under the plugin's data folder is what every command runs (no installer, no PATH)."""
    data = tmp_path / "data"
    venv_bin = data / f"venv-{_version()}" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "orcmem").symlink_to(shutil.which("orcmem", path=str(Path(sys.executable).parent)) or "")
    env = {**os.environ, "PATH": "/usr/bin:/bin", "CLAUDE_PLUGIN_DATA": str(data)}
    env.pop("ORCMEM_BIN", None)
    _with_a_memory(env | {"PATH": os.environ["PATH"]}, project_dir)
    (venv_bin.parent / READY).write_text(_version())
    result = _launch(["hook", "prompt"], env, _prompt_payload(project_dir))
    assert result.returncode == 0 and "Run scripts/check" in result.stdout


def _plain_env(data: Path, wheels: Path) -> dict[str, str]:
    """No ORCMEM_BIN, and pip pointed at a folder of wheels (empty: the install fails fast, offline)."""
    env = {**os.environ, "CLAUDE_PLUGIN_DATA": str(data), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
    env.pop("ORCMEM_BIN", None)
    return env


def _wait_unlocked(data: Path) -> None:
    wait_for(lambda: not (data / LOCK).exists(), timeout=120)


def test_the_first_hook_starts_the_install_says_so_and_a_failure_waits_ten_minutes(tmp_path: Path) -> None:
    """The real installer against an empty wheel folder: the hook exits 0 with nothing for the agent, the install
    runs in the background and fails, the failure is logged, said once, reported by doctor, and not tried again for
    10 minutes."""
    data, wheels = tmp_path / "data", tmp_path / "wheels"
    wheels.mkdir()
    env = _plain_env(data, wheels)
    first = _launch(["hook", "session-start"], env)
    assert first.returncode == 0 and (data / LOCK).is_dir()  # the install runs on, in the background
    assert "being installed from this plugin's copy" in json.loads(first.stdout)["systemMessage"]

    _wait_unlocked(data)
    log = (data / "install.log").read_text()
    assert log.count("installing orcmem") == 1 and "the install failed" in log
    assert not (data / f"venv-{_version()}" / READY).exists()
    failed = [_launch(["hook", "prompt"], env) for _ in range(2)]
    assert [r.returncode for r in failed] == [0, 0]
    assert "did not install" in json.loads(failed[0].stdout)["systemMessage"] and failed[1].stdout == ""
    assert not (data / LOCK).exists() and (data / "install.log").read_text() == log  # not retried yet
    server = _launch(["mcp"], env, "")
    assert server.returncode == 1 and "did not install" in server.stderr and "install.log" in server.stderr
    report = _doctor(env)
    assert report["detail"].startswith("the install failed at") and str(data / "install.log") in report["detail"]

    (data / "install-failed").write_text(str(time.time() - 601))  # ten minutes later
    assert _launch(["hook", "session-end"], env).returncode == 0
    _wait_unlocked(data)
    assert (data / "install.log").read_text().count("installing orcmem") == 2


def test_one_install_at_a_time_and_a_dead_installers_lock_is_taken_over(tmp_path: Path) -> None:
    """While an installer holds the lock, hooks exit 0 and start nothing, the server says it is installing, and
    doctor says so; once that process is gone, the next hook starts the install."""
    data, wheels = tmp_path / "data", tmp_path / "wheels"
    wheels.mkdir()
    env = _plain_env(data, wheels)
    installer = subprocess.Popen(["sleep", "120"])  # stands for an installer at work: a live pid in the lock
    try:
        (data / LOCK).mkdir(parents=True)
        (data / LOCK / "pid").write_text(str(installer.pid))
        hooks = [_launch(["hook", name], env) for name in ("session-start", "prompt", "stop", "session-start")]
        assert [r.returncode for r in hooks] == [0, 0, 0, 0]
        said = [r.stdout for r in hooks if r.stdout]
        assert len(said) == 1 and "being installed" in json.loads(said[0])["systemMessage"]  # once
        assert not (data / "install.log").exists()  # no second install
        server = _launch(["mcp"], env, "")
        assert server.returncode == 1 and "being installed" in server.stderr
        assert _doctor(env)["detail"].startswith("installing in the background")
    finally:
        installer.kill()
        installer.wait()
    assert _launch(["hook", "stop"], env).returncode == 0
    _wait_unlocked(data)
    assert (data / "install.log").read_text().count("installing orcmem") == 1


def _doctor(env: dict[str, str]) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-m", "orcmem", "doctor", "--json"], env=env, capture_output=True, text=True, timeout=120
    )
    [check] = [item for item in json.loads(result.stdout) if item["check"] == "claude plugin"]
    return dict(check)


def test_the_installer_and_doctor_name_the_same_files() -> None:
    script = runpy.run_path(str(PLUGIN / "bin" / "orcmem-install"), run_name="orcmem_install")
    assert (script["LOCK"], script["LOG"], script["FAILED"], script["READY"], script["RETRY_AFTER_S"]) == (
        LOCK,
        plugin_install_module.LOG,
        plugin_install_module.FAILED,
        READY,
        plugin_install_module.RETRY_AFTER_S,
    )


def test_the_plugin_carries_the_source_it_installs() -> None:
    package = PLUGIN / "package"
    for name in ("src", "pyproject.toml", "README.md", "LICENSE"):
        assert (package / name).resolve() == (REPO / name).resolve()
    assert (package / "src" / "orcmem" / "entry.py").is_file()


def test_the_claude_cli_copies_the_linked_source_into_its_plugin_cache(claude_env: dict[str, str]) -> None:
    """The plugin's installed copy holds the files its links point at (a marketplace cloned from git runs that copy)."""
    assert _claude(claude_env, "plugin", "marketplace", "add", str(REPO)).returncode == 0
    assert _claude(claude_env, "plugin", "install", "orcmem@orcmem").returncode == 0
    cache = Path(claude_env["HOME"]) / ".claude" / "plugins" / "cache" / "orcmem" / "orcmem" / _version()
    entry = cache / "package" / "src" / "orcmem" / "entry.py"
    assert entry.is_file() and not (cache / "package" / "src").is_symlink()
    assert entry.read_text() == (REPO / "src" / "orcmem" / "entry.py").read_text()
    assert (cache / "package" / "pyproject.toml").read_text() == (REPO / "pyproject.toml").read_text()


def test_the_launcher_and_the_manifest_name_the_same_version() -> None:
    assert re.search(r"^version=(\S+)", LAUNCHER.read_text(), re.M)[1] == _version()  # type: ignore[index]


def test_no_file_advises_installing_orcmem_from_a_package_index() -> None:
    """orcmem is on no index: every install advice points at the checkout (or names a dependency itself)."""
    advice = re.compile(r"(pip|pipx|uv tool|uv pip) install( +-\S+)* +['\"]?orcmem(\[[a-z,]+\])?['\"]?(?![\w/.-])")
    found = []
    for folder in ("src", "docs", "plugin", "scripts", "bench"):
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and path.suffix in {".py", ".md", ".json", ""} and "package" not in path.parts:
                found += [f"{path}: {m.group(0)}" for m in advice.finditer(path.read_text(errors="replace"))]
    found += [f"README.md: {m.group(0)}" for m in advice.finditer((REPO / "README.md").read_text())]
    assert found == []


def plugin_session_env(claude_env: dict[str, str], orcmem_home: Path, url: str) -> dict[str, str]:
    """Claude Code against the loopback model, pip offline on the wheelhouse, no orcmem but the plugin's own."""
    env = {**claude_env, "ORCMEM_HOME": str(orcmem_home), "ANTHROPIC_BASE_URL": url}
    env |= {"ANTHROPIC_API_KEY": "sk-ant-test-not-a-key", "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(WHEELHOUSE)}
    for name in ("ORCMEM_BIN", "PYTHONPATH", "CLAUDECODE", "ANTHROPIC_AUTH_TOKEN", "PIP_INDEX_URL"):
        env.pop(name, None)  # PYTHONPATH: the private install must run its own copy
    return env


@pytest.mark.long
def test_a_real_claude_code_session_gets_the_brief_from_the_plugins_own_install(
    claude_env: dict[str, str], orcmem_home: Path, project_dir: Path
) -> None:
    """Marketplace add from this checkout, plugin install, a first session that starts the install (and is not
    held up by it), then a session whose first model request carries the brief."""
    claude = cli("claude")
    checkout_wheelhouse()
    AnthropicMessages.requests.clear()
    with loopback_http(AnthropicMessages) as url:
        env = plugin_session_env(claude_env, orcmem_home, url)
        assert _claude(env, "plugin", "marketplace", "add", str(REPO)).returncode == 0
        assert _claude(env, "plugin", "install", "orcmem@orcmem").returncode == 0
        first = run_claude(claude, "Say hello with echo", project_dir, env)
        assert first.returncode == 0, first.stderr
        data = Path(env["HOME"]) / ".claude" / "plugins" / "data" / "orcmem-orcmem"
        assert (data / "install.log").exists()
        venv = data / f"venv-{_version()}"
        wait_for(lambda: (venv / READY).exists() or (data / "install-failed").exists(), timeout=900)
        assert (venv / READY).exists(), (data / "install.log").read_text()
        added = subprocess.run(
            [venv / "bin" / "orcmem", "--project", str(project_dir), "add", "--type", "lesson"]
            + ["--title", "Vitest needs the forks pool", "--body", "threads crash on CI"],
            env=env,
            capture_output=True,
            text=True,
        )
        assert added.returncode == 0, added.stderr  # memory was turned on by the install
        AnthropicMessages.requests.clear()
        second = run_claude(claude, "Say hello with echo", project_dir, env)
        assert second.returncode == 0, second.stderr
    asked = [r for r in AnthropicMessages.requests if r.get("messages")]
    assert 'kind=\\"brief\\"' in json.dumps(asked[0]) and "Vitest needs the forks pool" in json.dumps(asked[0])
