"""Reading what the user already has (instruction files, agents' own memories, claude-mem, backups) into memories
to import; no storage (docs/importing.md)."""
