"""Two secret scanners' test cases (bench/data/secret_cases) through `orcmem add` and MCP memory_record.

A sample of each scanner's true positives, one case per rule family with the written shape changing from family to
family, is stored through each path; then no run of any reported secret is in any file of the profile (the database,
its WAL, the logs) nor in what the commands answered. Cases the scanners report nothing in are stored unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from orcmem.mcp_server.root import build_server
from orcmem.models.constants import BODY_MAX_CHARS
from orcmem.models.types import MemoryFilter, Project
from orcmem.service.agent_tools import AgentTools
from orcmem.service.memory_service import MemoryService
from orcmem.text.redact import redact
from tests.abuse.fake_secrets import FakeSecret, assert_nowhere, bundles, joined, leaks

DATA = Path(__file__).resolve().parents[2] / "bench" / "data" / "secret_cases"
# detect-secrets reports a private key's BEGIN line alone, with no key under it: orcmem keeps such a line (it names
# a file's kind, and the key itself is what is redacted); docs/security.md says so.
NOT_CLAIMED = {f"PrivateKey.{index}" for index in range(7)}


def _rows(scanner: str) -> list[dict[str, Any]]:
    lines = (DATA / f"{scanner}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _sample(scanner: str) -> list[FakeSecret]:
    """One true positive of every family of the scanner, the shape turning with the family."""
    by_family: dict[str, list[dict[str, Any]]] = {}
    for row in _rows(scanner):
        if row["positive"] and row["family"] not in NOT_CLAIMED:
            by_family.setdefault(row["family"], []).append(row)
    chosen = [rows[index % len(rows)] for index, rows in enumerate(by_family.values())]
    return [FakeSecret(f"{scanner}/{r['family']}/{r['shape']}", r["text"], tuple(r["secrets"])) for r in chosen]


def _negatives(scanner: str, every: int) -> list[str]:
    return [row["text"] for row in _rows(scanner) if not row["positive"]][::every]


SAMPLE = _sample("betterleaks") + _sample("detect-secrets")
# A reported secret can hold text that stays, and rightly: an XML closing tag, a key file's header, the name of the
# rule in the marker ("AGE-SECRET-KEY-1..." -> "[redacted:age-secret-key]"). The 14-character check of the profile
# would take those for leaks: such cases are held to the whole secret being gone instead, and stay few.
NOISY = [case for case in SAMPLE if leaks(redact(case.text), [case])]
CASES = [case for case in SAMPLE if case not in NOISY]
NEGATIVES = _negatives("betterleaks", 60) + _negatives("detect-secrets", 20)


def test_the_cases_the_leak_check_cannot_judge_are_few_and_redacted_whole() -> None:
    assert len(NOISY) <= 0.02 * len(SAMPLE), [case.kind for case in NOISY]
    for case in NOISY:
        assert all(secret not in redact(case.text) for secret in case.parts), case.kind


def test_the_sample_covers_both_scanners_every_family() -> None:
    assert len({case.kind.split("/")[1] for case in CASES if case.kind.startswith("betterleaks/")}) >= 400
    assert len({case.kind.split("/")[1] for case in CASES if case.kind.startswith("detect-secrets/")}) >= 25
    assert len({case.kind.split("/")[2] for case in CASES}) >= 20  # the written shapes


def test_cli_add(service: MemoryService, project: Project, run: Any, orcmem_home: Path) -> None:
    answers = []
    for index, group in enumerate(bundles(CASES, BODY_MAX_CHARS - 40)):
        answers.append(run("add", "--type", "lesson", "--title", f"Cases {index}", "--body", joined(group)).output)
    answers.append(run("list", "--json").output)
    assert_nowhere(orcmem_home, CASES, ("orcmem answers", "\n".join(answers)))


@pytest.mark.anyio
async def test_mcp_memory_record(service: MemoryService, project: Project, orcmem_home: Path) -> None:
    tools = AgentTools(service, project, mode="accept-edits", headless=True, auto_approve=False, session_id="s")
    answers = []
    async with Client(build_server(tools)) as client:
        for index, group in enumerate(bundles(CASES, BODY_MAX_CHARS - 40)):
            arguments = {"type": "lesson", "title": f"Scanner cases {index}", "body": joined(group)}
            result = await client.call_tool("memory_record", arguments)
            answers.append(result.content[0].text)  # type: ignore[union-attr]
            assert not result.is_error, answers[-1]
    assert_nowhere(orcmem_home, CASES, ("mcp answers", "\n".join(answers)))


def test_what_the_scanners_report_nothing_in_is_stored_unchanged(
    service: MemoryService, project: Project, run: Any
) -> None:
    for index, text in enumerate(NEGATIVES):
        run("add", "--type", "fact", "--title", f"Setting {index}", "--body", f"We set\n{text}\nin the config.")
    bodies = "\n".join(memory.body for memory in service.list(project, MemoryFilter(limit=500)))
    kept = [text for text in NEGATIVES if text in bodies]
    assert len(kept) >= 0.9 * len(NEGATIVES), sorted(set(NEGATIVES) - set(kept))[:10]
