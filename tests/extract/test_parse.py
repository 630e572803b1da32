"""parse_extraction: each lenient rule, and a property test that it never raises."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orcmem.extract.parse import ExtractedMemory, ExtractedSummary, Extraction, parse_extraction
from orcmem.models.constants import EXTRACTION_TYPES


def memory(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "type": "lesson",
        "title": "Use the forks pool",
        "body": "vitest threads crash on this machine",
        "topicKey": "test/pool",
        "files": ["vitest.config.ts"],
        "confidence": 0.8,
    }
    base.update(fields)
    return base


def answer(memories: list[Any] | None = None, summary: Any = None, **extra: Any) -> str:
    data: dict[str, Any] = {
        "summary": summary
        if summary is not None
        else {"request": "fix it", "workDone": "switched pool", "outcome": "tests pass", "openItems": ["docs"]},
        "memories": memories if memories is not None else [memory()],
    }
    data.update(extra)
    return json.dumps(data)


def test_a_clean_answer() -> None:
    assert parse_extraction(answer()) == Extraction(
        summary=ExtractedSummary("fix it", "switched pool", "tests pass", ("docs",)),
        memories=(
            ExtractedMemory(
                "lesson",
                "Use the forks pool",
                "vitest threads crash on this machine",
                "test/pool",
                ("vitest.config.ts",),
                0.8,
            ),
        ),
    )


@pytest.mark.parametrize(
    "wrapped",
    [
        "```json\n{body}\n```",
        "```\n{body}\n```",
        "Here is the memory:\n```json {body}``` hope it helps",
        "Sure! {body} -- end",
        "  {body}  ",
    ],
)
def test_fences_and_prose_around_the_object(wrapped: str) -> None:
    raw = wrapped.replace("{body}", answer())
    assert parse_extraction(raw) == parse_extraction(answer())


def test_a_json_string_holding_the_json() -> None:
    assert parse_extraction(json.dumps(answer())) == parse_extraction(answer())
    assert parse_extraction(json.dumps("```json\n" + answer() + "\n```")) == parse_extraction(answer())
    assert parse_extraction(json.dumps("no json here")) is None


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "no braces",
        "} backwards {",
        "{not json}",
        "[1, 2]",
        "null",
        '{"a": NaN}',
        '{"summary": {}} trailing }',
        "{" * 5000 + "}" * 5000,
        '{"a":' * 100_000 + "1" + "}" * 100_000,  # too deep for the parser
    ],
)
def test_no_object_gives_none(raw: str) -> None:
    assert parse_extraction(raw) is None


def test_an_array_with_an_object_inside_reads_from_first_brace_to_last() -> None:
    # First "{" to last "}" of '[{"summary":{}}]' is an object, as in the reference.
    parsed = parse_extraction('[{"summary":{"request":"r"}}]')
    assert parsed is not None and parsed.summary.request == "r"


def test_summary_defaults() -> None:
    parsed = parse_extraction('{"memories": []}')
    assert parsed == Extraction(ExtractedSummary("", "", "unknown", ()), ())
    parsed = parse_extraction(
        json.dumps({"summary": {"request": "  r  ", "workDone": 5, "outcome": "   ", "openItems": [" a ", 1, None]}})
    )
    assert parsed is not None
    assert parsed.summary == ExtractedSummary("r", "", "unknown", (" a ",))  # open items are not trimmed
    assert parse_extraction(json.dumps({"summary": ["x"], "memories": "x"})) == Extraction()


def test_only_the_first_six_raw_entries_count() -> None:
    entries: list[Any] = [None, "x", memory(title="")] + [memory(title=f"t{i}") for i in range(10)]
    parsed = parse_extraction(answer(entries))
    assert parsed is not None
    assert [m.title for m in parsed.memories] == ["t0", "t1", "t2"]  # malformed entries used up three slots


def test_unknown_or_missing_type_becomes_lesson() -> None:
    parsed = parse_extraction(answer([memory(type="fact"), memory(type=None), memory(type="Decision"), memory()]))
    assert parsed is not None
    assert [m.type for m in parsed.memories] == ["lesson", "lesson", "lesson", "lesson"]
    for kind in EXTRACTION_TYPES:
        parsed = parse_extraction(answer([memory(type=kind)]))
        assert parsed is not None and parsed.memories[0].type == kind


def test_title_and_body_are_trimmed_cut_and_required() -> None:
    parsed = parse_extraction(answer([memory(title="  " + "T" * 200 + "  ", body=" " + "B" * 1000)]))
    assert parsed is not None
    assert parsed.memories[0].title == "T" * 120
    assert parsed.memories[0].body == "B" * 800
    for bad in (memory(title="  "), memory(body=""), memory(title=None), memory(body=3)):
        parsed = parse_extraction(answer([bad]))
        assert parsed is not None and parsed.memories == ()


def test_topic_key() -> None:
    keys = [" test/pool ", "   ", None, 5, ""]
    parsed = parse_extraction(answer([memory(topicKey=key) for key in keys]))
    assert parsed is not None
    assert [m.topic_key for m in parsed.memories] == ["test/pool", None, None, None, None]
    entry = memory()
    del entry["topicKey"]
    parsed = parse_extraction(answer([entry]))
    assert parsed is not None and parsed.memories[0].topic_key is None


def test_files_keep_string_elements_up_to_20() -> None:
    files: list[Any] = [f"f{i}" for i in range(30)]
    files.insert(0, 7)
    files.insert(1, None)
    parsed = parse_extraction(answer([memory(files=files), memory(files="a.py")]))
    assert parsed is not None
    assert parsed.memories[0].files == tuple(f"f{i}" for i in range(20))
    assert parsed.memories[1].files == ()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.5, 0.5),
        (0, 0.1),
        (-3, 0.1),
        (7, 1.0),
        (1, 1.0),
        ("0.9", 0.6),
        (None, 0.6),
        (True, 0.6),
        ([0.5], 0.6),
    ],
)
def test_confidence(value: Any, expected: float) -> None:
    parsed = parse_extraction(answer([memory(confidence=value)]))
    assert parsed is not None and parsed.memories[0].confidence == expected


def test_confidence_that_is_not_finite() -> None:
    raw = answer([memory(confidence=0.5)]).replace("0.5", "1e999")
    parsed = parse_extraction(raw)
    assert parsed is not None and parsed.memories[0].confidence == 0.6
    huge = answer([memory(confidence=0.5)]).replace("0.5", "1" + "0" * 400)
    parsed = parse_extraction(huge)
    assert parsed is not None and parsed.memories[0].confidence == 0.6


def test_missing_confidence_is_the_default() -> None:
    entry = memory()
    del entry["confidence"]
    parsed = parse_extraction(answer([entry]))
    assert parsed is not None and parsed.memories[0].confidence == 0.6


def test_not_a_string_gives_none() -> None:
    assert parse_extraction(None) is None  # type: ignore[arg-type]
    assert parse_extraction(b"{}") is None  # type: ignore[arg-type]


# --- never raises ------------------------------------------------------------------------------------------------
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda children: st.lists(children, max_size=8) | st.dictionaries(st.text(max_size=12), children, max_size=8),
    max_leaves=40,
)
MEMORY_LIKE = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from([*EXTRACTION_TYPES, "fact", ""]) | JSON_VALUES,
        "title": st.text() | JSON_VALUES,
        "body": st.text() | JSON_VALUES,
        "topicKey": st.none() | st.text() | JSON_VALUES,
        "files": st.lists(st.text() | JSON_VALUES, max_size=30) | JSON_VALUES,
        "confidence": st.floats(allow_nan=True, allow_infinity=True) | st.integers() | JSON_VALUES,
    },
)
ANSWERS = st.fixed_dictionaries(
    {},
    optional={
        "summary": st.fixed_dictionaries(
            {},
            optional={
                "request": JSON_VALUES,
                "workDone": JSON_VALUES,
                "outcome": JSON_VALUES,
                "openItems": st.lists(JSON_VALUES, max_size=5) | JSON_VALUES,
            },
        )
        | JSON_VALUES,
        "memories": st.lists(MEMORY_LIKE | JSON_VALUES, max_size=10) | JSON_VALUES,
    },
)


def check(parsed: Extraction | None) -> None:
    if parsed is None:
        return
    assert isinstance(parsed.summary.request, str) and isinstance(parsed.summary.outcome, str)
    assert parsed.summary.outcome != ""
    assert all(isinstance(item, str) for item in parsed.summary.open_items)
    assert len(parsed.memories) <= 6
    for item in parsed.memories:
        assert item.type in EXTRACTION_TYPES
        assert 0 < len(item.title) <= 120 and 0 < len(item.body) <= 800
        assert item.topic_key is None or (item.topic_key and item.topic_key == item.topic_key.strip())
        assert len(item.files) <= 20 and all(isinstance(f, str) for f in item.files)
        assert math.isfinite(item.confidence) and 0.1 <= item.confidence <= 1.0


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_arbitrary_text_never_raises(raw: str) -> None:
    check(parse_extraction(raw))


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES, st.sampled_from(["{}", "```json\n{}\n```", "prose {} prose", "{}}}"]))
def test_arbitrary_json_values_never_raise(value: Any, frame: str) -> None:
    text = json.dumps(value)
    check(parse_extraction(frame.replace("{}", text)))
    check(parse_extraction(json.dumps(text)))


@settings(max_examples=120, deadline=None)
@given(ANSWERS)
def test_answer_shaped_values_never_raise(value: dict[str, Any]) -> None:
    parsed = parse_extraction(json.dumps(value, allow_nan=False) if _finite(value) else json.dumps(value))
    check(parsed)
    if _finite(value):
        assert parsed is not None  # every JSON object parses to something


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_finite(item) for item in value)
    if isinstance(value, dict):
        return all(_finite(item) for item in value.values())
    return True
