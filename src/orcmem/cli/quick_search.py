"""`orcmem search`'s first step: when the session's warm server runs, it answers (its model is loaded), and this
prints its answer; otherwise, or for anything but a plain search, the full command runs as before.

Loaded before click and the service (orcmem.entry sends `orcmem search` here): os, sys and the C socket module;
not even json or re (each costs milliseconds before the first line of output).
"""

from __future__ import annotations

import os
import sys

FLAGS = {"--explain": "explain", "--json": "json"}
VALUED = ("--limit", "--provenance")


def parse(argv: list[str]) -> dict[str, object] | None:
    """The search the arguments ask for (`argv` after `orcmem`), or None for anything the full command must handle:
    --help, --team, an option it does not know, a missing or second TEXT (click then says what is wrong)."""
    cwd = os.getcwd()
    if argv[:1] == ["--project"] and len(argv) > 1 or argv[:1] and argv[0].startswith("--project="):
        value = argv[1] if argv[0] == "--project" else argv[0].partition("=")[2]
        argv = argv[2:] if argv[0] == "--project" else argv[1:]
        cwd = os.path.abspath(os.path.expanduser(value))
        if not value or not os.path.isdir(cwd):
            return None
    if argv[:1] != ["search"]:
        return None
    asked: dict[str, object] = {"explain": False, "json": False}
    texts: list[str] = []
    limit: str | None = None
    provenances: list[str] = []
    args = iter(argv[1:])
    for arg in args:
        if arg == "--":
            texts.extend(args)
        elif arg in FLAGS:
            asked[FLAGS[arg]] = True
        elif arg.partition("=")[0] in VALUED:
            name, equals, value = arg.partition("=")
            if not equals:
                value = next(args, "")
                if not value:
                    return None
            if name == "--limit":
                limit = value
            else:
                provenances.append(value)
        elif arg.startswith("-") and arg != "-":
            return None
        else:
            texts.append(arg)
    if len(texts) != 1 or limit is not None and not (limit.isascii() and limit.isdigit()):
        return None
    # No --limit: the server's default (SEARCH_DEFAULT_LIMIT, not imported here: models.constants loads enum and re).
    asked.update(text=texts[0], cwd=cwd, limit=int(limit) if limit else None, provenances=provenances)
    return asked


def main(argv: list[str]) -> int | None:
    """Print the warm server's answer to `orcmem search ...` and return 0; None when the full command must run."""
    asked = parse(argv)
    if asked is None:
        return None
    from orcmem.host.profile import home_dir_str
    from orcmem.host.warm import ask_search

    try:
        reply, _why = ask_search(home_dir_str(), asked)
    except Exception:  # the full command answers, whatever went wrong here
        return None
    if reply is None:
        return None
    output, notice = reply
    sys.stdout.write(f"{output}\n")
    sys.stdout.flush()
    if notice:
        sys.stderr.write(f"orcmem: {notice}\n")
    return 0
