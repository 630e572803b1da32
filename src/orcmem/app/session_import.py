"""`orcmem import sessions`: find this project's past Claude Code and Codex sessions, estimate what distilling them
costs, choose them within a budget, and distil them one at a time as finished runs are."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from orcmem.extract.digest import build_digest, is_empty, render_digest
from orcmem.extract.prompt import build_prompt
from orcmem.host.agent_homes import CLAUDE_PROJECT_NAME_MAX, claude_config_dir, claude_folder_name, codex_home
from orcmem.host.git_process import run_git
from orcmem.host.workspace import Location, locate
from orcmem.ingest.common import count_turns, time_ms
from orcmem.ingest.transcript import open_transcript, parse_transcript
from orcmem.models.constants import EXTRACTION_EVENT_LIMIT
from orcmem.models.ledger import LedgerEvent
from orcmem.models.types import Project
from orcmem.models.vocabulary import Agent, JobState
from orcmem.service.learning import GeneratorFactory, JobOutcome
from orcmem.service.session_import import SessionImports, SessionStatus
from orcmem.worker.loop import JobThread, stop

HEAD_BYTES = 64 * 1024  # a Claude session's cwd and first timestamp are in its first records
CODEX_META_MAX = 1024 * 1024  # a Codex session_meta line carries the base instructions: tens of KiB
CHARS_PER_TOKEN = 4  # the usual rule of thumb for English and code with Claude's and OpenAI's tokenizers
GUESSED_RUN_S = 30.0  # one distillation call when this machine has timed none yet (a claude -p call of ~5k tokens)
STOP_WAIT_S = 10.0  # after Ctrl-C, how long the run in flight gets to put its job back
ORDERS = ("oldest", "newest")


@dataclass(frozen=True, slots=True)
class SessionFile:
    """One past session file of the project."""

    path: Path
    agent: Agent
    session_id: str
    cwd: str | None
    started_at: int  # ms since the epoch: the session's first timestamp, else the file's modification time
    size: int


@dataclass(frozen=True, slots=True)
class Candidate:
    """A session file with what the store knows of it and what distilling it would cost."""

    session: SessionFile
    status: SessionStatus
    tokens: int = 0  # the estimated prompt the distiller would get; 0 when there is nothing to distil
    turns: int = 0


@dataclass(slots=True)
class ImportPlan:
    """What an import would distil, what it leaves, and the estimate."""

    chosen: list[Candidate] = field(default_factory=list)
    learned: int = 0  # imported and distilled before
    live: int = 0  # seen live by the hooks
    empty: int = 0  # no finished turn: nothing to distil
    over_budget: int = 0  # left for a later import by --max-runs or --max-tokens
    run_seconds: float = GUESSED_RUN_S
    timed_here: bool = False  # run_seconds is the median of this machine's distillations, not a guess

    @property
    def tokens(self) -> int:
        """The estimated prompt tokens of every chosen run."""
        return sum(candidate.tokens for candidate in self.chosen)

    @property
    def seconds(self) -> float:
        """The estimated time to distil every chosen run, one after another."""
        return self.run_seconds * len(self.chosen)


@dataclass(slots=True)
class ImportReport:
    """What an import did."""

    distilled: int = 0
    memories: int = 0  # new memories (a lesson the store held already is confirmed, not counted)
    confirmed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)


# --- where the agents keep sessions ---------------------------------------------------------------------------------
def claude_projects_dir(env: Mapping[str, str]) -> Path:
    """Claude Code's projects folder: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects."""
    return claude_config_dir(env, Path(env.get("HOME") or Path.home())) / "projects"


def codex_sessions_dir(env: Mapping[str, str]) -> Path:
    """Codex's sessions folder: $CODEX_HOME/sessions, else ~/.codex/sessions."""
    return codex_home(env, Path(env.get("HOME") or Path.home())) / "sessions"


def project_folders(location: Location) -> list[str]:
    """The working trees of the project: its root and every git worktree of it (resolved), the current one first."""
    folders = [os.path.realpath(location.worktree_root)]
    listing = run_git(Path(location.worktree_root), "worktree", "list", "--porcelain")
    for line in (listing or b"").decode("utf-8", "replace").splitlines():
        if line.startswith("worktree "):
            folder = os.path.realpath(line.removeprefix("worktree "))
            if folder not in folders:
                folders.append(folder)
    return folders


class _Membership:
    """Whether a session's folder belongs to the project: the same git repository when the folder is still there,
    else inside one of the project's working trees (a worktree removed since)."""

    def __init__(self, location: Location, folders: Sequence[str]) -> None:
        self.canonical = location.canonical_root
        self.folders = folders
        self.seen: dict[str, bool] = {}

    def __call__(self, cwd: str) -> bool:
        if cwd not in self.seen:
            self.seen[cwd] = self._belongs(cwd)
        return self.seen[cwd]

    def _belongs(self, cwd: str) -> bool:
        if os.path.isdir(cwd):
            return locate(cwd).canonical_root == self.canonical
        return any(cwd == folder or cwd.startswith(folder.rstrip(os.sep) + os.sep) for folder in self.folders)


def find_sessions(location: Location, env: Mapping[str, str]) -> list[SessionFile]:
    """This project's past Claude Code and Codex session files (of its root and every worktree of it), oldest
    first; other projects' sessions are left out."""
    folders = project_folders(location)
    belongs = _Membership(location, folders)
    found = [
        *_claude_sessions(claude_projects_dir(env), folders, belongs),
        *_codex_sessions(codex_sessions_dir(env), belongs),
    ]
    return sorted(found, key=lambda session: (session.started_at, str(session.path)))


def _claude_sessions(projects: Path, folders: Sequence[str], belongs: Callable[[str], bool]) -> Iterator[SessionFile]:
    """Claude Code's sessions under the project's folder names, and under those of folders inside them (a session
    started in a subfolder), each checked against the cwd it records."""
    try:
        names = [entry.name for entry in os.scandir(projects) if entry.is_dir()]
    except OSError:
        return
    wanted = [claude_folder_name(folder) for folder in folders]
    for name in sorted(names):
        exact = name in wanted
        # A subfolder's name, or a long name whose hash another Claude Code version computed differently.
        near = any(name.startswith(own[:CLAUDE_PROJECT_NAME_MAX] + "-") for own in wanted)
        if not exact and not near:
            continue
        for path in sorted((projects / name).glob("*.jsonl")):
            session = _claude_session(path)
            if session is None:
                continue
            if session.cwd is not None and not belongs(os.path.realpath(session.cwd)):
                continue  # two folders can share a name (/a/b-c and /a/b/c): the cwd decides
            if session.cwd is None and not exact:
                continue
            yield session


def _head_records(path: Path, limit: int) -> Iterator[dict[str, object]]:
    """The JSON objects among a file's first `limit` bytes' complete lines."""
    try:
        with open_transcript(path) as handle:
            head = handle.read(limit)
    except OSError:
        return
    for line in head.split(b"\n")[:-1] if len(head) == limit else head.split(b"\n"):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record


def _claude_session(path: Path) -> SessionFile | None:
    try:
        info = path.stat()
    except OSError:
        return None
    cwd: str | None = None
    started = 0
    for record in _head_records(path, HEAD_BYTES):
        if cwd is None and isinstance(record.get("cwd"), str):
            cwd = str(record["cwd"])
        if not started and record.get("timestamp") is not None:
            started = time_ms(record.get("timestamp"))
        if cwd is not None and started:
            break
    return SessionFile(path, Agent.CLAUDE, path.stem, cwd, started or int(info.st_mtime * 1000), info.st_size)


def _codex_sessions(sessions: Path, belongs: Callable[[str], bool]) -> Iterator[SessionFile]:
    """Codex's rollouts (sessions/YYYY/MM/DD/rollout-*.jsonl) whose session ran in the project; a subagent's own
    rollout is left to its parent session."""
    for path in sorted(sessions.glob("[0-9][0-9][0-9][0-9]/[0-9][0-9]/[0-9][0-9]/rollout-*.jsonl")):
        try:
            info = path.stat()
            with open_transcript(path) as handle:
                first = handle.readline(CODEX_META_MAX)
            record = json.loads(first)
        except (OSError, ValueError):
            continue
        payload = record.get("payload") if isinstance(record, dict) else None
        if record.get("type") != "session_meta" or not isinstance(payload, dict):
            continue
        cwd, session_id = payload.get("cwd"), payload.get("session_id") or payload.get("id")
        source = payload.get("source")
        if not isinstance(cwd, str) or not isinstance(session_id, str) or isinstance(source, dict):
            continue
        if not belongs(os.path.realpath(cwd)):
            continue
        started = time_ms(payload.get("timestamp") or record.get("timestamp")) or int(info.st_mtime * 1000)
        yield SessionFile(path, Agent.CODEX, session_id, cwd, started, info.st_size)


# --- the estimate ---------------------------------------------------------------------------------------------------
def read_events(session: SessionFile) -> list[LedgerEvent]:
    """Every event of a session file, read as the ingest reads it (a slice at a time)."""
    events: list[LedgerEvent] = []
    offset = 0
    while True:
        chunk = parse_transcript(session.path, offset, session.agent)
        events.extend(chunk.events)
        if not chunk.more or chunk.end_offset <= offset:
            return events
        offset = chunk.end_offset


def estimate_tokens(events: list[LedgerEvent]) -> int:
    """The prompt tokens the distiller would get for these events (the digest of the newest events, as a first
    pass reads them, in the extraction prompt); 0 when the digest is empty."""
    window = events[-EXTRACTION_EVENT_LIMIT:]
    digest = build_digest(window)
    if is_empty(digest):
        return 0
    prompt = build_prompt("conversation", None, render_digest(digest))
    return -(-len(prompt) // CHARS_PER_TOKEN)


def assess(imports: SessionImports, sessions: Sequence[SessionFile]) -> list[Candidate]:
    """Each session with its status, and for those still to distil, its turns and estimated tokens."""
    candidates = []
    for session in sessions:
        status = imports.status(session.agent, session.session_id, session.size)
        if status not in (SessionStatus.NEW, SessionStatus.PENDING):
            candidates.append(Candidate(session, status))
            continue
        try:
            events = read_events(session)
        except Exception:  # an unreadable file is one session fewer, never the end of the import
            candidates.append(Candidate(session, status))
            continue
        candidates.append(Candidate(session, status, estimate_tokens(events), count_turns(events)))
    return candidates


def plan(
    candidates: Sequence[Candidate],
    *,
    order: str = "oldest",
    max_runs: int | None = None,
    max_tokens: int | None = None,
    run_ms: int | None = None,
) -> ImportPlan:
    """The runs to distil, oldest or newest first, until the next one would pass `max_runs` or `max_tokens`; the
    time from `run_ms` (this machine's median) or a guess."""
    result = ImportPlan(run_seconds=run_ms / 1000 if run_ms else GUESSED_RUN_S, timed_here=bool(run_ms))
    waiting: list[Candidate] = []
    for candidate in candidates:
        if candidate.status is SessionStatus.LEARNED:
            result.learned += 1
        elif candidate.status is SessionStatus.LIVE:
            result.live += 1
        elif candidate.turns == 0 or candidate.tokens == 0:
            result.empty += 1
        else:
            waiting.append(candidate)
    waiting.sort(key=lambda c: (c.session.started_at, str(c.session.path)), reverse=order == "newest")
    tokens = 0
    for index, candidate in enumerate(waiting):
        full_runs = max_runs is not None and len(result.chosen) >= max_runs
        full_tokens = max_tokens is not None and tokens + candidate.tokens > max_tokens
        if full_runs or full_tokens:
            result.over_budget = len(waiting) - index
            break
        result.chosen.append(candidate)
        tokens += candidate.tokens
    return result


# --- distilling -----------------------------------------------------------------------------------------------------
def distil_plan(
    imports: SessionImports,
    project: Project,
    chosen: Sequence[Candidate],
    generators: GeneratorFactory,
    *,
    is_alive: Callable[[int], bool],
    on_run: Callable[[Candidate, JobOutcome | None], None] = lambda _c, _o: None,
) -> ImportReport:
    """Import and distil each chosen session in turn, each committed on its own; Ctrl-C (KeyboardInterrupt) stops
    the model call in flight, puts its run back for the next import, and is raised again."""
    report = ImportReport()
    me = os.getpid()
    for candidate in chosen:
        outcome = _in_thread(imports, partial(_one, imports, project, candidate, generators, me, is_alive))
        _count(report, candidate, outcome, imports.created(project, outcome.run_id) if outcome else 0)
        on_run(candidate, outcome)
    return report


def _one(
    imports: SessionImports,
    project: Project,
    candidate: Candidate,
    generators: GeneratorFactory,
    me: int,
    is_alive: Callable[[int], bool],
) -> JobOutcome | None:
    session = candidate.session
    run = imports.bring_in(project, session.path, session.agent, session.session_id, session.cwd, session.started_at)
    return imports.distil(run, generators, me, is_alive)


def _in_thread(imports: SessionImports, work: Callable[[], JobOutcome | None]) -> JobOutcome | None:
    """Run `work` in a thread so that Ctrl-C reaches this one while a model call runs (the worker's way)."""
    result: list[JobOutcome | None] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            result.append(work())
        except BaseException as exc:  # handed to the main thread, which reports it
            failure.append(exc)

    thread = JobThread(target, "orcmem-import", daemon=True)
    thread.start()
    try:
        thread.wait()
    except KeyboardInterrupt:
        stop(imports.learning)  # claim nothing more, end the model call: its run goes back to the queue
        thread.wait(STOP_WAIT_S)  # not Thread.join: see JobThread
        raise
    if failure:
        raise failure[0]
    return result[0] if result else None


def _count(report: ImportReport, candidate: Candidate, outcome: JobOutcome | None, created: int) -> None:
    if outcome is None or outcome.state == JobState.SKIPPED:
        report.skipped += 1
    elif outcome.state == JobState.DONE:
        report.distilled += 1
        report.memories += created
        report.confirmed += max(outcome.written - created, 0)
    else:
        report.failed += 1
        report.errors.append(f"{candidate.session.path.name}: {outcome.error or outcome.state}")
