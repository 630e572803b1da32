"""A distilled memory's provenance: what the model said its words came from, checked against the digest.

The model's word is not trusted on its own: a model that obeyed a hostile README would also call its "convention"
the user's. So the claim is checked cheaply against the run's own text, word by word. Of a memory's distinctive
words, those found somewhere in the digest say where it came from (the rest are the model's own paraphrase). When
at least half of those are words only the tools said (in the fenced tool output and changed files, not in the
user's prompts), the memory is `tool_text` whatever the model claims. `user_words` needs at least half of them in
the user's prompts, and no fewer than the words only the tools said; a claim the digest does not bear out is at
most the agent's own finding (`agent`). A memory the model gives no known source for is `tool_text`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from orcmem.extract.digest import Digest
from orcmem.models.constants import EXTRACTION_SOURCES
from orcmem.models.types import Provenance

# Words as the check compares them: runs of letters and digits, case folded (a URL or a path counts as its parts, so
# a paraphrase that keeps only some of them still matches). Short words and the commonest function words say nothing
# about where a text came from.
_WORD = re.compile(r"\w+")
_MIN_LENGTH = 3
_COMMON = frozenset(
    "the and for that this with from are was were you your not but all any can has have had its into than then "
    "them they there these those when what which who will would should could been being also only just use used "
    "using run runs does did doing over more most some such very each other about after before never always".split()
)
TOOL_ONLY_SHARE = 0.5  # this share of a memory's words found in the run, said only by tools, makes it tool text


def words(texts: Iterable[str]) -> frozenset[str]:
    """The distinctive words of some texts."""
    found: set[str] = set()
    for text in texts:
        for word in _WORD.findall(text.casefold()):
            if len(word) >= _MIN_LENGTH and word not in _COMMON:
                found.add(word)
    return frozenset(found)


class ProvenanceCheck:
    """The words of one digest, read once and checked against each memory the model proposed from it."""

    def __init__(self, digest: Digest) -> None:
        """Read the user's prompts, the tools' text (tool activity and changed files) and the agent's messages."""
        self.user = words(digest.prompts)
        self.tools = words([*digest.tool_lines, *digest.files_touched])
        self.anywhere = self.user | self.tools | words(digest.assistant)

    def provenance(self, title: str, body: str, claimed: str | None) -> Provenance:
        """The provenance to store: the model's claim (user, agent, tool; None when it gave none), kept only when
        the digest bears it out, else lowered."""
        if claimed not in EXTRACTION_SOURCES:
            return Provenance.TOOL_TEXT
        said = words([title, body])
        grounded = said & self.anywhere
        from_user = len(said & self.user)
        tools_only = len((said & self.tools) - self.user)
        if claimed == "user" and from_user and from_user >= tools_only and from_user >= len(grounded) / 2:
            return Provenance.USER_WORDS
        if (tools_only and tools_only >= TOOL_ONLY_SHARE * len(grounded)) or claimed == "tool":
            return Provenance.TOOL_TEXT
        return Provenance.AGENT  # a claim the user's words do not bear out is at most the agent's own finding
