"""The environment variables and the stdin limit the hooks read before anything else is imported (no imports here,
on purpose: the prompt hook's warm path loads this and little more)."""

HOME_ENV_VAR = "ORCMEM_HOME"  # the profile folder
# Set in the environment of every CLI that orcmem runs to distil a run, so orcmem's own hooks can stay quiet even
# where a flag could not turn them off (managed Claude Code hooks, Codex versions without features.hooks).
DISTILLING_ENV_VAR = "ORCMEM_DISTILLING"
BARE_ENV_VAR = "ORCMEM_BARE"  # skip recall, the brief and tool checks (docs/agents.md, --bare)
# Seconds a search waits for the query's vector before it answers from words alone (default 0.5; docs/search.md).
# Read when the service opens; a test on a loaded machine raises it so meaning is always waited for.
QUERY_TIMEOUT_ENV_VAR = "ORCMEM_QUERY_TIMEOUT_S"
QUERY_TIMEOUT_MAX_S = 60.0
MAX_STDIN_BYTES = 1 << 20  # of a hook's stdin, read by every hook (here, not in prompt_hook: no import circle)
COPILOT_HOME_ENV_VAR = "COPILOT_HOME"  # where GitHub Copilot CLI keeps its config and sessions instead of ~/.copilot
