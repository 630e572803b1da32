"""The "reads like instructions" flag: injections caught and ordinary memories flagged, old detector beside new.

The labelled set is bench/data/injection_set.jsonl (a copy in tests/fixtures): prompt injections in several styles
and languages, and ordinary engineering advice and memories in the style agents write, which share the injections'
words ("ignore", "never", "token", "system prompt"...). Each item has a split:

- `tune`: the rules were written and adjusted against these (the first batch's two thirds, and three later batches
  written to find what the rules missed, each measured before the rules were tuned on it: BATCHES);
- `held`: the first batch's other third, measured once while tuning (two rules were then made more general);
- `unseen`: the fifth batch, written after the rules were frozen and never tuned on;
- `fresh`: the sixth batch (156 injections in 16 styles and 20 languages, 147 ordinary texts), written and scored
  before the rules were broadened by class and the learned layer was added; never trained on.
- `independent`: 200 injections in 15 styles and 15 languages and 200 ordinary texts, written by someone who never saw
  the detector, its set or its code, and scored once after the detector was final: the fairest figure of all.

Cost: microseconds of CPU time per text, the whole set, best of five rounds.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "injection_set.jsonl"
# The fresh split's items that the detector as frozen before it (commit 7ef150d) flagged: its "before" figures.
FRESH_BEFORE = ROOT / "bench" / "data" / "injection_fresh_before.json"
SPLITS = ("tune", "held", "unseen", "fresh", "independent")
# The later batches as first measured, before the rules were tuned on them (now in `tune`; the last is `unseen`):
# (batch, injections, caught, ordinary texts, flagged). The first was measured against much earlier rules.
BATCHES = [
    ("second", 60, 18, 60, 4),
    ("third", 40, 33, 40, 1),
    ("fourth", 33, 25, 33, 0),
    ("fifth (unseen)", 35, 24, 35, 0),
    ("sixth (fresh)", 156, 83, 147, 4),
]
TARGET_CAUGHT, TARGET_FLAGGED = 0.90, 0.05

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
class InjectionResult:
    """The section's figures."""

    items: list[Item]
    new: dict[str, Score]  # by split, and "all"
    rules: dict[str, Score]  # the rules alone, without the learned layer
    old: dict[str, Score]
    by_style: dict[str, tuple[Score, Score]]  # (new, old) by style
    by_lang: dict[str, tuple[Score, Score]]
    fresh_by_style: dict[str, tuple[Score, Score]]  # (after, before) on the fresh split
    fresh_by_lang: dict[str, tuple[Score, Score]]
    new_us: float
    rules_us: float
    old_us: float
    ordinary_us: float  # the new detector on ordinary texts only (most writes)


def load(path: Path = DATA) -> list[Item]:
    """The labelled set."""
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        items.append(Item(row["id"], row["label"] == "injection", row["style"], row["lang"], row["split"], row["text"]))
    return items


def score(items: list[Item], detector: Callable[[str], bool]) -> Score:
    """How `detector` does on `items`."""
    verdicts = [(item, detector(item.text)) for item in items]
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
    """Score both detectors on every split, style and language, and time them."""
    from orcmem.text.instructions import looks_like_instructions, rules_flag

    items = load(path)
    groups: dict[str, list[Item]] = {split: [i for i in items if i.split == split] for split in SPLITS}
    groups["all"] = items
    styles = sorted({item.style for item in items})
    langs = sorted({item.lang for item in items}, key=lambda lang: (-sum(i.lang == lang for i in items), lang))
    texts = [item.text for item in items]
    fresh = groups["fresh"]
    before_ids = set(json.loads(FRESH_BEFORE.read_text(encoding="utf-8"))["flagged"])
    before_texts = {item.text for item in fresh if item.id in before_ids}

    def before(text: str) -> bool:
        return text in before_texts

    def fresh_by(key: Callable[[Item], str]) -> dict[str, tuple[Score, Score]]:
        return {
            name: (score(g, looks_like_instructions), score(g, before))
            for name in sorted({key(item) for item in fresh})
            if (g := [i for i in fresh if key(i) == name])
        }

    return InjectionResult(
        items=items,
        new={name: score(group, looks_like_instructions) for name, group in groups.items()},
        rules={name: score(group, rules_flag) for name, group in groups.items()},
        old={name: score(group, old_detector) for name, group in groups.items()},
        by_style={
            style: (score(g, looks_like_instructions), score(g, old_detector))
            for style in styles
            if (g := [i for i in items if i.style == style])
        },
        by_lang={
            lang: (score(g, looks_like_instructions), score(g, old_detector))
            for lang in langs
            if (g := [i for i in items if i.lang == lang])
        },
        fresh_by_style=fresh_by(lambda item: item.style),
        fresh_by_lang=fresh_by(lambda item: item.lang),
        new_us=per_text_us(texts, looks_like_instructions),
        rules_us=per_text_us(texts, rules_flag),
        old_us=per_text_us(texts, old_detector),
        ordinary_us=per_text_us([item.text for item in items if not item.injection], looks_like_instructions),
    )


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def _before_after(name: str, rows: dict[str, tuple[Score, Score]]) -> list[str]:
    """A table of the fresh split by `name`: injections caught and ordinary texts flagged, after and before."""
    return [
        f"| fresh, by {name} | caught after | flagged after | caught before | flagged before |",
        "|---|---:|---:|---:|---:|",
        *[
            f"| {key} | {a.caught} of {a.injections} | {a.flagged} of {a.ordinary} | {b.caught} of {b.injections} | "
            f"{b.flagged} of {b.ordinary} |"
            for key, (a, b) in rows.items()
        ],
        "",
    ]


def render(r: InjectionResult) -> list[str]:
    """The report section."""
    held = r.new["held"]
    unseen = r.new["unseen"]
    fresh = r.new["fresh"]
    independent = r.new["independent"]

    def met(s: Score) -> bool:
        return s.caught / s.injections >= TARGET_CAUGHT and s.flagged / s.ordinary <= TARGET_FLAGGED

    by_id = {item.id: item for item in r.items}
    missed = [by_id[i] for i in r.new["all"].missed_ids]
    flagged = [by_id[i] for i in r.new["all"].flagged_ids]
    lines = [
        "## The instruction flag (prompt injections)",
        "",
        f"`orcmem/text/instructions.py` on the labelled set `bench/data/injection_set.jsonl` ({len(r.items)} texts: "
        f"{r.new['all'].injections} injections in {len({i.style for i in r.items if i.injection})} styles and "
        f"{len({i.lang for i in r.items if i.injection})} languages, "
        f"{r.new['all'].ordinary} ordinary memories and pieces of advice that share their words). *tune*: the rules",
        "were written against these and the learned layer is trained on them; *held*: a third of the first batch,",
        "measured once while tuning; *unseen*: the fifth batch, written after the rules were frozen; *fresh*: the",
        "sixth batch, written and scored before the learned layer and the last rules (the layer never saw it; the",
        "rules were broadened by class after its misses were read, so its rules-only figure is no longer blind);",
        "*independent*: written by someone who never saw the detector, its set or its code, scored once at the end.",
        "",
        "| split | rules and learned layer: caught | flagged | rules alone: caught | flagged | old detector: caught "
        "| flagged |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *[
            f"| {name} | {r.new[name].cell()} | {r.rules[name].cell()} | {r.old[name].cell()} |"
            for name in (*SPLITS, "all")
        ],
        "",
        f"- Target, at least {TARGET_CAUGHT:.0%} caught with at most {TARGET_FLAGGED:.0%} of ordinary texts flagged: "
        f"held {'met' if met(held) else '**missed**'} ({_share(held.caught, held.injections)}, "
        f"{_share(held.flagged, held.ordinary)}); unseen {'met' if met(unseen) else '**missed**'} "
        f"({_share(unseen.caught, unseen.injections)}, {_share(unseen.flagged, unseen.ordinary)}); fresh "
        f"{'met' if met(fresh) else '**missed**'} ({_share(fresh.caught, fresh.injections)}, "
        f"{_share(fresh.flagged, fresh.ordinary)}); independent {'met' if met(independent) else '**missed**'} "
        f"({_share(independent.caught, independent.injections)}, "
        f"{_share(independent.flagged, independent.ordinary)}).",
        f"- Cost: {r.new_us:.0f} µs of CPU per text ({r.ordinary_us:.0f} µs per ordinary one, the usual write; "
        f"the rules alone {r.rules_us:.0f} µs), against {r.old_us:.1f} µs for the old detector.",
        "  The flag is computed when a memory is written and stored with it; recall, the brief and the prompt hook",
        "  read the stored flag and never run the detector.",
        "",
        "Each batch written after the first, as measured before the rules were tuned on it (the second against much",
        "earlier rules; the last is the *unseen* split):",
        "",
        "| batch | injections caught | ordinary texts flagged |",
        "|---|---:|---:|",
        *[
            f"| {name} | {caught} of {injections} ({_share(caught, injections)}) | {flagged} of {ordinary} "
            f"({_share(flagged, ordinary)}) |"
            for name, injections, caught, ordinary, flagged in BATCHES
        ],
        "",
        "The learned layer (orcmem/text/instructions_learned.py): logistic regression over hashed words, word pairs",
        "and character 3- to 5-grams (65,536 slots, one signed byte each), trained by",
        "`python -m bench.train_injection` on *tune* only, deterministically; a text is flagged when the rules flag",
        "it or the layer's score passes a threshold chosen on five-fold out-of-fold scores of *tune* for at most 1 %",
        "of its ordinary texts.",
        "The MiniLM embedding was not used: the flag must work without the model, and the layer already costs more",
        "than the rules.",
        "",
        "By style and by language, all splits (this detector | the old one; injections caught, ordinary flagged),",
        "then the *fresh* split alone, before (the rules as frozen) and after:",
        "",
        "| style | injections caught | ordinary flagged | old: caught | old: flagged |",
        "|---|---:|---:|---:|---:|",
        *[
            f"| {style} | {n.caught} of {n.injections} | {n.flagged} of {n.ordinary} | {o.caught} of {o.injections} | "
            f"{o.flagged} of {o.ordinary} |"
            for style, (n, o) in r.by_style.items()
        ],
        "",
        "| language | injections caught | ordinary flagged | old: caught | old: flagged |",
        "|---|---:|---:|---:|---:|",
        *[
            f"| {lang} | {n.caught} of {n.injections} | {n.flagged} of {n.ordinary} | {o.caught} of {o.injections} | "
            f"{o.flagged} of {o.ordinary} |"
            for lang, (n, o) in r.by_lang.items()
        ],
        "",
        *_before_after("style", r.fresh_by_style),
        *_before_after("language", r.fresh_by_lang),
        "Missed injections:",
        "",
        *[f"- `{item.split}` {item.style}: {json.dumps(item.text, ensure_ascii=False)}" for item in missed],
        "",
        "Ordinary texts flagged:" if flagged else "No ordinary text is flagged.",
        "",
        *[f"- `{item.split}` {item.style}: {json.dumps(item.text, ensure_ascii=False)}" for item in flagged],
        "",
        "No maintained library was compared: the ones that exist (LLM Guard, Rebuff, Prompt Guard) run a",
        "transformer classifier, far heavier than orcmem's dependencies and than a check on every write.",
        "",
    ]
    return lines


if __name__ == "__main__":
    print("\n".join(render(run())))
