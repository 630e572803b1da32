"""Hook orcmem into coding agents: merge its hooks and MCP server into Claude Code's and Codex's own config files.

Edits merge with what the user has (other hooks, servers, unknown keys, comments and key order stay), back each
file up before its first change, write atomically with the file's permissions, and are idempotent and removable.
No network; nothing here runs an agent.
"""

from __future__ import annotations

from orcmem.setup_agents.claude import claude_hook_specs, claude_paths, setup_claude
from orcmem.setup_agents.codex import codex_hook_specs, setup_codex
from orcmem.setup_agents.entries import (
    HOOK_NAMES,
    HOOK_TIMEOUT_SECONDS,
    RECALL_TOOL,
    RECALL_TOOL_INPUT,
    SERVER_NAME,
    HookSpec,
    default_orcmem_command,
    is_orcmem_hook,
    is_orcmem_server,
)
from orcmem.setup_agents.files import BACKUP_INFIX
from orcmem.setup_agents.report import FileReport, ItemChange, SetupReport

__all__ = [
    "BACKUP_INFIX",
    "HOOK_NAMES",
    "HOOK_TIMEOUT_SECONDS",
    "RECALL_TOOL",
    "RECALL_TOOL_INPUT",
    "SERVER_NAME",
    "FileReport",
    "HookSpec",
    "ItemChange",
    "SetupReport",
    "claude_hook_specs",
    "claude_paths",
    "codex_hook_specs",
    "default_orcmem_command",
    "is_orcmem_hook",
    "is_orcmem_server",
    "setup_claude",
    "setup_codex",
]
