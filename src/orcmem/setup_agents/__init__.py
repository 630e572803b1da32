"""Hook orcmem into coding agents: merge its hooks and MCP server into Claude Code's and Codex's own config files.

Edits merge with what the user has (other hooks, servers, unknown keys, comments and key order stay), back each
file up before its first change, write atomically with the file's permissions, and are idempotent and removable.
No network; nothing here runs an agent.
"""
