"""The file layer: JSON edited in place in the file's own layout; files re-planned when changed underneath."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from orcmem.setup_agents.files import FileEdit, Outcome, apply_edits
from orcmem.setup_agents.json_text import render_json
from orcmem.setup_agents.report import ItemChange


def edited(text: str, change) -> str:  # type: ignore[no-untyped-def]
    before = json.loads(text)
    after = copy.deepcopy(before)
    change(after)
    result = render_json(text, before, after)
    assert json.loads(result) == after
    return result


def test_a_new_member_follows_the_files_indentation():
    text = '{\n\t"a": 1,\n\t"b": [1, 2]\n}\n'
    assert edited(text, lambda d: d.update(c={"x": [1]})) == (
        '{\n\t"a": 1,\n\t"b": [1, 2],\n\t"c": {\n\t\t"x": [\n\t\t\t1\n\t\t]\n\t}\n}\n'
    )


def test_a_one_line_file_stays_on_one_line():
    assert edited('{"a":1}', lambda d: d.update(b={"c": 2})) == '{"a":1,"b": {"c": 2}}'


def test_crlf_line_endings_are_kept():
    text = '{\r\n  "a": 1\r\n}\r\n'
    result = edited(text, lambda d: d.update(b=[1]))
    assert "\n" not in result.replace("\r\n", "")
    assert result.startswith('{\r\n  "a": 1,\r\n  "b": [\r\n')


def test_appending_to_a_list_and_taking_it_out_again_round_trips():
    text = '{\n  "hooks": {\n    "Stop": [{"hooks": []}]\n  },\n  "z": "\\u00e9"\n}\n'
    added = edited(text, lambda d: d["hooks"]["Stop"].append({"hooks": [{"type": "command"}]}))
    assert '"z": "\\u00e9"' in added  # untouched escapes stay as written
    removed = render_json(added, json.loads(added), json.loads(text))
    assert removed == text


def test_deleting_members_keeps_the_neighbours_bytes():
    text = '{\n  "a": 1,\n  "b": 2,\n  "c": 3,\n  "d": 4\n}\n'
    assert edited(text, lambda d: (d.pop("a"), d.pop("b"))) == '{\n  "c": 3,\n  "d": 4\n}\n'
    assert edited(text, lambda d: (d.pop("b"), d.pop("d"))) == '{\n  "a": 1,\n  "c": 3\n}\n'
    assert edited(text, lambda d: d.clear()) == "{}\n"


def test_a_changed_scalar_is_replaced_in_place():
    text = '{"hooks": {"Stop": [{"hooks": [{"command": "/old/orcmem hook stop", "timeout": 10}]}]}, "x": [ 1 ]}'
    result = edited(text, lambda d: d["hooks"]["Stop"][0]["hooks"][0].update(command="/new/orcmem hook stop"))
    assert result == text.replace("/old/", "/new/")


def test_an_empty_object_gets_its_first_member_laid_out():
    assert edited('{\n  "mcpServers": {}\n}\n', lambda d: d["mcpServers"].update(o={"a": 1})) == (
        '{\n  "mcpServers": {\n    "o": {\n      "a": 1\n    }\n  }\n}\n'
    )


def test_a_file_changed_after_planning_is_planned_again(tmp_path: Path):
    path = tmp_path / "settings.json"
    path.write_text('{"a": 1}\n')
    seen: list[str | None] = []

    def transform(text: str | None) -> Outcome:
        seen.append(text)
        if len(seen) == 1:
            path.write_text('{"a": 2}\n')  # someone else writes between our read and our write
        doc: dict[str, Any] = json.loads(text or "{}")
        doc["ours"] = True
        return Outcome(json.dumps(doc) + "\n", [ItemChange("x", "added")])

    reports, _ = apply_edits([FileEdit(path, transform)], dry_run=False, backup_dir=tmp_path / "backups")
    assert seen == ['{"a": 1}\n', '{"a": 2}\n']
    assert json.loads(path.read_text()) == {"a": 2, "ours": True}
    assert reports[0].backup is not None and reports[0].backup.read_text() == '{"a": 2}\n'


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path):
    path = tmp_path / "settings.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(Exception, match="UTF-8"):
        apply_edits([FileEdit(path, lambda text: Outcome(text))], dry_run=False, backup_dir=tmp_path / "backups")
