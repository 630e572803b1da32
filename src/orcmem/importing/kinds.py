"""Which of the memory types a line of someone's notes is, by simple rules read in order (docs/importing.md,
Types): the first rule that matches decides, and a line no rule matches is a `fact`."""

from __future__ import annotations

import re

from orcmem.models.types import MemoryType

# Programs whose name, first in a code span, makes the line a command to run.
COMMAND_PROGRAMS = (
    "npm npx pnpm yarn bun deno node make cmake just cargo go rustc uv uvx pip pipx python python3 pytest tox nox "
    "poetry ruff mypy black flake8 eslint prettier tsc jest vitest docker docker-compose kubectl helm terraform git "
    "gh bundle rake rails rspec mvn gradle ./gradlew dotnet swift xcodebuild composer php mix elixir bazel ninja "
    "pre-commit hatch pdm conda brew apt apt-get sh bash zsh source export"
).split()
_COMMAND_SPAN = re.compile(r"`(?:\$\s*)?(\.{1,2}/[\w./-]+|[\w.-]+)(?:\s[^`]*)?`")

_PROHIBITION = re.compile(r"^(never|don't|do not|avoid|no )|\b(never|must not|mustn't|is (forbidden|banned))\b")
# (type, pattern) in the order they are tried; each pattern is matched against the lowercased line.
RULES: tuple[tuple[MemoryType, re.Pattern[str]], ...] = (
    (
        MemoryType.OWNERSHIP,
        re.compile(r"\b(owned by|owner of|owners? (is|are)|maintain(s|ed) by|codeowners|ask @|ping @|reviewed by @)"),
    ),
    (
        MemoryType.PREFERENCE,
        re.compile(
            r"\b(i prefer|i like|i want|i don't like|i do not like|i hate|my preference|(the )?user (prefers|likes|"
            r"wants|dislikes)|rather than asking|keep (answers|replies|responses|explanations))"
        ),
    ),
    (
        MemoryType.DECISION,
        re.compile(
            r"\b(we (decided|chose|picked|went with|agreed)|decided to|decision|chosen over|"
            r"in favou?r of|trade-?off|adr\b)"
        ),
    ),
    (
        MemoryType.ENV_QUIRK,
        re.compile(
            r"\b(on (macos|linux|windows|wsl|ci|arm|m1|m2)|flaky|workaround|quirk|gotcha|beware|known issue|"
            r"env(ironment)? var|requires? (node|python|java|docker)|times? out|hangs?\b|segfaults?)"
        ),
    ),
    (
        MemoryType.WORKFLOW,
        re.compile(
            r"\b(before (you )?(commit|push|merg|open|releas)|after (you )?(commit|merg|chang)|"
            r"release process|pull requests?|\bprs?\b|step \d|first,? .* then|workflow|deploy(s|ing|ment)? )"
        ),
    ),
    (
        MemoryType.CONVENTION,
        re.compile(
            r"\b(always|never|must|should|shall|don't|do not|avoid|prefer|use |name[sd]? |naming|style|format(ted)?|"
            r"indent|convention|import|tests? (go|live)|keep )"
        ),
    ),
)
# A section heading that names a kind decides for the lines under it that no stronger rule claims.
HEADING_HINTS: tuple[tuple[MemoryType, re.Pattern[str]], ...] = (
    (MemoryType.PREFERENCE, re.compile(r"\bpreferences?\b")),
    (MemoryType.DECISION, re.compile(r"\b(decisions?|architecture|design)\b")),
    (MemoryType.CONVENTION, re.compile(r"\b(conventions?|style|guidelines?|rules?|standards?|do'?s)\b")),
    (MemoryType.WORKFLOW, re.compile(r"\b(workflow|process|releas(e|ing)|contributing)\b")),
    (MemoryType.ENV_QUIRK, re.compile(r"\b(gotchas?|quirks?|pitfalls?|troubleshooting|known issues)\b")),
)


def runs_a_command(text: str) -> bool:
    """Whether the line names a command to run: a code span starting with a known program, or a `$ ` prompt."""
    for match in _COMMAND_SPAN.finditer(text):
        program = match.group(1)
        if program in COMMAND_PROGRAMS or program.startswith(("./", "../")) or match.group(0).startswith("`$"):
            return True
    return False


def kind_of(text: str, heading: str = "") -> MemoryType:
    """The memory type of one entry of notes, from its words and, failing those, its section's heading."""
    lowered = " ".join(text.lower().split())
    # "never run `git push --force`" is a rule of the house, not a command to run.
    if runs_a_command(text) and not _PROHIBITION.search(lowered):
        return MemoryType.COMMAND
    for memory_type, pattern in RULES[:-1]:  # the strong rules: a named owner, a preference, a decision, a quirk...
        if pattern.search(lowered):
            return memory_type
    heading_lowered = heading.lower()
    for memory_type, pattern in HEADING_HINTS:
        if pattern.search(heading_lowered):
            return memory_type
    if RULES[-1][1].search(lowered):
        return MemoryType.CONVENTION
    return MemoryType.FACT
