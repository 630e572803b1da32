"""The environment variables and the stdin limit the hooks read before anything else is imported (no imports here,
on purpose: the prompt hook's warm path loads this and little more)."""

HOME_ENV_VAR = "ORCMEM_HOME"  # the profile folder
# Set in the environment of every CLI that orcmem runs to distil a run, so orcmem's own hooks can stay quiet even
# where a flag could not turn them off (managed Claude Code hooks, Codex versions without features.hooks).
DISTILLING_ENV_VAR = "ORCMEM_DISTILLING"
BARE_ENV_VAR = "ORCMEM_BARE"  # skip recall, the brief and tool checks (docs/agents.md, --bare)
MAX_STDIN_BYTES = 1 << 20  # of a hook's stdin, read by every hook (here, not in prompt_hook: no import circle)
