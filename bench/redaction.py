"""Redaction: how many secret kinds are caught, how much ordinary text is changed, and what it costs.

- The fake-secret corpus (tests/abuse/fake_secrets.py, one fake of each kind in its vendor's format): how many
  kinds leave any 14-character run of a secret part behind after redaction (the tests send the same corpus through
  every write path and scan the database files, logs, pages and prompts).
- Ordinary coding text: the transcript fixtures (line by line), the benchmark's synthetic memories and the written
  memory pairs: the share of items redaction changes at all (each change is a false one: none holds a secret).
- Cost: microseconds per text for the events of the 5,000-event synthetic transcript and for memories.
- Two secret scanners' test cases (bench/secret_cases.py, bench/data/secret_cases/): Betterleaks 2.0.0's rules
  (which orcmem ships) and detect-secrets 1.5.0's plugins, each rule's secrets written in 29 shapes, every case
  judged by the scanner itself: the share of its true positives whose secret survives redaction (whole, or any
  14-character run of it), and the share of its false positives that redaction changes at all; per rule family.
- The maintained detector the issue names, detect-secrets (the `[bench]` extra), on the same corpus and text:
  with its default plugins, and without its two entropy plugins.
"""

from __future__ import annotations

import glob
import json
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class RedactionResult:
    """The section's figures."""

    kinds: int
    leaked: list[str]
    ordinary: int
    changed: int
    changed_examples: list[str]
    event_us: float
    memory_us: float
    events: int
    ordinary_us: float
    detectors: list[tuple[str, int, int, float]]  # (settings, kinds caught whole, ordinary items flagged, µs per item)
    scanners: list[ScannerRates]


@dataclass(frozen=True)
class ScannerRates:
    """One scanner's cases: true positives left whole or in part, false positives changed, and per family."""

    scanner: str
    positives: int
    left_whole: int
    left_part: int
    negatives: int
    changed: int
    families: int
    worst: list[tuple[str, int, int, int, int]]  # (family, positives, left in part, negatives, changed)


def _scanner_rates(scanner: str) -> ScannerRates:
    from bench.secret_cases import load
    from orcmem.text.redact import MARKER, redact

    per: dict[str, list[int]] = {}
    whole = part = changed = 0
    cases = load(scanner)
    for case in cases:
        row = per.setdefault(case.family, [0, 0, 0, 0])
        out = redact(case.text)
        if case.positive:
            row[0] += 1
            # A 14-character run of the secret still there, outside our markers (whose rule names can spell a
            # vendor's prefix: "age-secret-key").
            bare = re.sub(r"\[redacted:[^\]]*\]", "\x00", out) if MARKER in out else out
            runs = {s[i : i + 14] for s in case.secrets for i in range(max(len(s) - 13, 1))}
            whole += any(s in out for s in case.secrets)
            left = any(run in bare for run in runs)
            part += left
            row[1] += left
        else:
            row[2] += 1
            row[3] += out != case.text
            changed += out != case.text
    positives = sum(c.positive for c in cases)
    worst = sorted(per.items(), key=lambda item: -(item[1][1] + item[1][3]))
    return ScannerRates(
        scanner,
        positives,
        whole,
        part,
        len(cases) - positives,
        changed,
        len(per),
        [(family, c[0], c[1], c[2], c[3]) for family, c in worst if c[1] or c[3]][:12],
    )


def _ordinary() -> list[str]:
    from bench.common import synthetic_memories

    items: list[str] = []
    for name in sorted(glob.glob(str(ROOT / "tests" / "fixtures" / "agents" / "*.jsonl"))):
        items += [line for line in Path(name).read_text(encoding="utf-8").splitlines() if line.strip()]
    items += [f"{m.title}\n{m.body}" for m in synthetic_memories(2000)]
    for line in (ROOT / "bench" / "data" / "duplicate_pairs.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        items += [f"{row[side]['title']}\n{row[side]['body']}" for side in ("a", "b")]
    return items


def _per_text_us(texts: list[str], rounds: int = 5) -> float:
    from orcmem.text.redact import redact_text

    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for text in texts:
            redact_text(text)
        best = min(best, time.perf_counter() - started)
    return best / len(texts) * 1e6


def _detect_secrets(secrets: list, ordinary: list[str]) -> list[tuple[str, int, int, float]]:
    """detect-secrets on the corpus and the ordinary text, with and without its entropy plugins ([] if missing)."""
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings, get_settings, transient_settings
    except ImportError:
        return []

    def found(text: str) -> list[str]:
        return [hit.secret_value for line in text.splitlines() or [text] for hit in scan_line(line) if hit.secret_value]

    with default_settings():
        names = [plugin["name"] for plugin in get_settings().json()["plugins_used"]]
    rows = []
    for label, plugins in (
        ("default plugins", names),
        ("without the entropy plugins", [name for name in names if "HighEntropy" not in name]),
    ):
        with transient_settings({"plugins_used": [{"name": name} for name in plugins]}):
            caught = sum(
                1 for s in secrets if (hits := found(s.text)) and all(any(w in h for h in hits) for w in s.windows())
            )
            started = time.perf_counter()
            flagged = sum(1 for text in ordinary if found(text))
            cost = (time.perf_counter() - started) / len(ordinary) * 1e6
        rows.append((label, caught, flagged, cost))
    return rows


def run() -> RedactionResult:
    """Measure the corpus, the false changes and the cost."""
    sys.path.insert(0, str(ROOT))
    from bench.common import synthetic_memories
    from bench.learning import synthetic_transcript
    from orcmem.ingest.transcript import parse_transcript
    from orcmem.models.vocabulary import Agent
    from orcmem.text.redact import redact_text
    from tests.abuse.fake_secrets import corpus

    secrets = corpus()
    leaked = [s.kind for s in secrets if any(w in redact_text(s.text).text for w in s.windows())]
    ordinary = _ordinary()
    changed = [redact_text(item) for item in ordinary]
    examples = [
        r.text[max(0, r.text.find("[redacted:") - 50) : r.text.find("[redacted:") + 40] for r in changed if r.changed
    ]
    with tempfile.TemporaryDirectory() as work:
        transcript = Path(work) / "big.jsonl"
        transcript.write_bytes(synthetic_transcript())
        events = [event.text for event in parse_transcript(transcript, 0, Agent.CLAUDE).events]
    memories = [f"{m.title}\n{m.body}" for m in synthetic_memories(2000)]
    return RedactionResult(
        kinds=len(secrets),
        leaked=leaked,
        ordinary=len(ordinary),
        changed=sum(r.changed for r in changed),
        changed_examples=[" ".join(e.split()) for e in examples[:3]],
        event_us=_per_text_us(events),
        memory_us=_per_text_us(memories),
        events=len(events),
        ordinary_us=_per_text_us(ordinary, rounds=3),
        detectors=_detect_secrets(secrets, ordinary),
        scanners=[_scanner_rates("betterleaks"), _scanner_rates("detect-secrets")],
    )


def render(r: RedactionResult) -> list[str]:
    """The report section."""
    return [
        "## Redaction",
        "",
        f"- Secret kinds in the fake corpus (`tests/abuse/fake_secrets.py`, vendors' documented formats): {r.kinds}; "
        f"kinds any part of which survives redaction: {len(r.leaked)}"
        + (f" ({', '.join(r.leaked)})" if r.leaked else "")
        + ". The tests send the same corpus through every write path and find none of it in the database, its WAL,"
        " the logs, the pages or the prompts.",
        f"- Ordinary coding text changed by redaction (every change a false one): {r.changed} of {r.ordinary} items, "
        f"{r.changed / r.ordinary:.2%} (target at most 1 %): the transcript fixtures line by line, 2,000 synthetic "
        "memories and the 608 memories of the written pairs."
        + (f" Changed: {'; '.join(repr(e) for e in r.changed_examples)}." if r.changed_examples else ""),
        f"- Cost: {r.event_us:.1f} µs per event text ({r.events:,} events of the synthetic transcript), "
        f"{r.memory_us:.1f} µs per synthetic memory.",
        "",
        "| detector | secret kinds caught whole | ordinary items flagged | µs per ordinary item |",
        "|---|---:|---:|---:|",
        "| orcmem (`text/redact.py`, `text/secret_formats.py`, `text/secret_rules/`) | "
        f"{r.kinds - len(r.leaked)} of {r.kinds} | {r.changed} of {r.ordinary} | {r.ordinary_us:.1f} |",
        *[
            f"| detect-secrets 1.5, {label} | {caught} of {r.kinds} | {flagged} of {r.ordinary} | {cost:.0f} |"
            for label, caught, flagged, cost in r.detectors
        ],
        "",
        "orcmem keeps its own rules: detect-secrets' entropy plugins flag nearly every transcript line and memory,"
        " and without them it catches few of the formats; either way it costs far more per text."
        if r.detectors
        else "detect-secrets is not installed (`pip install -e '.[bench]'`): its comparison is skipped.",
        "",
        "Two scanners' test cases (`bench/data/secret_cases/`, made by `bench/secret_cases.py`): each rule's"
        " secrets, made from its own pattern, written in 29 shapes (INI, env, JSON, XML, YAML, C#, Go, Java,"
        " Kotlin, PHP, Python, Ruby, Makefile, a header, prose); a true positive is a case the scanner reports, a"
        " false positive one it reports nothing in.",
        "",
        "| scanner | rule families | true positives | secret left whole | a 14-character run left |"
        " false positives | changed |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *[
            f"| {s.scanner} | {s.families} | {s.positives:,} | {s.left_whole} ({s.left_whole / s.positives:.1%}) |"
            f" {s.left_part} ({s.left_part / s.positives:.1%}) | {s.negatives:,} | {s.changed}"
            f" ({s.changed / s.negatives:.1%}) |"
            for s in r.scanners
        ],
        "",
        *[
            line
            for rates in r.scanners
            for line in (
                f"Families of {rates.scanner} with a leak or a false change (true positives, left in part;"
                " false positives, changed): "
                + "; ".join(f"{f} {p}, {lp}; {n}, {c}" for f, p, lp, n, c in rates.worst)
                + ".",
                "",
            )
        ],
    ]


if __name__ == "__main__":
    print("\n".join(render(run())))
