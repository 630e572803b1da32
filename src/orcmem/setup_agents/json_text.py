"""A JSON file rewritten in place: only the members that changed are rewritten, in the file's own indentation.

Every byte outside the changed members (key order, spacing, unknown keys) stays as the user wrote it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from orcmem.models.data_shapes import JsonObject, JsonValue

_WS = re.compile(r"[ \t\n\r]*")
_Edits = list[tuple[int, int, str]]  # (start, end, replacement) in the original JSON text


def render_json(original: str | None, before: JsonObject, after: JsonObject) -> str:
    """The new text of a JSON file: only what changed is rewritten, in the file's indentation; other bytes stay."""
    if original is None or not original.strip():
        return json.dumps(after, indent=2, ensure_ascii=False) + "\n"
    style = _Style.of(original)
    edits: _Edits = []
    _diff(original, _parse(original, _skip(original, 0)), before, after, 0, style, edits)
    text = original
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


@dataclass(frozen=True)
class _Style:
    """How the file is laid out: its indentation unit (None: all on one line) and line ending."""

    indent: str | None
    newline: str

    @classmethod
    def of(cls, text: str) -> _Style:
        newline = "\r\n" if "\r\n" in text else "\n"
        if "\n" not in text.strip():
            return cls(None, newline)
        match = re.search(r"^([ \t]+)\S", text, re.MULTILINE)
        return cls(match.group(1) if match else "  ", newline)

    def dump(self, value: JsonValue, depth: int, *, inline: bool = False) -> str:
        """A value as it would be written at this depth."""
        if self.indent is None or inline:
            return json.dumps(value, ensure_ascii=False)
        text = json.dumps(value, indent=self.indent, ensure_ascii=False)
        return text.replace("\n", self.newline + self.indent * depth)

    def line(self, depth: int) -> str:
        """The break before an item at this depth (nothing for a one-line file)."""
        return "" if self.indent is None else self.newline + self.indent * depth


@dataclass
class _Node:
    """Where a JSON value sits in the text; for containers, where each member or item sits."""

    start: int
    end: int
    members: list[tuple[str, int, _Node]] | None = None  # object: (key, where the member starts, its value)
    items: list[_Node] | None = None  # array


def _skip(text: str, i: int) -> int:
    return _WS.match(text, i).end()  # type: ignore[union-attr]


_DECODER = json.JSONDecoder()


def _parse(text: str, i: int) -> _Node:
    """Spans of the (valid) JSON value starting at i."""
    if text[i] == "{":
        members: list[tuple[str, int, _Node]] = []
        j = _skip(text, i + 1)
        while text[j] != "}":
            key, k = json.decoder.scanstring(text, j + 1)  # type: ignore[attr-defined]
            value = _parse(text, _skip(text, _skip(text, k) + 1))
            members.append((key, j, value))
            j = _skip(text, value.end)
            if text[j] == ",":
                j = _skip(text, j + 1)
        return _Node(i, j + 1, members=members)
    if text[i] == "[":
        items: list[_Node] = []
        j = _skip(text, i + 1)
        while text[j] != "]":
            value = _parse(text, j)
            items.append(value)
            j = _skip(text, value.end)
            if text[j] == ",":
                j = _skip(text, j + 1)
        return _Node(i, j + 1, items=items)
    _, end = _DECODER.raw_decode(text, i)
    return _Node(i, end)


def _same(a: JsonValue, b: JsonValue) -> bool:
    return type(a) is type(b) and a == b


def _diff(
    text: str, node: _Node, before: JsonValue, after: JsonValue, depth: int, style: _Style, edits: _Edits
) -> None:
    """Record the smallest text edits turning `before` (found at node) into `after`."""
    if _same(before, after):
        return
    both_objects = isinstance(before, dict) and isinstance(after, dict) and node.members is not None
    both_arrays = isinstance(before, list) and isinstance(after, list) and node.items is not None
    if both_objects and _diff_object(text, node, before, after, depth, style, edits):
        return
    if both_arrays and _diff_array(text, node, before, after, depth, style, edits):
        return
    inline = "\n" not in text[node.start : node.end] and node.end - node.start > 2 and depth > 0
    edits.append((node.start, node.end, style.dump(after, depth, inline=inline)))


def _diff_object(
    text: str, node: _Node, before: JsonObject, after: JsonObject, depth: int, style: _Style, edits: _Edits
) -> bool:
    assert node.members is not None
    last = {key: n for n, (key, _, _) in enumerate(node.members)}  # JSON's last duplicate wins
    removed = [last[key] for key in before if key not in after]
    added = [key for key in after if key not in before]
    if removed and added:
        return False  # both at once: rewrite this object
    for key, n in last.items():
        if key in after and not _same(before[key], after[key]):
            _diff(text, node.members[n][2], before[key], after[key], depth + 1, style, edits)
    spans = [(start, value.start, value.end) for _, start, value in node.members]
    if removed:
        _delete(text, node, spans, set(removed), edits)
    if added:
        inline = bool(spans) and "\n" not in text[node.start : node.end]
        entries = [
            json.dumps(key, ensure_ascii=False) + ": " + style.dump(after[key], depth + 1, inline=inline)
            for key in added
        ]
        _insert(text, node, spans, entries, depth, style, edits)
    return True


def _diff_array(
    text: str, node: _Node, before: list[JsonValue], after: list[JsonValue], depth: int, style: _Style, edits: _Edits
) -> bool:
    assert node.items is not None
    spans = [(item.start, item.start, item.end) for item in node.items]
    if len(before) == len(after):
        for n, item in enumerate(node.items):
            _diff(text, item, before[n], after[n], depth + 1, style, edits)
        return True
    if len(after) > len(before) and all(_same(a, b) for a, b in zip(before, after, strict=False)):
        inline = bool(spans) and "\n" not in text[node.start : node.end]
        entries = [style.dump(value, depth + 1, inline=inline) for value in after[len(before) :]]
        _insert(text, node, spans, entries, depth, style, edits)
        return True
    kept = _subsequence(before, after)
    if kept is None:
        return False
    _delete(text, node, spans, set(range(len(before))) - kept, edits)
    return True


def _subsequence(before: list[JsonValue], after: list[JsonValue]) -> set[int] | None:
    """Indexes of `before` that make up `after` when it is `before` with some items taken out, else None."""
    kept: set[int] = set()
    n = 0
    for value in after:
        while n < len(before) and not _same(before[n], value):
            n += 1
        if n == len(before):
            return None
        kept.add(n)
        n += 1
    return kept


def _delete(text: str, node: _Node, spans: list[tuple[int, int, int]], gone: set[int], edits: _Edits) -> None:
    """Take members or items out with their separators; the rest keeps its bytes."""
    if len(gone) == len(spans):
        edits.append((node.start + 1, node.end - 1, ""))
        return
    first_kept = min(set(range(len(spans))) - gone)
    for n in sorted(gone):
        if n > first_kept:
            edits.append((spans[n - 1][2], spans[n][2], ""))  # from the end of the one before
        else:
            edits.append((spans[n][0], spans[n + 1][0], ""))  # up to the start of the next


def _insert(
    text: str,
    node: _Node,
    spans: list[tuple[int, int, int]],
    entries: list[str],
    depth: int,
    style: _Style,
    edits: _Edits,
) -> None:
    """Add members or items after the last one, laid out like it (or like the file, in an empty container)."""
    if spans:
        if len(spans) > 1:
            gap = text[spans[-2][2] : spans[-1][0]]
            gap = gap[gap.index(",") + 1 :]
        else:
            gap = text[node.start + 1 : spans[0][0]] or ("" if style.indent is None else " ")
        edits.append((spans[-1][2], spans[-1][2], "".join("," + gap + entry for entry in entries)))
        return
    inner = ("," + style.line(depth + 1)).join(entries)
    edits.append((node.start + 1, node.end - 1, style.line(depth + 1) + inner + style.line(depth)))
