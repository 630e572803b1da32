"""`orcmem hook prompt`'s first step: pass the agent's payload, unparsed, to the session's warm server and print
its answer; only when none answers does the rest of the hook (JSON, the word search) load.

Imports os, time and the C socket module, and nothing that imports enum, re or json: this runs on every prompt.
"""

from __future__ import annotations

import os
import sys

from orcmem.models.env_names import BARE_ENV_VAR, DISTILLING_ENV_VAR, MAX_STDIN_BYTES


def main(argv: list[str], tool: bool = False) -> int:
    """Run the prompt hook, or with `tool` the tool hook (`pre-tool-use`: the same step, the warm server asked in
    its `tool` mode); `argv` is what follows `orcmem hook`; always exits 0, as every hook does."""
    if os.environ.get(DISTILLING_ENV_VAR) or os.environ.get(BARE_ENV_VAR) or "--bare" in argv[1:]:
        return 0
    from orcmem.host.profile import home_dir_str
    from orcmem.host.warm import HOOK_MODE, TOOL_MODE, ask_for_hook

    try:
        payload = sys.stdin.buffer.read(MAX_STDIN_BYTES)
        home = home_dir_str()
        output, why = ask_for_hook(home, payload, mode=TOOL_MODE if tool else HOOK_MODE)
    except Exception as exc:  # the word path below still answers, and logs why
        output, why, payload = None, f"warm server failed: {type(exc).__name__}", b""
    if output is not None:
        if output:
            sys.stdout.buffer.write(output)
        return 0
    import io

    from orcmem.hooks import handlers as hooks

    text = payload.decode("utf-8", "replace") if payload else ""
    return hooks.main(argv, stdin=io.StringIO(text), warm_tried=why)
