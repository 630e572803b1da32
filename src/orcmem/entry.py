"""The `orcmem` program: hooks take a short path without click; everything else goes to the CLI."""

from __future__ import annotations

import sys


def main() -> None:
    """Console-script entry point."""
    if len(sys.argv) > 1 and sys.argv[1] == "hook":
        from orcmem import hooks

        sys.exit(hooks.main(sys.argv[2:]))
    from orcmem.cli import main as cli_main

    cli_main()
