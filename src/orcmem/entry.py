"""The `orcmem` program: hooks and the MCP server take short paths without click; the rest goes to the CLI."""

from __future__ import annotations

import sys


def main() -> None:
    """Console-script entry point."""
    if len(sys.argv) > 2 and sys.argv[1:3] == ["hook", "prompt"]:
        # Every prompt: the warm server answers the agent's payload as it came; nothing else loads unless it cannot.
        from orcmem.hooks import prompt_hook

        sys.exit(prompt_hook.main(sys.argv[2:]))
    if len(sys.argv) > 2 and sys.argv[1:3] == ["hook", "pre-tool-use"]:
        # Before every file and shell tool call: the same warm-first step, for what the call touches.
        from orcmem.hooks import prompt_hook

        sys.exit(prompt_hook.main(sys.argv[2:], tool=True))
    if len(sys.argv) > 2 and sys.argv[1] == "hook" and sys.argv[2] not in ("--help", "-h"):
        from orcmem.hooks import handlers as hooks

        sys.exit(hooks.main(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "mcp":
        # An agent waits only a second or two for its MCP servers: skip click, answer `initialize` at once.
        from orcmem.mcp_server.root import main as mcp_main

        sys.exit(mcp_main(sys.argv[2:]))
    if "search" in sys.argv[1:4]:
        # A search asks the session's warm server first (its model is loaded); only when none answers does the CLI
        # load click, the service and the model.
        from orcmem.cli import quick_search

        code = quick_search.main(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    from orcmem.cli.commands import main as cli_main

    cli_main()
