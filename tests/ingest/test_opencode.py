"""OpenCode's sessions read from its SQLite database (a real 1.18.33 session as the fixture): finished messages
only, each once, from the message row the last read ended at; orcmem's own recall and fences left out."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from orcmem.host.workspace import locate
from orcmem.ingest.transcript import DETECT_BYTES, detect_agent, parse_transcript
from orcmem.models.ledger import EventKind
from orcmem.models.vocabulary import Agent
from orcmem.service.learning import Learning
from orcmem.service.memory_service import MemoryService

FIXTURE = Path(__file__).parent.parent / "fixtures" / "agents" / "opencode_1.18.33.db"
SESSION = "ses_dadd68af2ffe1e70r9VVSyYI4o"
PROMPT = "Why does cargo build --release fail here without the Cargo.lock lockfile committed?"
WRITTEN = "/tmp/pytest-of-root/pytest-400/test_make_fixture0/project/notes.txt"


def copy(tmp_path: Path) -> Path:
    path = tmp_path / "opencode.db"
    shutil.copy(FIXTURE, path)
    return path


def test_the_database_is_told_from_the_transcripts() -> None:
    assert detect_agent(FIXTURE.read_bytes()[:DETECT_BYTES]) is Agent.OPENCODE


def test_a_real_session_becomes_its_prompt_tool_call_file_change_and_answer() -> None:
    chunk = parse_transcript(FIXTURE, 0, session_id=SESSION)
    kinds = [(event.kind, event.role, event.name) for event in chunk.events]
    assert kinds == [
        (EventKind.MESSAGE, "user", None),
        (EventKind.TOOL_STARTED, None, "write"),
        (EventKind.FILE_CHANGED, None, "write"),
        (EventKind.TOOL_COMPLETED, None, "write"),
        (EventKind.MESSAGE, "assistant", None),
    ]
    prompt, _started, changed, completed, answer = chunk.events
    assert prompt.text == PROMPT  # the synthetic recall part beside it is not the person's prompt
    assert changed.text == WRITTEN and completed.text == "Wrote file successfully." and not completed.is_error
    assert answer.text == "It printed hello."
    assert chunk.agent is Agent.OPENCODE and chunk.model == "standin-1" and chunk.turns == 1
    assert chunk.end_offset == 3 and not chunk.more and chunk.skipped_lines == 0
    assert all(event.at > 1_796_000_000_000 for event in chunk.events)


def test_reading_goes_on_from_the_last_message_and_stops_at_an_unfinished_one(tmp_path: Path) -> None:
    path = copy(tmp_path)
    with sqlite3.connect(path) as db:  # the answer still streaming: OpenCode has not set time.completed yet
        (data,) = db.execute("SELECT data FROM message WHERE rowid = 3").fetchone()
        info = json.loads(data)
        del info["time"]["completed"]
        db.execute("UPDATE message SET data = ? WHERE rowid = 3", (json.dumps(info),))
    first = parse_transcript(path, 0, Agent.OPENCODE, session_id=SESSION)
    assert first.end_offset == 2 and [e.role for e in first.events if e.kind is EventKind.MESSAGE] == ["user"]
    with sqlite3.connect(path) as db:
        db.execute("UPDATE message SET data = ? WHERE rowid = 3", (data,))
    rest = parse_transcript(path, first.end_offset, Agent.OPENCODE, session_id=SESSION)
    assert [e.text for e in rest.events] == ["It printed hello."] and rest.end_offset == 3
    assert parse_transcript(path, 3, Agent.OPENCODE, session_id=SESSION).events == []


def test_another_sessions_id_reads_nothing_and_orcmems_fences_are_cut(tmp_path: Path) -> None:
    assert parse_transcript(FIXTURE, 0, session_id="ses_someone_else").events == []
    path = copy(tmp_path)
    with sqlite3.connect(path) as db:  # the plugin adds memories to a tool's output: learning leaves them out
        (data,) = db.execute("SELECT data FROM part WHERE rowid = 4").fetchone()
        part = json.loads(data)
        part["state"]["output"] += (
            '\n\n<orcmem-context kind="recall" id="ab12">\n- a memory\n</orcmem-context id="ab12">'
        )
        db.execute("UPDATE part SET data = ? WHERE rowid = 4", (json.dumps(part),))
    events = parse_transcript(path, 0, session_id=SESSION).events
    completed = next(e for e in events if e.kind is EventKind.TOOL_COMPLETED)
    assert completed.text.strip() == "Wrote file successfully."


def test_learning_ingests_a_session_once(tmp_path: Path, orcmem_home: Path, project_dir: Path) -> None:
    path = copy(tmp_path)
    service = MemoryService.open(orcmem_home, vectors=False)
    try:
        learning = Learning(service)
        first = learning.ingest(locate(project_dir), path, session_id=SESSION, cwd=str(project_dir), ended=True)
        again = learning.ingest(locate(project_dir), path, session_id=SESSION, cwd=str(project_dir), ended=True)
        assert first.run.agent == "opencode" and first.new_events == 5 and first.new_turns == 1
        assert again.new_events == 0 and again.run.id == first.run.id
    finally:
        service.close()
