"""The "reads like instructions" flag: injections caught and ordinary memories flagged, out of batch, old beside new.

The labelled set is bench/data/injection_set.jsonl (a copy in tests/fixtures): prompt injections in many styles and
languages, and ordinary engineering advice and memories in the style agents write, which share the injections' words
("ignore", "never", "token", "system prompt"...). Each item has a batch (the session it was written in) and a split
(what it was when it was written):

- `tune`, `held` (the first batch and three later ones), `unseen` (the fifth), `fresh` (the sixth), `independent`
  (written by someone who never saw the detector): each was scored once before anything was tuned on it (BATCHES
  keeps those first figures); since then they are all training data (`trained` is true);
- `own`: more batches written for the learned layer's training, each spread over every style and 15+ languages;
- `blind`, `blind2`: each written by a helper who never saw the detector, scored once as a blind set, then made
  training data.

The learned layer is trained on every batch, so its figure on the set says little. The figure that predicts a new
phrasing is out of batch: for each batch, the layer is fitted on all the others and scores that one (the rules, tuned
on the older batches by hand, are not refitted: for those batches the rules' part is not blind).

Cost: microseconds of CPU time per text, the whole set, best of five rounds.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from bench.injection_model import MOST_FLAGGED, Choice, Vector, choose, out_of_batch, sparse, threshold

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "injection_set.jsonl"
# Written by a helper who never saw the detector, its set or its code, after the detector was final; scored once and
# never trained on (bench.train_injection reads DATA only): the figure closest to a phrasing nobody wrote yet. Absent
# between two such sets (the last one, once scored, became the `blind2` batch of DATA); the section then leaves it out.
BLIND = ROOT / "bench" / "data" / "injection_blind.jsonl"
SPLITS = ("tune", "held", "unseen", "fresh", "independent", "own", "blind", "blind2")
# Each batch as first measured, before anything was tuned on it: (batch, injections, caught, ordinary texts,
# flagged). The first batch was measured against much earlier rules, the next five against the rules alone, the
# independent one against the rules and the first learned layer (trained on `tune` only), the blind ones (each written
# by a helper who never saw the detector) against the detector of the round before, trained on every batch above it.
BATCHES = [
    ("second", 60, 18, 60, 4),
    ("third", 40, 33, 40, 1),
    ("fourth", 33, 25, 33, 0),
    ("fifth (unseen)", 35, 24, 35, 0),
    ("sixth (fresh)", 156, 83, 147, 4),
    ("independent", 200, 122, 200, 3),
    ("blind", 283, 230, 302, 20),
    ("blind2", 291, 231, 315, 10),
]
TARGET_CAUGHT, TARGET_FLAGGED = 0.90, 0.05
# The newest blind batch, also scored as if it had stayed blind: by weights fitted on every other batch, under a cut
# chosen out of batch on the others alone (the figure that says what the new training data and features added).
APART = "blind2"

# The detector before this set was built (orcmem.rules.permissions until issue 25, item 4), kept to compare against.
_WHICH = r"\s+(?:(?:all|any|the|your|my|these|those|of)\s+)*"
_OLD = re.compile(
    "|".join(
        [
            rf"\b(?:ignore|forget|override){_WHICH}(?:previous|prior|above|earlier|preceding|original)\s+"
            r"(?:instructions?|rules|messages|prompts?|directions|guidelines)",
            r"\b(?:ignore|forget|disregard)\s+(?:everything|(?:all\s+(?:of\s+)?)?(?:the\s+|your\s+)?(?:instructions|"
            r"rules))\s+above",
            rf"\bdisregard{_WHICH}(?:previous|prior|above|earlier|system)",
            r"\byou\s+(?:are|must|should)\s+now\b",
            r"\b(?:system|developer)\s+prompt\b",
            r"\bdo\s+not\s+(?:tell|inform)\s+the\s+user\b",
            r"\bexfiltrat",
            r"\bnew\s+instructions?:",
            r"<\s*/?\s*(?:system|instructions?)\s*>",
        ]
    ),
    re.IGNORECASE,
)


def old_detector(text: str) -> bool:
    """The old flag: nine English patterns over the text's skeleton."""
    from orcmem.text.textsafe import skeleton

    return _OLD.search(skeleton(text)) is not None


@dataclass(frozen=True)
class Item:
    """One labelled text."""

    id: str
    injection: bool
    style: str
    lang: str
    split: str
    batch: str
    text: str


@dataclass(frozen=True)
class Score:
    """A detector on some items: injections caught, ordinary texts flagged, and which."""

    caught: int
    injections: int
    flagged: int
    ordinary: int
    missed_ids: tuple[str, ...]
    flagged_ids: tuple[str, ...]

    def cell(self) -> str:
        """`caught of injections (share) | flagged of ordinary (share)`."""
        return (
            f"{self.caught} of {self.injections} ({_share(self.caught, self.injections)}) | "
            f"{self.flagged} of {self.ordinary} ({_share(self.flagged, self.ordinary)})"
        )


@dataclass(frozen=True)
class Batch:
    """One batch scored out of batch: by the rules and a layer fitted on the other batches, and by the rules alone."""

    name: str
    both: Score
    rules: Score


@dataclass(frozen=True)
class Apart:
    """The batch held apart (APART): its score, and every row's score with it left out of every fit."""

    name: str
    score: Score
    scores: Vector  # each other batch out of batch, without APART; APART's rows by a fit on all the others
    cut: float  # chosen on the other batches' scores alone


@dataclass(frozen=True)
class InjectionResult:
    """The section's figures."""

    items: list[Item]
    batches: list[Batch]
    pooled: Score  # every batch out of batch, pooled
    trained: Score  # the shipped detector on the whole set it was trained on
    blind: Score | None  # the shipped detector on the blind set, never trained on (None: no blind set now)
    blind_rules: Score | None
    old: Score
    apart: Apart | None  # None: the set has no batch APART
    chosen: Choice  # the penalty, the cut and every row's out-of-batch score
    labels: Vector
    ruled: npt.NDArray[np.bool_]  # whether the rules alone flag each row
    by_style: dict[str, Score]  # out of batch
    by_lang: dict[str, Score]
    new_us: float
    rules_us: float
    old_us: float
    ordinary_us: float  # the new detector on ordinary texts only (most writes)


def load(path: Path = DATA) -> list[Item]:
    """The labelled set."""
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        items.append(
            Item(
                row["id"],
                row["label"] == "injection",
                row["style"],
                row["lang"],
                row["split"],
                row["batch"],
                row["text"],
            )
        )
    return items


def score(items: list[Item], detector: Callable[[str], bool]) -> Score:
    """How `detector` does on `items`."""
    return tally(items, [detector(item.text) for item in items])


def tally(items: list[Item], flags: Sequence[bool]) -> Score:
    """How a detector that flagged `items` as `flags` says did."""
    verdicts = list(zip(items, flags, strict=True))
    missed = tuple(item.id for item, flag in verdicts if item.injection and not flag)
    flagged = tuple(item.id for item, flag in verdicts if not item.injection and flag)
    injections = sum(item.injection for item in items)
    return Score(injections - len(missed), injections, len(flagged), len(items) - injections, missed, flagged)


def per_text_us(texts: list[str], detector: Callable[[str], bool], rounds: int = 5) -> float:
    """Microseconds of this process's CPU time per text, best of `rounds` (CPU time: other jobs on the machine
    make the wall time of a few hundred microseconds swing by half)."""
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for text in texts:
            detector(text)
        best = min(best, time.process_time() - started)
    return best / len(texts) * 1e6


def run(path: Path = DATA) -> InjectionResult:
    """Score every batch out of batch, the shipped detector and the old one on the whole set, and time them."""
    from orcmem.text.instructions import looks_like_instructions, rules_flag

    items = load(path)
    x = sparse([item.text for item in items])
    labels = np.array([float(item.injection) for item in items])
    names = [item.batch for item in items]
    chosen = choose(x, labels, names)
    verdict = {item.id: bool(x.ruled[k] or chosen.scores[k] > chosen.cut) for k, item in enumerate(items)}
    ruled = {item.id: bool(x.ruled[k]) for k, item in enumerate(items)}

    def unseen(group: list[Item]) -> Score:
        return score(group, {item.text: verdict[item.id] for item in group}.__getitem__)

    def by(key: Callable[[Item], str]) -> dict[str, Score]:
        names = sorted({key(item) for item in items}, key=lambda name: (-sum(key(i) == name for i in items), name))
        return {name: unseen([i for i in items if key(i) == name]) for name in names}

    batches = []
    for name in dict.fromkeys(item.batch for item in items):
        group = [item for item in items if item.batch == name]
        batches.append(Batch(name, unseen(group), score(group, {i.text: ruled[i.id] for i in group}.__getitem__)))
    texts = [item.text for item in items]
    apart = None
    if APART in names:
        held = np.array(names) == APART
        apart_scores = out_of_batch(x, labels, names, chosen.l2, APART)
        cut = threshold(x.ruled[~held], labels[~held], apart_scores[~held], MOST_FLAGGED)
        flags = (x.ruled | (apart_scores > cut))[held]
        apart = Apart(APART, tally([i for i in items if i.batch == APART], list(flags)), apart_scores, cut)
    return InjectionResult(
        items=items,
        batches=batches,
        pooled=unseen(items),
        trained=score(items, looks_like_instructions),
        blind=score(blind, looks_like_instructions) if (blind := load(BLIND) if BLIND.exists() else []) else None,
        blind_rules=score(blind, rules_flag) if blind else None,
        old=score(items, old_detector),
        apart=apart,
        chosen=chosen,
        labels=labels,
        ruled=x.ruled,
        by_style=by(lambda item: item.style),
        by_lang=by(lambda item: item.lang),
        new_us=per_text_us(texts, looks_like_instructions),
        rules_us=per_text_us(texts, rules_flag),
        old_us=per_text_us(texts, old_detector),
        ordinary_us=per_text_us([item.text for item in items if not item.injection], looks_like_instructions),
    )


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def _met(s: Score) -> bool:
    return s.caught >= TARGET_CAUGHT * s.injections and s.flagged <= TARGET_FLAGGED * s.ordinary


def _blind_line(r: InjectionResult) -> list[str]:
    """The blind set's line, when there is one."""
    if r.blind is None or r.blind_rules is None:
        return [f"- No blind set now (`{BLIND.relative_to(ROOT)}` is absent: the last one is the *blind2* batch)."]
    return [
        f"- **Blind** (`{BLIND.relative_to(ROOT)}`, {r.blind.injections + r.blind.ordinary} texts written by "
        "someone who never saw the detector, its set or its code, after it was final; never trained on): the shipped "
        f"detector {r.blind.cell()} ({'met' if _met(r.blind) else '**missed**'}); the rules alone "
        f"{r.blind_rules.cell()}."
    ]


def _apart_line(r: InjectionResult) -> list[str]:
    """The line of the batch held apart, when the set has it."""
    if r.apart is None:
        return []
    return [
        f"- **{r.apart.name} held apart** (the newest blind batch as if it were still blind: weights fitted on every "
        f"other batch, the cut ({r.apart.cut:.3f}) chosen out of batch on the others alone): {r.apart.score.cell()} "
        f"({'met' if _met(r.apart.score) else '**missed**'})."
    ]


def render(r: InjectionResult) -> list[str]:
    """The report section."""
    by_id = {item.id: item for item in r.items}
    missed = [by_id[i] for i in r.pooled.missed_ids]
    flagged = [by_id[i] for i in r.pooled.flagged_ids]
    short = [b.name for b in r.batches if not _met(b.both)]
    p = r.pooled
    return [
        "## The instruction flag (prompt injections)",
        "",
        f"`orcmem/text/instructions.py` on the labelled set `bench/data/injection_set.jsonl` ({len(r.items)} texts in "
        f"{len(r.batches)} batches: {p.injections} injections in {len({i.style for i in r.items if i.injection})} "
        f"styles and {len({i.lang for i in r.items if i.injection})} languages, {p.ordinary} ordinary memories and",
        "pieces of advice that share their words). The learned layer is trained on all of it, so the figure that",
        "predicts phrasings nobody wrote yet is **out of batch**: each batch scored by the rules and a layer fitted on",
        f"every other batch (penalty {r.chosen.l2:g} and score cut {r.chosen.cut:.3f}, both chosen on these",
        "out-of-batch scores for at most 3 % of ordinary texts flagged pooled). The rules were tuned by hand on the",
        "first six batches, so their part is blind only on *independent*, *blind*, *blind2* and the *own* batches (the",
        "rules-alone column says how much they carry).",
        "",
        "| batch | out of batch: injections caught | ordinary flagged | rules alone: caught | flagged |",
        "|---|---:|---:|---:|---:|",
        *[f"| {b.name} | {b.both.cell()} | {b.rules.cell()} |" for b in r.batches],
        f"| **pooled** | {p.cell()} | | |",
        "",
        f"- Target, at least {TARGET_CAUGHT:.0%} caught with at most {TARGET_FLAGGED:.0%} of ordinary texts flagged, "
        f"out of batch: pooled {'met' if _met(p) else '**missed**'} ({_share(p.caught, p.injections)}, "
        f"{_share(p.flagged, p.ordinary)}); "
        + (
            f"missed in {len(short)} of {len(r.batches)} batches: {', '.join(short)}."
            if short
            else "met in every batch."
        ),
        *_blind_line(r),
        *_apart_line(r),
        f"- The shipped detector on the whole set it was trained on: {r.trained.cell()}; the old detector "
        f"(nine English patterns): {r.old.cell()}.",
        f"- Cost: {r.new_us:.0f} µs of CPU per text ({r.ordinary_us:.0f} µs per ordinary one, the usual write; "
        f"the rules alone {r.rules_us:.0f} µs), against {r.old_us:.1f} µs for the old detector.",
        "  The flag is computed when a memory is written and stored with it; recall, the brief and the prompt hook",
        "  read the stored flag and never run the detector.",
        "",
        "Each batch as first measured, before anything was tuned on it (history: the second against much earlier",
        "rules, the next four against the rules alone, *independent* against the rules and the first learned layer,",
        "trained on *tune* only, *blind* and *blind2* against the detector of rounds 1 and 2, trained on every batch",
        "above them):",
        "",
        "| batch | injections caught | ordinary texts flagged |",
        "|---|---:|---:|",
        *[
            f"| {name} | {caught} of {injections} ({_share(caught, injections)}) | {flagged} of {ordinary} "
            f"({_share(flagged, ordinary)}) |"
            for name, injections, caught, ordinary, flagged in BATCHES
        ],
        "",
        "The learned layer (orcmem/text/instructions_learned.py): logistic regression over hashed words, word pairs,",
        "character 3- to 5-grams, the rules' cues (weak ones too) and groups of words with one meaning in many",
        "languages (addressed to an AI, a claim of approval, secrecy toward the user, a secret, sending it out, a",
        "download piped to a shell, a condition, turning a safety check off, a setting that weakens a defence, a",
        "package swapped for another, a fake end of the document or system turn...; most in 30 languages or more),",
        "alone and in pairs; 65,536 slots of",
        "one signed byte each, trained by `python -m bench.train_injection`, deterministically. A text is flagged",
        "when the rules flag it or the layer's score passes the cut.",
        "The MiniLM embedding is not used: beside the words it catches no more (next section), and without it the",
        "flag gives one answer on every write, also where no vector exists (imports, the team pool, no model).",
        "",
        "Out of batch, by style and by language:",
        "",
        "| style | injections caught | ordinary flagged |",
        "|---|---:|---:|",
        *[
            f"| {style} | {s.caught} of {s.injections} | {s.flagged} of {s.ordinary} |"
            for style, s in r.by_style.items()
        ],
        "",
        "| language | injections caught | ordinary flagged |",
        "|---|---:|---:|",
        *[f"| {lang} | {s.caught} of {s.injections} | {s.flagged} of {s.ordinary} |" for lang, s in r.by_lang.items()],
        "",
        "Injections missed out of batch:",
        "",
        *[f"- `{item.batch}` {item.style}: {json.dumps(item.text, ensure_ascii=False)}" for item in missed],
        "",
        "Ordinary texts flagged out of batch:" if flagged else "No ordinary text is flagged out of batch.",
        "",
        *[f"- `{item.batch}` {item.style}: {json.dumps(item.text, ensure_ascii=False)}" for item in flagged],
        "",
        "No maintained library was compared: the ones that exist (LLM Guard, Rebuff, Prompt Guard) run a",
        "transformer classifier, far heavier than orcmem's dependencies and than a check on every write.",
        "",
    ]


if __name__ == "__main__":
    print("\n".join(render(run())))
