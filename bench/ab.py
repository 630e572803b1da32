"""One checkout's figures for a before-and-after table on one machine: `PYTHONPATH=<checkout>/src:<checkout>
.venv-test/bin/python -m bench.ab NAME [SIZE ...]` prints a JSON line of record rates, search p50s, hook p50s, the
ingest parts and the MCP server's start, measured by that checkout's own `bench.search`, `bench.learning` and
`bench.agents` (docs/benchmarks.md, Before and after). SIZE defaults to 1000 and 10000; a lone 0 skips search."""

from __future__ import annotations

import json
import sys
import time

from bench import agents, learning, search


def main(name: str, sizes: list[int]) -> None:
    """Measure and print `{name: figures}`."""
    started = time.time()
    figures: dict[str, float] = {}
    results, _rates = search.run(sizes) if sizes else ([], [])
    for result in results:
        figures[f"record_{result.size}"] = result.record_per_s
        figures[f"fused_p50_{result.size}"] = result.fused.p50
        figures[f"words_p50_{result.size}"] = result.words.p50
    hooks = learning.run()
    figures["prompt_ratio"] = hooks.hook_prompt_10k.p50 / hooks.python_bare.p50
    figures["floor_p50"] = hooks.python_bare.p50
    figures["session_end_p50"] = hooks.hook_session_end.p50
    figures["session_start_p50"] = hooks.hook_session_start_10k.p50
    figures["pre_tool_use_p50"] = hooks.hook_pre_tool_use.p50
    figures["stop_p50"] = hooks.hook_stop.p50
    figures["ingest_parse_ms"] = hooks.parse_ms
    figures["ingest_store_ms"] = hooks.store_ms
    figures["ingest_digest_ms"] = hooks.digest_ms
    server = agents.run()
    figures["mcp_initialize_p50"] = server.initialize.p50
    figures["mcp_tools_ready_p50"] = server.tools_ready.p50
    figures["seconds"] = time.time() - started
    print(json.dumps({name: figures}))


if __name__ == "__main__":
    # SIZE 0 alone: hooks and the MCP server only, no search.
    sizes = [int(size) for size in sys.argv[2:]] or [1000, 10000]
    main(sys.argv[1] if len(sys.argv) > 1 else "this", [size for size in sizes if size])
