"""Agent transcripts -> ledger events: Claude Code session JSONL and Codex rollout JSONL, read incrementally.

Parsing never raises on transcript content: a malformed, unknown or incomplete line is counted in
`TranscriptChunk.skipped_lines` and passed over. The store redacts every event it saves; only a text cut to the size
limit is redacted here, before the cut. Only texts, tool names and edited file paths are kept, never tool inputs.
"""
