"""`orcmem hook pre-tool-use`'s first step: pass the tool call, unparsed, to the session's warm server and print
its answer; only when none answers (or the call is one of orcmem's own tools, whose permission check runs here)
does the rest of the hook load. Kept as light as the prompt hook: this runs before every file and shell tool call.
"""

from __future__ import annotations

import os
import sys

from orcmem.models.env_names import BARE_ENV_VAR, DISTILLING_ENV_VAR, MAX_STDIN_BYTES


def main(argv: list[str]) -> int:
    """Run the tool hook (`argv` is what follows `orcmem hook`); always exits 0, as every hook does."""
    if os.environ.get(DISTILLING_ENV_VAR) or os.environ.get(BARE_ENV_VAR) or "--bare" in argv[1:]:
        return 0
    payload = b""
    try:
        from orcmem.host.profile import home_dir_str
        from orcmem.host.warm import TOOL_MODE, ask_for_hook

        payload = sys.stdin.buffer.read(MAX_STDIN_BYTES)
        output, why = ask_for_hook(home_dir_str(), payload, mode=TOOL_MODE)
    except Exception as exc:  # the direct path below still answers
        output, why = None, f"warm server failed: {type(exc).__name__}"
    if output is not None:
        if output:
            sys.stdout.buffer.write(output)
        return 0
    import io

    from orcmem.hooks import handlers as hooks

    text = payload.decode("utf-8", "replace") if payload else ""
    return hooks.main(argv, stdin=io.StringIO(text), warm_tried=why)
