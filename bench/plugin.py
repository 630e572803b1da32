"""What the Claude Code plugin's hook command costs against the one `orcmem setup claude` writes.

The plugin runs `plugin/bin/orcmem-run hook prompt` (a POSIX shell that finds orcmem on PATH and execs it); setup
writes the absolute path of orcmem. Both answer the same prompt over a profile of 10,000 memories, in turn.
`python -m bench.plugin` prints the figures; `python -m bench` puts them in docs/benchmarks.md.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.common import Latency, latency, profile_with_memories
from bench.learning import _wall
from bench.search import queries

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "plugin" / "bin" / "orcmem-run"


@dataclass(frozen=True)
class PluginResult:
    """p50s of the prompt hook both ways, and the median of their paired differences."""

    setup_command: Latency
    plugin_command: Latency
    extra_ms: float  # median over pairs of (plugin - setup)


def run(samples: int = 40, work: Path | None = None) -> PluginResult:
    """Time the prompt hook through both commands, alternating, over one profile."""
    work = work or Path(tempfile.mkdtemp(prefix="orcmem-bench-plugin-"))
    home, project = work / "home", work / "project"
    profile_with_memories(home, project, 10_000)
    orcmem = shutil.which("orcmem", path=str(Path(sys.executable).parent)) or "orcmem"
    env = {**os.environ, "ORCMEM_HOME": str(home), "PATH": f"{Path(orcmem).parent}{os.pathsep}/usr/bin:/bin"}
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
    return PluginResult(latency(direct), latency(plugin), extra[len(extra) // 2])


def main() -> None:
    """Print the figures."""
    print("\n".join(render(run())))


def render(result: PluginResult) -> list[str]:
    """The report section."""
    return [
        "## The Claude Code plugin's hook command",
        "",
        "`orcmem hook prompt` over 10,000 memories, the way `orcmem setup claude` writes it (the absolute path of",
        "orcmem) and the way the plugin runs it (`plugin/bin/orcmem-run`, a POSIX shell that finds orcmem on PATH),",
        f"alternating, {result.setup_command.samples} prompts each. `python -m bench.plugin`.",
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
