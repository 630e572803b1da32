"""Agent transcripts -> ledger events: Claude Code session JSONL and Codex rollout JSONL, read incrementally.

Parsing never raises on transcript content: a malformed, unknown or incomplete line is counted in
`TranscriptChunk.skipped_lines` and passed over. The store redacts every event it saves; only a text cut to the size
limit is redacted here, before the cut. Only texts, tool names and edited file paths are kept, never tool inputs.
"""

from __future__ import annotations

# orcmem fences the recall and brief text it injects into a session as `<orcmem-context ...>...</orcmem-context>`;
# the parsers drop such blocks so orcmem never learns back what it injected itself. Defined before the imports
# below because orcmem.ingest.common reads it from here.
ORCMEM_CONTEXT_MARKER = "<orcmem-context"

from orcmem.ingest.claude import parse_claude  # noqa: E402
from orcmem.ingest.codex import parse_codex  # noqa: E402
from orcmem.ingest.common import advance_turns  # noqa: E402
from orcmem.ingest.transcript import detect_agent, parse_transcript  # noqa: E402
from orcmem.models.constants import MAX_EVENT_TEXT  # noqa: E402

__all__ = [
    "MAX_EVENT_TEXT",
    "ORCMEM_CONTEXT_MARKER",
    "advance_turns",
    "detect_agent",
    "parse_claude",
    "parse_codex",
    "parse_transcript",
]
