"""A test double for meaning: the in-package hashing fake, plus a tiny synonym table."""

from __future__ import annotations

import re

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
