"""Test doubles: the hashing fake with a tiny synonym table for meaning, and a real `claude -p` envelope."""

from __future__ import annotations

import json
import re
from pathlib import Path

from orcmem.embed import HashingEmbedder

SYNONYMS = {"automobile": "car", "vehicle": "car", "sedan": "car", "fix": "repair", "mend": "repair"}


class SynonymEmbedder(HashingEmbedder):
    """FAKE: maps a few synonyms onto one word before hashing, so fusion can be tested without the real model."""

    def __init__(self) -> None:
        super().__init__(model_id="test-synonym-hash")
        self.queries = 0

    def embed_documents(self, texts):
        return super().embed_documents([self._canonical(text) for text in texts])

    def embed_query(self, text: str, timeout: float | None = None):
        self.queries += 1
        return super().embed_query(text, timeout)

    @staticmethod
    def _canonical(text: str) -> str:
        return re.sub(r"\w+", lambda m: SYNONYMS.get(m.group(0).lower(), m.group(0)), text)


ENVELOPES = Path(__file__).parent / "fixtures" / "envelopes" / "claude_print_result_envelopes.jsonl"


def claude_success_envelope() -> str:
    """The real `claude -p --output-format json` success envelope from the fixtures, as a JSON line."""
    envelope = json.loads(ENVELOPES.read_text().splitlines()[-1])
    assert envelope["is_error"] is False
    return json.dumps(envelope)
