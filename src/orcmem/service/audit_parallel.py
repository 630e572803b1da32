"""The store audit's per-memory work (today's secret rules, the generic rule, the facts: pure functions of a
memory's text), spread over the machine's cores (`host/forking.py`) when there is enough of it to pay for the
processes' start, for the audit and `StoreAudit.prepare` alike (docs/audit.md, Speed)."""

from __future__ import annotations

from orcmem.host.forking import ForkPool, Later, Spread
from orcmem.rules.audit import is_generic
from orcmem.service.duplicates import memory_text
from orcmem.text.facts import facts_of, pack
from orcmem.text.redact import Redaction, redact_text

# One memory's title, body and whether today's secret rules must look at it (not found clean by them yet).
Text = tuple[str, str, bool]
# What the audit works out of it: whether today's secret rules redact something in it (False when not asked), the
# generic rule's verdict (`rules/audit.is_generic`), its facts packed (`text/facts.pack`; None: not packable).
Traits = tuple[bool, bool, str | None]


def secret_in(title: str, body: str) -> tuple[Redaction, Redaction] | None:
    """Today's rules over a memory's title and body, each on its own as the fix redacts them; None when neither
    holds a secret."""
    if not redact_text(f"{title}\n{body}").changed:  # one pass over both; each again only when one fired
        return None
    redacted = redact_text(title), redact_text(body)
    return redacted if any(part.changed for part in redacted) else None


def traits_of(texts: list[Text]) -> list[Traits]:
    """Each text's traits, in this process."""
    return [
        (scan and secret_in(title, body) is not None, is_generic(title, body), pack(facts_of(memory_text(title, body))))
        for title, body, scan in texts
    ]


def _traits_between(texts: list[Text], bounds: tuple[int, int]) -> list[Traits]:
    """The traits of the texts from one bound to the other (in a forked worker, over the texts it inherited)."""
    return traits_of(texts[bounds[0] : bounds[1]])


class Pending:
    """Traits being worked out: by a pool of processes started at once (this process is free meanwhile: the audit
    searches its close pairs), or in this process when they are asked for. A context manager: leaving it ends the
    pool."""

    def __init__(self, texts: list[Text], spread: Spread) -> None:
        """Start on `texts` as `spread` says (below `spread.pool_from` texts, on one core or without a start method:
        nothing starts, they are worked out here when asked)."""
        # The rules' index is built once here, before the fork, and inherited by the workers.
        redact_text("warm up")
        self.pool = ForkPool(texts, spread, use=spread.pays(len(texts)))
        self._parts: Later[list[Traits]] = self.pool.map_later(_traits_between, spread.ranges(len(texts)))

    def result(self) -> list[Traits]:
        """Each text's traits, in order (the pool's, else this process's)."""
        try:
            return [traits for part in self._parts.result() for traits in part]
        finally:
            self.pool.close()

    def close(self) -> None:
        """End the pool, if any (work not gathered yet is dropped)."""
        self.pool.close()

    def __enter__(self) -> Pending:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def work_out(texts: list[Text], spread: Spread | None = None) -> list[Traits]:
    """Each text's traits, in order: over a pool of processes from `spread.pool_from` texts on (`Spread.here()` by
    default); in this process below that, on one core, or when the pool fails."""
    with Pending(texts, spread or Spread.here()) as pending:
        return pending.result()
