"""Does a memory still match the code it cites? The rules, free of the database (docs/freshness.md).

A memory's files are its citations. When it is written or confirmed, each gets a fingerprint: the file's git blob
id (computed here, the same as `git hash-object` for a file git does not filter; outside git it is simply a content
hash) and the names the memory mentions that the file then held (functions, classes, scripts). A `command` memory
also cites the program it runs. Later the citation is judged against the file as it is now:

- unchanged: the same blob;
- renamed: gone from its path, found at another (git's rename detection, or the same content elsewhere, or every
  name it defined now defined in the tree: moved and rewritten in one step);
- changed: another blob, every named symbol still there, or defined elsewhere now (how many lines changed is
  reported);
- possibly stale: the file is gone, or a symbol the memory names is no longer in it (a name it defined no longer
  defined) nor defined elsewhere, or the script or program a command runs is gone.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from orcmem.models.types import Status

# Names worth checking: code-like words. A word the memory puts in backticks, a name followed by "(", and words
# that only code uses: snake_case, _private, camelCase, CamelCase with an inner capital (HTTPStatusError too), the
# last part of dotted.names, and a capitalised word that is a usual class name's last word (Client, Error) when it is
# not the first word of a sentence. Paths are taken out first: the words of a cited path are not names it holds.
_BACKTICKED = re.compile(r"`([^`\n]{1,200})`")
_CALLED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]{2,})\(")
_CODE_WORD = re.compile(
    r"(?<![\w.])([a-z][a-z0-9]*_[a-z0-9_]+|_{1,2}[A-Za-z][A-Za-z0-9_]*|[a-z]+[A-Z][A-Za-z0-9]+"
    r"|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[A-Z]{2,}[a-z]{2,}[A-Za-z0-9]*)(?![\w])"
)
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?![\w])")
_CLASS_WORD = re.compile(
    r"(?<![\w.])(Client|Server|Error|Exception|Handler|Manager|Factory|Adapter|Mixin|Middleware|Serializer|Registry"
    r"|Router|Transport|Protocol|Config|Settings|Session|Loader|Parser|Builder|Provider|Backend|Wrapper)(?![\w])"
)
_PATH_LIKE = re.compile(
    r"[\w.~-]*(?:/[\w.-]+)+/?|\b[\w-]+(?:\.[\w-]+)*\.(?:py|pyi|pyx|js|jsx|mjs|ts|tsx|md|rst|txt|toml|cfg|ini|json"
    r"|yaml|yml|sh|rb|go|rs|java|kt|cs|cpp|hpp|html|css|lock|sql|xml|csv)\b"
)
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*[-*#>]*\s*)$")
_NOT_NAMES = frozenset(
    "GitHub GitLab JavaScript TypeScript PostgreSQL MySQL SQLite MacOS macOS iOS PyPI YouTube OpenAI ChatGPT "
    "LinkedIn PowerShell VSCode DevOps iPhone iPad npm com org net".split()
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_GLOB = re.compile(r"[*?\[]")
DEFINED = "def:"  # a watched name the file defined (def, class, assignment): it must stay defined, not just mentioned
MEMBER = "member:"  # a watched `Class.method` the file's class defined: the class (or a base) must still define it
_DEFINITION = (
    r"^[ \t]*(?:(?:async|export|pub|public|private|protected|static|default|abstract|final|override)[ \t]+)*"
    r"(?:def|class|function|fn|func|struct|interface|type|enum|trait|const|let|var|module)[ \t]+{name}(?![\w])"
    r"|^[ \t]*(?:self\.|this\.)?{name}[ \t]*(?::[^=\n]*)?=(?!=)"
    r"|^[ \t]*{name}[ \t]*\(\)[ \t]*\{{"
)
MAX_SYMBOLS = 20
_TEST_FOLDERS = frozenset({"tests", "test", "testing", "__tests__", "spec", "specs"})


class State:
    """What a check found."""

    FRESH = "fresh"  # unchanged, renamed, or changed with every named symbol still there
    STALE = "stale"  # possibly stale: cited code or program gone, or a named symbol vanished


@dataclass(frozen=True, slots=True)
class Judgement:
    """One citation's outcome: the state, a one-line reason, and the new path when the file was renamed."""

    state: str
    reason: str
    renamed_to: str | None = None
    changed_lines: int | None = None


def blob_id(data: bytes) -> str:
    """Git's blob id of these bytes (what `git hash-object` prints for a file git stores as is)."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


def is_citable(path: str) -> bool:
    """Whether a memory's file entry names one file (not a glob) that a check can look at."""
    return bool(path.strip()) and not _GLOB.search(path) and "\n" not in path


def named_symbols(title: str, body: str, paths: Sequence[str] = ()) -> list[str]:
    """The code-like names a memory mentions, in order, at most MAX_SYMBOLS; none is a word of a path (of the text,
    or of the cited `paths`: `tests/test_json_tag.py` does not make `test_json_tag` a name)."""
    text = _PATH_LIKE.sub(" ", f"{title}\n{body}")
    found: list[str] = []
    for span in _BACKTICKED.findall(text):
        found += _IDENTIFIER.findall(span)
    found += _CALLED.findall(text) + _CODE_WORD.findall(text)
    found += [dotted.rsplit(".", 1)[1] for dotted in _DOTTED.findall(text)]
    found += [m.group(1) for m in _CLASS_WORD.finditer(text) if not _SENTENCE_START.search(text[: m.start()])]
    path_words = {word for path in paths for word in re.split(r"[/\\.]", path)}
    kept = [n for n in found if len(n) >= 3 and n not in path_words and n not in _NOT_NAMES]
    return list(dict.fromkeys(kept))[:MAX_SYMBOLS]


def _mentioned(name: str, text: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text) is not None


def definition_pattern(name: str) -> re.Pattern[str]:
    """A line that defines `name` (def, class, function, assignment), not one that imports or uses it."""
    return re.compile(_DEFINITION.format(name=re.escape(name)), re.MULTILINE)


def watched_name(entry: str) -> str:
    """The name of a watched entry (`def:load_config` -> `load_config`, `member:Cache.clear` -> `Cache.clear`)."""
    return entry.removeprefix(DEFINED).removeprefix(MEMBER)


def named_members(title: str, body: str) -> list[str]:
    """The `Class.method` names a memory writes (a capitalised part before the last), paths taken out first."""
    text = _PATH_LIKE.sub(" ", f"{title}\n{body}")
    found = []
    for dotted in _DOTTED.findall(text):
        *_before, owner, member = dotted.split(".")
        if owner.lstrip("_")[:1].isupper() and len(member) >= 3 and not member.startswith("__"):
            found.append(f"{owner}.{member}")
    return list(dict.fromkeys(found))


def class_block(text: str, name: str) -> tuple[str, list[str]] | None:
    """The body of the class `name` in a file's text (the lines indented under its `class` line) and the names of
    its bases; None when the text declares no such class."""
    head = re.search(rf"^([ \t]*)class[ \t]+{re.escape(name)}\b([^\n]*)$", text, re.MULTILINE)
    if head is None:
        return None
    indent, rest = len(head.group(1).expandtabs()), head.group(2)
    inside = re.match(r"\s*\(([^)]*)\)", rest)
    listed = inside.group(1) if inside else (re.findall(r"extends[ \t]+([\w.]+)", rest) or [""])[0]
    bases = [part.strip().rsplit(".", 1)[-1] for part in listed.split(",") if part.strip() and "=" not in part]
    lines = []
    for line in text[head.end() + 1 :].splitlines():
        if line.strip() and len(line) - len(line.lstrip()) <= indent and not line.lstrip().startswith((")", "#")):
            break
        lines.append(line)
    return "\n".join(lines), [base for base in bases if base not in ("object", "")]


def member_here(text: str, member: str) -> bool | list[str]:
    """Whether a file's text defines `Class.method` in that class or a base it also declares: True, False (no such
    class), or the names of the bases to look for elsewhere."""
    owner, name = member.split(".", 1)
    seen: set[str] = set()
    waiting, further = [owner], []
    while waiting:
        cls = waiting.pop()
        if cls in seen:
            continue
        seen.add(cls)
        found = class_block(text, cls)
        if found is None:
            if cls == owner:
                return False
            further.append(cls)
            continue
        if definition_pattern(name).search(found[0]):
            return True
        waiting += found[1]
    return further


def symbols_held(symbols: list[str], content: bytes) -> list[str]:
    """The watch list of a file: those of `symbols` the content holds as whole words, each marked DEFINED when the
    content defines it (then a later import or mention alone no longer counts)."""
    text = content.decode("utf-8", errors="replace")
    return [
        (DEFINED + name if definition_pattern(name).search(text) else name)
        for name in symbols
        if _mentioned(name, text)
    ]


# a declaration followed by what only code puts after its name (`(`, `:`, `{`, `<`, `extends`...): "a function
# for" in a docstring declares nothing
_DECLARED = re.compile(
    r"^[ \t]*(?:(?:async|export|pub|public|static|default|abstract)[ \t]+)*"
    r"(?:def|class|function|fn|func|struct|interface|trait|enum)[ \t]+([A-Za-z_][A-Za-z0-9_]{2,})"
    r"(?=[ \t]*[(:<{\[;]|[ \t]+(?:extends|implements)\b)",
    re.MULTILINE,
)
_WORD = re.compile(r"(?<![\w.])[A-Za-z_][A-Za-z0-9_]{2,}(?![\w])")


def watch_list(title: str, body: str, paths: Sequence[str], content: bytes) -> list[str]:
    """What to watch in one cited file: the memory's code-like names the file holds (`symbols_held`); when it holds
    none, the plain words of the memory the file declares as a function or class ("the sign in signer.py": `def
    sign`), a word that in this file names code although its shape does not say so. A memory that names code
    plainly ("test_basic, run it after...") writes its other words as prose: they are not watched. At most
    MAX_SYMBOLS."""
    held = symbols_held(named_symbols(title, body, paths), content)
    text = content.decode("utf-8", errors="replace")
    # a word of the cited path is a name after all where the file defines it (`test_serving` in test_serving.py)
    held += [
        DEFINED + name
        for name in named_symbols(title, body)
        if DEFINED + name not in held and definition_pattern(name).search(text)
    ]
    held += [MEMBER + member for member in named_members(title, body) if member_here(text, member) is True]
    declared = set(_DECLARED.findall(text))
    if held or not declared:
        return held[:MAX_SYMBOLS]
    path_words = {word for path in paths for word in re.split(r"[/\\.]", path)}
    taken = {watched_name(entry) for entry in held}
    words = _WORD.findall(_PATH_LIKE.sub(" ", f"{title}\n{body}"))
    plain = [w for w in dict.fromkeys(words) if w in declared and w not in taken and w not in path_words]
    return (held + [DEFINED + word for word in plain])[:MAX_SYMBOLS]


def missing(watched: list[str], content: bytes) -> list[str]:
    """The names of a watch list the content no longer holds: a DEFINED one no longer defined, another no longer
    mentioned."""
    text = content.decode("utf-8", errors="replace")

    def holds(entry: str) -> bool:
        if entry.startswith(MEMBER):
            return member_here(text, watched_name(entry)) is True
        if entry.startswith(DEFINED):
            return definition_pattern(watched_name(entry)).search(text) is not None
        return _mentioned(entry, text)

    return [watched_name(entry) for entry in watched if not holds(entry)]


def command_program(title: str, body: str) -> str | None:
    """The program or script a `command` memory runs: the first word of its first backticked span (else of its
    body's first line), after environment assignments and `sudo`."""
    spans = _BACKTICKED.findall(body) or _BACKTICKED.findall(title) or [body.strip().splitlines()[0] if body else ""]
    for word in spans[0].split():
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", word) or word in ("sudo", "env", "$"):
            continue
        return word.strip("'\"") or None
    return None


def is_script_path(program: str) -> bool:
    """Whether a program names a file of the project (`./deploy.sh`, `scripts/release`), not one found on PATH."""
    return "/" in program or program.endswith((".sh", ".py", ".js", ".ts", ".rb", ".pl"))


def judge_file(
    path: str,
    fingerprint_blob: str | None,
    symbols: list[str],
    current: bytes | None,
    renamed_to: str | None,
    renamed_content: bytes | None,
    changed_lines: int | None,
    deleted_on: str | None,
    elsewhere: Mapping[str, Sequence[str]] | None = None,
) -> Judgement:
    """One cited file now: `current` is its content (None: gone), `renamed_to` where git says it went, `elsewhere`
    the files of the tree that define each name now (None: not searched)."""
    elsewhere = _outside_tests(elsewhere, path)
    if current is None and renamed_to is not None:
        gone = missing(symbols, renamed_content or b"")
        if gone and not _all_moved(gone, symbols, elsewhere):
            return Judgement(State.STALE, _vanished(gone, renamed_to), renamed_to)
        return Judgement(State.FRESH, f"{path} was renamed to {renamed_to}", renamed_to)
    if current is None and fingerprint_blob is None:  # not there when the memory was saved either: nothing moved
        return Judgement(State.FRESH, f"{path} was not there when the memory was saved")
    if current is None:
        found = _new_home(symbols, elsewhere, path)
        if found is not None:  # moved and rewritten in one step: its names are defined at the new path
            return Judgement(State.FRESH, f"{path} moved to {found} (the names it mentions are defined there)", found)
        when = f" on {deleted_on}" if deleted_on else ""
        return Judgement(State.STALE, f"the file it cites, {path}, was deleted{when}")
    if fingerprint_blob is None or blob_id(current) == fingerprint_blob:
        return Judgement(State.FRESH, f"{path} is unchanged")
    gone = missing(symbols, current)
    if gone and _all_moved(gone, symbols, elsewhere) and elsewhere is not None:
        home = _new_home(symbols, elsewhere, path) if len(gone) == len(symbols) else None
        if home is not None and all(home in elsewhere[name] for name in gone):  # all it watched went there: follow
            return Judgement(State.FRESH, f"{_names(gone)} moved from {path} to {home}", home, changed_lines)
        where = ", ".join(sorted({elsewhere[name][0] for name in gone}))
        return Judgement(State.FRESH, f"{path} changed; {_names(gone)} now defined in {where}", None, changed_lines)
    if gone:
        return Judgement(State.STALE, _vanished(gone, path), changed_lines=changed_lines)
    how_much = f" ({changed_lines} lines changed)" if changed_lines is not None else ""
    return Judgement(
        State.FRESH, f"{path} changed{how_much}; the names it mentions are still there", None, changed_lines
    )


def is_test_path(path: str) -> bool:
    """Whether a path is a test's (a tests/ folder, tests.py, `test_*.py`, `*_test.go`, `*.spec.ts`, conftest.py)."""
    *folders, name = path.split("/")
    return (
        any(folder in _TEST_FOLDERS for folder in folders)
        or name.startswith("test_")
        or name.rsplit(".", 1)[0] in _TEST_FOLDERS
        or name == "conftest.py"
        or re.search(r"[._](?:test|spec)\.\w+$", name) is not None
    )


def _outside_tests(elsewhere: Mapping[str, Sequence[str]] | None, cited: str) -> Mapping[str, Sequence[str]] | None:
    """Where names are defined now, without the test files unless the cited file is one: code does not move into
    a test, and a name a test defines (a local helper, a stand-in class) is not the cited one's new home."""
    if elsewhere is None or is_test_path(cited):
        return elsewhere
    return {name: [path for path in paths if not is_test_path(path)] for name, paths in elsewhere.items()}


def _all_moved(gone: list[str], symbols: list[str], elsewhere: Mapping[str, Sequence[str]] | None) -> bool:
    """Whether every vanished name was a definition of the file and is defined elsewhere in the tree now."""
    defined = set(names_to_find(symbols, members=True))
    return elsewhere is not None and all(name in defined and elsewhere.get(name) for name in gone)


def _new_home(symbols: list[str], elsewhere: Mapping[str, Sequence[str]] | None, old: str) -> str | None:
    """Where a gone file went: the file defining the most of the names it defined (every one of them defined
    somewhere now), the one with the same file name first; None when it defined none or one is gone."""
    defined = names_to_find(symbols, members=True)
    if not defined or elsewhere is None or not all(elsewhere.get(name) for name in defined):
        return None
    candidates = {path for name in defined for path in elsewhere[name]}
    base = old.rsplit("/", 1)[-1]

    def score(path: str) -> tuple[int, bool, int]:
        return (sum(path in elsewhere[name] for name in defined), path.rsplit("/", 1)[-1] == base, -len(path))

    return max(sorted(candidates), key=score)


def names_to_find(symbols: list[str], *, members: bool = False) -> list[str]:
    """The names of a watch list worth looking for across the tree: those the file defined, with each member's
    class (or, `members`, the `Class.method` itself)."""
    found = [watched_name(entry) for entry in symbols if entry.startswith(DEFINED)]
    for entry in symbols:
        if entry.startswith(MEMBER):
            found.append(watched_name(entry) if members else watched_name(entry).split(".", 1)[0])
    return list(dict.fromkeys(found))


def _names(names: list[str]) -> str:
    return ", ".join(f"`{name}`" for name in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _vanished(names: list[str], path: str) -> str:
    return f"{_names(names)} no longer in {path}"


def judge_program(program: str, found_then: bool, found_now: bool, is_script: bool) -> Judgement:
    """A command's program: stale only when it was there when the memory was saved and is gone now."""
    if found_now or not found_then:
        return Judgement(State.FRESH, f"{program} is there" if found_now else f"{program} was never found here")
    where = "in the project" if is_script else "on PATH"
    return Judgement(
        State.STALE, f"the command's {'script' if is_script else 'program'} {program} is no longer {where}"
    )


def defined_where(names: set[str], lines: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    """For each of `names`, the files whose (path, line) pairs hold a definition of it."""
    found: dict[str, set[str]] = {}
    for path, text in lines:
        for word in set(_IDENTIFIER.findall(text)) & names:
            if definition_pattern(word).search(text):
                found.setdefault(word, set()).add(path)
    return {name: sorted(paths) for name, paths in found.items()}


def possibly_stale(status: str, stale_reason: str | None) -> bool:
    """The one rule behind every "possibly stale" mark and count (the page's badge, the Overview, the CLI): an
    active memory the freshness check found out of step with its code. A stale or retracted one is already out of
    agents' sight, and is counted as such."""
    return status == Status.ACTIVE and bool(stale_reason)
