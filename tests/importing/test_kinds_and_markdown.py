"""The rules that type a line of notes, and how markdown is cut into entries (docs/importing.md, Types)."""

from __future__ import annotations

import pytest

from orcmem.importing.items import files_named, title_from
from orcmem.importing.kinds import kind_of
from orcmem.importing.markdown import entries, without_front_matter
from orcmem.models.constants import EXPORT_HEADING
from orcmem.models.types import MemoryType

KINDS = [
    ("Run the tests with `pnpm test --filter api`.", "", MemoryType.COMMAND),
    ("`make lint` before anything else", "", MemoryType.COMMAND),
    ("Start it with `./scripts/dev.sh`", "", MemoryType.COMMAND),
    ("Never run `git push --force` on main.", "", MemoryType.CONVENTION),
    ("Don't use `npm install`; this repository uses pnpm.", "", MemoryType.CONVENTION),
    ("The payments module is owned by the platform team.", "", MemoryType.OWNERSHIP),
    ("Ask @dana before touching the schema.", "", MemoryType.OWNERSHIP),
    ("I prefer short answers with the code first.", "", MemoryType.PREFERENCE),
    ("The user prefers tabs over spaces.", "", MemoryType.PREFERENCE),
    ("We decided to keep the monolith until the team doubles.", "", MemoryType.DECISION),
    ("Postgres was chosen over MySQL for its JSON support (ADR 7).", "", MemoryType.DECISION),
    ("On macOS the watcher needs `ulimit -n 4096`... beware.", "", MemoryType.ENV_QUIRK),
    ("The e2e suite is flaky when two runs share a port.", "", MemoryType.ENV_QUIRK),
    ("Before you merge, squash the commits and update the changelog.", "", MemoryType.WORKFLOW),
    ("Always write tests next to the code they test.", "", MemoryType.CONVENTION),
    ("Use snake_case for database columns.", "", MemoryType.CONVENTION),
    ("Invoices are numbered per customer.", "", MemoryType.FACT),
    ("Invoices are numbered per customer.", "Architecture", MemoryType.DECISION),
    ("Two spaces, trailing commas.", "Code style", MemoryType.CONVENTION),
    ("Tag the release, then wait for the build.", "Release process", MemoryType.WORKFLOW),
    ("The CI runners have no GPU.", "Gotchas", MemoryType.ENV_QUIRK),
    ("Short answers.", "Preferences", MemoryType.PREFERENCE),
]


@pytest.mark.parametrize(("line", "heading", "expected"), KINDS)
def test_a_line_is_typed_by_its_words_then_its_heading(line: str, heading: str, expected: MemoryType) -> None:
    assert kind_of(line, heading) is expected


NOTES = f"""---
title: ignored front matter
---
# Project

A short paragraph about the project.

@docs/more.md

## Commands

- `make test`
- Build with `make build`
  - it needs Go 1.22
  continued here

```sh
make dev
```

```
one
two
three
four
five
six
```

| a | b |
|---|---|

<!-- a comment
over lines -->

{EXPORT_HEADING}
- Exported: orcmem wrote this
### still inside the exported section
- Also exported

## After

1. Numbered items count too.
"""


def test_markdown_is_cut_into_entries_under_their_headings() -> None:
    fields, rest = without_front_matter(NOTES)
    assert fields == {"title": "ignored front matter"}
    found = entries(rest, skip_sections=(EXPORT_HEADING,))
    assert [(e.text, e.heading) for e in found] == [
        ("A short paragraph about the project.", "Project"),
        ("Commands: `make test`", "Commands"),
        ("Build with `make build`\n- it needs Go 1.22 continued here", "Commands"),
        ("Commands: `make dev`", "Commands"),
        ("Numbered items count too.", "After"),
    ]
    assert found[0].line == 6  # line numbers are the file's, front matter included


def test_titles_and_files() -> None:
    assert title_from("Short one.") == "Short one."
    long = "**Money is cents**: every amount is an integer number of cents, " + "never a float " * 8
    assert title_from(long) == "Money is cents"
    assert title_from("Deploys: " + "they go out from main through the pipeline every night " * 3).startswith("Deploys")
    assert len(title_from("word " * 200)) <= 120
    text = "See `src/money/cents.ts`, `README.md`, `pnpm test`, `https://x.io/a/b` and `example.com`."
    assert files_named(text) == ("src/money/cents.ts", "README.md")
