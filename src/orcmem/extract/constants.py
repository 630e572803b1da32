"""Numbers and names of extraction (digest, prompt, parse, generators), each under its own name."""

from __future__ import annotations

from typing import Final

from orcmem.models.vocabulary import Agent

# --- Generators (docs/learning.md, Who distils) -------------------------------------------------------------------
GENERATOR_OUTPUT_MAX_BYTES: Final = 16 * 1024 * 1024  # of stdout or stderr read back
GENERATOR_KILL_GRACE_S: Final = 2.0  # after SIGTERM to the process group, before SIGKILL
GENERATOR_ERROR_MAX_CHARS: Final = 600  # an error message quotes at most this much of what a CLI said
DEFAULT_CLAUDE_MODEL_LABEL: Final = "Claude Haiku 4.5"
CLAUDE_DISALLOWED_TOOLS: Final = ("Bash", "Edit", "Write", "WebFetch", "WebSearch")
CLAUDE_DISABLE_HOOKS_SETTINGS: Final = '{"disableAllHooks": true}'
CODEX_MODEL_HINTS: Final = ("spark", "mini", "nano")  # the first listed model whose name contains one of these
API_MAX_TOKENS: Final = 2000
TEMP_DIR_PREFIX: Final = "orcmem-distill-"

# --- Providers (docs/learning.md, Who distils) --------------------------------------------------------------------
AGENT_NAMES: Final[dict[str, str]] = {
    Agent.CLAUDE: "Claude Code",
    Agent.CODEX: "Codex",
    Agent.GEMINI: "Gemini CLI",
    Agent.COPILOT: "Copilot CLI",
    Agent.OPENCODE: "OpenCode",
    Agent.CURSOR: "Cursor",
}
CLAUDE_BINARY: Final = "claude"
CODEX_BINARY: Final = "codex"
GEMINI_BINARY: Final = "gemini"
OPENCODE_BINARY: Final = "opencode"
