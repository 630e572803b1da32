"""Under load: four agent sessions, two distilling workers, the MCP server and the Memory page at once.

`run()` sets up a temporary profile (a project of a few thousand memories with vectors), measures the prompt hook
idle, then for `seconds` runs, all at the same time and over loopback only:

- four simulated agent sessions, each every 100 ms sending a prompt (`orcmem hook prompt`, a new process with
  Claude Code's UserPromptSubmit JSON on stdin) and recording memories (`orcmem add`, and in turn `memory_record`
  and `memory_manage` on one long-lived `orcmem mcp` over stdio, driven by the MCP SDK client); every few seconds
  each session ends its run (`orcmem hook session-end` with a transcript), which queues it;
- two `orcmem worker` processes distilling the queued runs with a stand-in `claude` on PATH that prints a real
  result envelope;
- the MCP server answering `memory_search`, and `orcmem ui` answering GET of the Memory page on 127.0.0.1.

Then it lets the workers drain the queue and checks that no write was lost, that no error reached a user, and
that the database is intact. Every child has a timeout and is killed in a `finally`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import Latency, embedding_source, latency, profile_with_memories, queries

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
TRANSCRIPT = FIXTURES / "agents" / "claude_transcript_sample.jsonl"
HOOK_PAYLOADS = FIXTURES / "agents" / "claude_hook_stdin_docs_examples.json"
ENVELOPES = FIXTURES / "envelopes" / "claude_print_result_envelopes.jsonl"

SESSIONS = 4
WORKERS = 2
TICK_S = 0.1  # each session sends a prompt and records a memory every 100 ms (or as soon as it can, when slower)
RUN_EVERY_S = 5.0  # each session ends its run (and starts a new one) this often
SEARCH_EVERY_S = 0.2
PAGE_EVERY_S = 0.25
WORKER_IDLE_S = 1.0  # a worker that found nothing to do waits this long before the next one starts
STANDIN_DELAY_S = 0.5  # the stand-in model "thinks" this long, so the two workers' jobs overlap
IDLE_SAMPLES = 40
MEMORIES = 2000
RECORD_PATHS = ("cli", "mcp_record", "mcp_manage")
MCP_PATHS = ("mcp_record", "mcp_manage")  # a session's memories through the MCP server, in turn

HOOK_TIMEOUT_S = 60.0
CLI_TIMEOUT_S = 120.0
WORKER_TIMEOUT_S = 300.0
MCP_TIMEOUT_S = 60.0
WEB_TIMEOUT_S = 30.0
START_TIMEOUT_S = 60.0
DRAIN_TIMEOUT_S = 180.0
MAX_ERRORS_KEPT = 100
# What SQLite's busy timeout running out looks like, from SQLite itself or from orcmem's StoreError.
LOCK_WORDS = ("database is locked", "stayed locked", "stayed busy", "busyerror")
MEMORY_ID = re.compile(r"^mem_[0-9a-f]{32}$")
OUTCOME_LINE = re.compile(r"^(run_\w+): (\w+), (\d+) memories")

STANDIN = """#!{python}
# A stand-in for `claude -p --output-format json`: a real result envelope around one new memory.
import json, sys, time, uuid
sys.stdin.read()
time.sleep({delay!r})
token = uuid.uuid4().hex[:12]
answer = {{
    "summary": {{"request": "Say hello", "workDone": "Ran echo hello", "outcome": "printed hello", "openItems": []}},
    "memories": [{{"type": "command", "title": "Print with echo " + token, "body": "echo hello prints hello, run "
        + token, "files": [], "confidence": 0.7}}],
}}
envelope = json.loads({envelope!r})
envelope["result"] = "Here is the JSON:\\n```json\\n" + json.dumps(answer) + "\\n```"
print(json.dumps(envelope))
"""


@dataclass
class LoadResult:
    """What ran, how much of it, what failed, and the prompt hook idle and under load."""

    seconds: float  # the load phase as asked
    elapsed_s: float  # the load phase as it ran
    drain_s: float  # after the load, until every queued run was distilled
    setup_s: float
    memories_before: int
    memories_after: int
    prompt_idle: Latency
    prompt_load: Latency
    prompt_hits: int  # prompts under load that got memories back
    records: dict[str, int]  # successful writes by path: cli, mcp_record, mcp_manage
    record_latency: dict[str, Latency]
    runs_ended: int  # session-end hooks that exited cleanly
    runs_done: int  # of those, runs whose job is done with its memories in the database
    distilled: int  # memories the workers saved
    workers: Latency  # wall time of each `orcmem worker` process, start to exit
    unembedded: int  # memories still without a vector from the model when everything had stopped
    searches: Latency
    pages: Latency
    integrity: str
    lost: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    error_count: int = 0

    @property
    def ok(self) -> bool:
        """No lost write, no error, every queued run distilled and the database intact."""
        return (
            not self.lost
            and not self.error_count
            and self.runs_done == self.runs_ended
            and self.integrity == "ok"
            and self.prompt_load.samples > 0
        )


class Tally:
    """Counts, timings and errors, shared by every thread of the run."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.times: dict[str, list[float]] = {}
        self.counts: dict[str, int] = {}
        self.errors: list[str] = []
        self.error_count = 0
        self.recorded: dict[str, str] = {}  # memory id -> title, for every write that reported success
        self.ended: list[str] = []  # session ids whose session-end hook succeeded

    def time(self, kind: str, seconds: float) -> None:
        """Keep one timing."""
        with self.lock:
            self.times.setdefault(kind, []).append(seconds)

    def count(self, kind: str, n: int = 1) -> None:
        """Add to a counter."""
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + n

    def error(self, what: str, detail: str) -> None:
        """Note an error that reached (or would reach) a user."""
        with self.lock:
            self.error_count += 1
            if len(self.errors) < MAX_ERRORS_KEPT:
                self.errors.append(f"{what}: {detail.strip()[:300]}")


@dataclass
class Called:
    """One finished child process."""

    code: int | None  # None: killed at its timeout
    out: str
    err: str
    seconds: float


class Children:
    """Every child process of the run, each in its own process group, so a timeout or the end kills it whole."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.live: set[subprocess.Popen[str]] = set()
        self.closed = False

    def start(self, argv: list[str], env: dict[str, str], **kw: Any) -> subprocess.Popen[str]:
        """Start a child in a new session (its own process group); refused once the run has ended."""
        with self.lock:
            if self.closed:
                raise RuntimeError("the load run has ended: no new processes")
            proc = subprocess.Popen(argv, env=env, text=True, start_new_session=True, **kw)
            self.live.add(proc)
        return proc

    def call(self, argv: list[str], stdin: str, env: dict[str, str], timeout: float) -> Called:
        """Run a child to its end (or its timeout), wall-timed from start to exit."""
        started = time.perf_counter()
        proc = self.start(argv, env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            out, err = proc.communicate(stdin, timeout=timeout)
            return Called(proc.returncode, out, err, time.perf_counter() - started)
        except subprocess.TimeoutExpired:
            self.kill(proc)
            out, err = proc.communicate()
            return Called(None, out, err, time.perf_counter() - started)
        finally:
            with self.lock:
                self.live.discard(proc)

    def kill(self, proc: subprocess.Popen[str]) -> None:
        """SIGKILL a child's whole process group."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)

    def close(self) -> None:
        """Start no more children and kill every one still running (the `finally` of the run)."""
        with self.lock:
            self.closed = True
            live = list(self.live)
        for proc in live:
            if proc.poll() is None:
                self.kill(proc)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=10)


class McpSession:
    """One long-lived `orcmem mcp` over stdio, driven by the MCP SDK client on its own event loop thread."""

    def __init__(self, argv: list[str], env: dict[str, str], errlog: Path) -> None:
        self.argv, self.env, self.errlog = argv, env, errlog
        self.ready = threading.Event()
        self.failure: BaseException | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.client: Any = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), name="load-mcp", daemon=True)

    async def _main(self) -> None:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters, stdio_client

        self.loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        params = StdioServerParameters(command=self.argv[0], args=self.argv[1:], env=self.env)
        try:
            with self.errlog.open("w") as errlog:
                # The SDK ends the server when this block exits: stdin closed, then the process tree killed.
                async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=MCP_TIMEOUT_S) as client:
                    self.client = client
                    self.ready.set()
                    await self._stop.wait()
        except BaseException as exc:  # reported to the caller of start() or close()
            self.failure = exc
        finally:
            self.ready.set()

    def start(self) -> None:
        """Start the server and wait for the handshake."""
        self._thread.start()
        if not self.ready.wait(START_TIMEOUT_S) or self.client is None:
            raise RuntimeError(f"orcmem mcp did not start: {self.failure!r}")

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, str, float]:
        """Call a tool; (is_error, text, seconds)."""
        assert self.loop is not None
        started = time.perf_counter()
        future = asyncio.run_coroutine_threadsafe(self.client.call_tool(tool, arguments), self.loop)
        result = future.result(MCP_TIMEOUT_S + 5)
        text = "".join(getattr(part, "text", "") for part in result.content)
        return bool(result.is_error), text, time.perf_counter() - started

    def close(self) -> None:
        """End the session and the server."""
        if self.loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)


@dataclass
class Setup:
    """The temporary profile and how to run orcmem against it."""

    work: Path
    home: Path
    project: Path
    transcripts: Path
    orcmem: str
    env: dict[str, str]
    payload: dict[str, Any]


def _prepare(work: Path, memories: int) -> Setup:
    """A profile of `memories` memories with vectors from the int8 MiniLM, and a stand-in `claude` on PATH."""
    from orcmem.app.runtime import models_dir, open_service
    from orcmem.embed.model_files import ensure_model
    from orcmem.service.memory_service import MemoryService

    source = embedding_source()
    home, project, transcripts, bin_dir = work / "home", work / "project", work / "transcripts", work / "bin"
    for folder in (transcripts, bin_dir):
        folder.mkdir(parents=True)
    profile_with_memories(home, project, memories)
    ensure_model(models_dir(home), source)
    service = MemoryService.open(home)
    service.settings.set_embedding_model(source.pins.model_id)
    # A heavy user's minute ends more runs than the default daily budget lets through (each is two calls of ~42k
    # tokens with the stand-in's real usage: the distillation and the contradiction judgement), and a run past the
    # budget rightly waits for tomorrow. This scenario is about concurrency; tests/test_learning_cost.py crosses it.
    service.cost.set_budget(off=True)
    service.close()
    # Every memory gets its vector now: otherwise each process that opens the embedder would embed the backlog.
    service = open_service(home)
    try:
        assert service.pump is not None, "the embedding model did not load"
        service.pump.embed_missing()
    finally:
        service.close()
    envelope = json.loads(ENVELOPES.read_text().splitlines()[-1])  # the success envelope
    claude = bin_dir / "claude"
    claude.write_text(STANDIN.format(python=sys.executable, delay=STANDIN_DELAY_S, envelope=json.dumps(envelope)))
    claude.chmod(0o755)
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("ORCMEM_BARE", "ORCMEM_DISTILLING", "CLAUDE_PROJECT_DIR", "ORCMEM_MCP_MODE")
    }
    env.update(ORCMEM_HOME=str(home), PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", ORCMEM_DISTILL_TIMEOUT="60")
    orcmem = shutil.which("orcmem", path=str(Path(sys.executable).parent)) or "orcmem"
    payload = json.loads(HOOK_PAYLOADS.read_text())["UserPromptSubmit"]
    return Setup(work, home, project, transcripts, orcmem, env, payload)


# --- the actors ----------------------------------------------------------------------------------------------------


def _prompt(setup: Setup, children: Children, tally: Tally, text: str, session: str, kind: str) -> None:
    """One `orcmem hook prompt`, checked as Claude Code would read it."""
    payload = {**setup.payload, "cwd": str(setup.project), "prompt": text, "session_id": session}
    called = children.call([setup.orcmem, "hook", "prompt"], json.dumps(payload), setup.env, HOOK_TIMEOUT_S)
    tally.time(kind, called.seconds)
    problem = _bad_hook_output(called)
    if problem:
        tally.error("hook prompt", problem)
    elif called.out:
        tally.count(kind + "_hits")


def _bad_hook_output(called: Called) -> str | None:
    """Why a prompt hook's result would break the agent, or None."""
    if called.code != 0:
        return f"exit {called.code}: {called.err}"
    if called.err:
        return f"stderr: {called.err}"
    if not called.out:
        return None  # nothing matched: nothing added
    try:
        output = json.loads(called.out)["hookSpecificOutput"]
        assert output["hookEventName"] == "UserPromptSubmit" and output["additionalContext"].strip()
    except (ValueError, KeyError, TypeError, AssertionError, AttributeError):
        return f"invalid output: {called.out[:200]}"
    return None


_BATCHES = itertools.count(1)


def _record(setup: Setup, children: Children, mcp: McpSession, tally: Tally, path: str, label: str) -> None:
    """Record one memory by `path`; a success is kept (id and title) to be found in the database later."""
    # Each write is its own lesson (a batch number of its own): orcmem keeps a repeated lesson as one memory.
    title = f"Load {label}: retry the flaky importer on batch-{next(_BATCHES):06d} with backoff"
    body = f"Written under load by {label} through {path}; pytest hangs in CI unless the importer retries."
    if path == "cli":
        argv = [setup.orcmem, "--project", str(setup.project), "add", "--type", "lesson", "--title", title]
        called = children.call([*argv, "--body", body], "", setup.env, CLI_TIMEOUT_S)
        tally.time(path, called.seconds)
        memory_id = called.out.strip()
        if called.code != 0 or _complaint(called.err) or not MEMORY_ID.match(memory_id):
            tally.error("orcmem add", f"exit {called.code}: {called.out} {called.err}")
            return
    else:
        tool, arguments = (
            ("memory_record", {"type": "lesson", "title": title, "body": body})
            if path == "mcp_record"
            else (
                "memory_manage",
                {"action": "create", "scope": "workspace", "kind": "fact", "title": title, "body": body},
            )
        )
        try:
            is_error, text, seconds = mcp.call(tool, arguments)
        except Exception as exc:  # a timeout or a broken session: an error the agent would see
            tally.error(tool, f"{type(exc).__name__}: {exc}")
            return
        tally.time(path, seconds)
        try:
            memory_id = "" if is_error else str(json.loads(text)["id"])
        except (ValueError, KeyError, TypeError):
            memory_id = ""
        if not memory_id:
            tally.error(tool, text)
            return
    tally.count(path)
    with tally.lock:
        tally.recorded[memory_id] = title


def _complaint(err: str) -> str:
    """What `orcmem add` said on stderr beyond its list of older memories the new one may contradict (the
    candidates every similar write lists: information, not an error the user would see as one)."""
    lines = err.splitlines()
    if lines and lines[0].startswith("it may contradict"):
        lines = [line for line in lines[1:] if not line.startswith("  mem_")]
    return "\n".join(lines)


def _end_run(setup: Setup, children: Children, tally: Tally, session: str) -> None:
    """`orcmem hook session-end` on a finished session's transcript: it ingests and queues the run."""
    transcript = setup.transcripts / f"{session}.jsonl"
    shutil.copy(TRANSCRIPT, transcript)
    payload = {
        "session_id": session,
        "transcript_path": str(transcript),
        "cwd": str(setup.project),
        "hook_event_name": "SessionEnd",
        "reason": "other",
    }
    called = children.call([setup.orcmem, "hook", "session-end"], json.dumps(payload), setup.env, HOOK_TIMEOUT_S)
    tally.time("session_end", called.seconds)
    if (called.code, called.out, called.err) != (0, "", ""):
        tally.error("hook session-end", f"exit {called.code}: {called.out} {called.err}")
        return
    with tally.lock:
        tally.ended.append(session)


def _ticks(stop: threading.Event) -> Iterator[int]:
    """Step numbers, one every TICK_S (or at once when the step before took longer), until `stop`."""
    step, next_tick = 0, time.monotonic()
    while not stop.is_set():
        yield step
        step += 1
        next_tick += TICK_S
        delay = next_tick - time.monotonic()
        if delay > 0:
            stop.wait(delay)
        else:
            next_tick = time.monotonic()  # behind: go on at once, never in a burst to catch up


def _prompter(setup: Setup, children: Children, tally: Tally, index: int, stop: threading.Event) -> None:
    """A session's user: a prompt every tick; every few seconds the session ends and a new one begins."""
    prompts = queries(2000, seed=100 + index)
    run_no, run_started = 0, time.monotonic()
    for step in _ticks(stop):
        session = f"load-{index}-{run_no}"
        _prompt(setup, children, tally, prompts[step % len(prompts)], session, "prompt")
        if time.monotonic() - run_started >= RUN_EVERY_S:
            _end_run(setup, children, tally, session)
            run_no, run_started = run_no + 1, time.monotonic()


def _recorder(
    setup: Setup,
    children: Children,
    mcp: McpSession,
    tally: Tally,
    index: int,
    paths: tuple[str, ...],
    stop: threading.Event,
) -> None:
    """A session's agent recording a memory every tick, through `paths` in turn.

    Each session records through the CLI and through the MCP server at the same time, so that `orcmem add`
    (seconds: it loads the model and waits for the vectors before it exits) does not starve the MCP path.
    """
    for step in _ticks(stop):
        path = paths[step % len(paths)]
        _record(setup, children, mcp, tally, path, f"session {index} {path} {step}")


def _searcher(mcp: McpSession, tally: Tally, stop: threading.Event) -> None:
    """An agent searching memory through the running MCP server."""
    for text in itertools.cycle(queries(500, seed=5)):
        if stop.is_set():
            return
        try:
            is_error, answer, seconds = mcp.call("memory_search", {"query": text, "limit": 8})
        except Exception as exc:
            tally.error("memory_search", f"{type(exc).__name__}: {exc}")
            continue
        tally.time("search", seconds)
        if is_error:
            tally.error("memory_search", answer)
        stop.wait(SEARCH_EVERY_S)


def _reader(client: Any, url: str, tally: Tally, stop: threading.Event) -> None:
    """Someone with the Memory page open, reloading it."""
    while not stop.is_set():
        started = time.perf_counter()
        try:
            response = client.get(url)
        except Exception as exc:
            tally.error("GET Memory page", f"{type(exc).__name__}: {exc}")
        else:
            tally.time("page", time.perf_counter() - started)
            if response.status_code != 200 or "</html>" not in response.text.lower():
                tally.error("GET Memory page", f"HTTP {response.status_code}: {response.text[:200]}")
        stop.wait(PAGE_EVERY_S)


def _worker(setup: Setup, children: Children, tally: Tally, stop: threading.Event) -> None:
    """One distilling worker: `orcmem worker --no-linger` again and again, as long as there may be work."""
    while not stop.is_set():
        called = children.call([setup.orcmem, "worker", "--no-linger"], "", setup.env, WORKER_TIMEOUT_S)
        tally.time("worker", called.seconds)
        if called.code != 0 or any(word in called.err.lower() for word in (*LOCK_WORDS, "traceback", "error")):
            tally.error("orcmem worker", f"exit {called.code}: {called.err}")
        outcomes = [OUTCOME_LINE.match(line) for line in called.out.splitlines()]
        for match in filter(None, outcomes):
            if match.group(2) != "done":
                tally.error("orcmem worker", match.group(0))
        if not any(outcomes):
            stop.wait(WORKER_IDLE_S)


# --- the web page --------------------------------------------------------------------------------------------------


def _start_web(setup: Setup, children: Children) -> tuple[subprocess.Popen[str], str]:
    """`orcmem ui --no-open` on a free port of 127.0.0.1; returns the process and the address it printed."""
    argv = [setup.orcmem, "--project", str(setup.project), "ui", "--no-open"]
    with (setup.work / "ui.err").open("w") as errlog:  # a file, not a pipe: nobody reads it while the page serves
        proc = children.start(argv, setup.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errlog)
    assert proc.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if ready:
            line = proc.stdout.readline()
            if not line:
                break
            if "http://127.0.0.1:" in line:
                return proc, line.split(": ", 1)[1].strip()
    raise RuntimeError(f"orcmem ui did not print its address (exit {proc.poll()})")


def _stop_web(proc: subprocess.Popen[str], children: Children, errlog: Path) -> str:
    """Ctrl+C for the page server, as a user stops it; its stderr."""
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGINT)
    try:
        proc.communicate(timeout=WEB_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        children.kill(proc)
        proc.communicate()
    with children.lock:
        children.live.discard(proc)
    return errlog.read_text(errors="replace")


# --- after the run -------------------------------------------------------------------------------------------------


def _ended_jobs(home: Path, sessions: list[str]) -> dict[str, tuple[str, str, int]]:
    """Session id -> (run id, job state, memories written) for the runs of these sessions that have a job."""
    from orcmem.service.memory_service import MemoryService

    service = MemoryService.open(home, vectors=False)
    try:
        jobs = service.store.jobs.list(None, 100_000)
    finally:
        service.close()
    wanted = set(sessions)
    return {run.session_id: (run.id, job.state, job.memories_written) for job, run in jobs if run.session_id in wanted}


def _drain(home: Path, sessions: list[str]) -> None:
    """Wait until every queued run has been distilled (or the drain timeout)."""
    deadline = time.monotonic() + DRAIN_TIMEOUT_S
    while time.monotonic() < deadline:
        states = _ended_jobs(home, sessions)
        if len(states) == len(sessions) and all(state not in ("queued", "running") for _, state, _ in states.values()):
            return
        time.sleep(0.5)


def _verify(setup: Setup, tally: Tally) -> tuple[list[str], int, int, int, int, str]:
    """Lost writes, runs distilled, memories distilled, memories now, memories without a vector, and
    `PRAGMA integrity_check`."""
    from orcmem.host.workspace import locate
    from orcmem.models.types import MemoryFilter
    from orcmem.service.memory_service import MemoryService

    lost: list[str] = []
    service = MemoryService.open(setup.home)
    try:
        stored = {m.id: m.title for m in service.store.memories.get_many(list(tally.recorded), files=False)}
        for memory_id, title in tally.recorded.items():
            if memory_id not in stored:
                lost.append(f"{memory_id} ({title!r}) was reported saved but is not in the database")
            elif stored[memory_id] != title:
                lost.append(f"{memory_id} has title {stored[memory_id]!r}, not {title!r}")
        project = service.project(locate(setup.project), create=False)
        assert project is not None
        everything = MemoryFilter(limit=1_000_000)
        distilled = service.store.memories.list(project.id, MemoryFilter(sources=("extraction",), limit=1_000_000))
        by_run: dict[str | None, int] = {}
        for memory in distilled:
            by_run[memory.source_run_id] = by_run.get(memory.source_run_id, 0) + 1
        total = service.store.memories.count(project.id, everything)
        unembedded = service.store.vectors.count_missing(service.settings.embedding_model())
        # Raw SQL outside orcmem.store, on purpose: the benchmark checks the file, orcmem has no call for it.
        integrity = "; ".join(str(row[0]) for row in service.store.db.query("PRAGMA integrity_check"))
    finally:
        service.close()
    done = 0
    jobs = _ended_jobs(setup.home, tally.ended)
    for session in tally.ended:
        if session not in jobs:
            lost.append(f"the run of session {session} was never queued")
            continue
        run_id, state, written = jobs[session]
        if state != "done":
            lost.append(f"the run of session {session} ended {state}, not done")
        elif written < 1 or by_run.get(run_id, 0) != written:
            lost.append(f"run {run_id} wrote {written} memories but {by_run.get(run_id, 0)} are in the database")
        else:
            done += 1
    return lost, done, len(distilled), total, unembedded, integrity


def _scan_logs(setup: Setup, tally: Tally, extra: dict[str, str]) -> None:
    """Errors hidden from the agent still count: hooks log failures silently, servers print them on stderr."""
    logs = setup.home / "logs"
    texts = dict(extra)
    for log in sorted(logs.glob("*.log")) if logs.is_dir() else []:
        text = log.read_text(errors="replace")
        if log.name == "hooks.log":  # a hook writes here only when it failed (and exited 0, silent)
            for line in text.splitlines():
                tally.error("hooks.log", line)
        else:
            texts[log.name] = text
    for name, text in texts.items():
        if any(word in text.lower() for word in (*LOCK_WORDS, "traceback", "error")):
            tally.error(name, text[-500:])


# --- the run -------------------------------------------------------------------------------------------------------


def _idle_prompts(setup: Setup, children: Children, tally: Tally) -> None:
    """The prompt hook with nothing else running: the baseline for the same machine and profile."""
    for i, text in enumerate(queries(IDLE_SAMPLES + 3, seed=99)):
        _prompt(setup, children, tally, text, "idle", "idle" if i >= 3 else "warm-up")


def _latency(times: list[float]) -> Latency:
    return latency(times) if times else Latency(0.0, 0.0, 0)


def _start_threads(targets: list[tuple[str, Callable[[], None]]]) -> list[threading.Thread]:
    threads = [threading.Thread(target=target, name=name, daemon=True) for name, target in targets]
    for thread in threads:
        thread.start()
    return threads


def _load(
    setup: Setup,
    children: Children,
    tally: Tally,
    mcp: McpSession,
    browser: Any,
    page: str,
    seconds: float,
    stops: tuple[threading.Event, threading.Event],
) -> tuple[float, float]:
    """Everything at once for `seconds`, then the workers alone until the queue is drained; (load s, drain s)."""
    load_stop, worker_stop = stops
    started = time.perf_counter()
    workers = _start_threads(
        [(f"load-worker-{i}", _bind(_worker, setup, children, tally, worker_stop)) for i in range(WORKERS)]
    )
    actors = _start_threads(
        [
            *[(f"load-prompts-{i}", _bind(_prompter, setup, children, tally, i, load_stop)) for i in range(SESSIONS)],
            *[
                (f"load-{label}-{i}", _bind(_recorder, setup, children, mcp, tally, i, paths, load_stop))
                for i in range(SESSIONS)
                for label, paths in (("cli", ("cli",)), ("mcp", MCP_PATHS))
            ],
            ("load-search", _bind(_searcher, mcp, tally, load_stop)),
            ("load-page", _bind(_reader, browser, page, tally, load_stop)),
        ]
    )
    try:
        load_stop.wait(seconds)
        load_stop.set()
        for thread in actors:  # each finishes its step in hand, bounded by that step's timeouts
            thread.join(CLI_TIMEOUT_S + 2 * HOOK_TIMEOUT_S)
        elapsed = time.perf_counter() - started
        _drain(setup.home, tally.ended)
        drain_s = time.perf_counter() - started - elapsed
    finally:
        worker_stop.set()
        for thread in workers:
            thread.join(WORKER_TIMEOUT_S + 10)
    return elapsed, drain_s


def run(seconds: float = 60.0, *, memories: int = MEMORIES, work: Path | None = None) -> LoadResult:
    """Run the load scenario for `seconds` on a temporary profile of `memories` memories; check and measure it.

    `work` is the folder to set up in (a new temporary one, removed afterwards, when None).
    """
    import httpx

    from orcmem.worker.control import worker_lock

    own_work = work is None
    work = Path(tempfile.mkdtemp(prefix="orcmem-load-")) if work is None else work
    work.mkdir(parents=True, exist_ok=True)
    children, tally = Children(), Tally()
    stops = (threading.Event(), threading.Event())  # the load's actors stop first, the workers after the drain
    mcp: McpSession | None = None
    web: subprocess.Popen[str] | None = None
    stderr_of: dict[str, str] = {}
    started = time.perf_counter()
    try:
        setup = _prepare(work, memories)
        setup_s = time.perf_counter() - started
        # While the run holds the worker lock, hooks see a worker running and start none of their own: the two
        # workers below are all there is, and none outlives the run detached.
        with worker_lock(setup.home):
            _idle_prompts(setup, children, tally)
            mcp = McpSession(
                [setup.orcmem, "mcp", "--project", str(setup.project), "--mode", "accept-edits"],
                setup.env,
                work / "mcp.err",
            )
            mcp.start()
            web, url = _start_web(setup, children)
            with httpx.Client(trust_env=False, timeout=WEB_TIMEOUT_S, follow_redirects=True) as browser:
                opened = browser.get(url)  # the launch address sets the page's cookie, then redirects
                if opened.status_code != 200:
                    raise RuntimeError(f"the Memory page answered {opened.status_code} to its launch address")
                page = str(opened.url)
                mcp.call("memory_search", {"query": "warm up"})
                elapsed, drain_s = _load(setup, children, tally, mcp, browser, page, seconds, stops)
            mcp.close()
            stderr_of["orcmem ui stderr"] = _stop_web(web, children, work / "ui.err")
        stderr_of["orcmem mcp stderr"] = (work / "mcp.err").read_text(errors="replace")
        _scan_logs(setup, tally, stderr_of)
        lost, runs_done, distilled, total, unembedded, integrity = _verify(setup, tally)
        return LoadResult(
            seconds=seconds,
            elapsed_s=elapsed,
            drain_s=drain_s,
            setup_s=setup_s,
            memories_before=memories,
            memories_after=total,
            prompt_idle=_latency(tally.times.get("idle", [])),
            prompt_load=_latency(tally.times.get("prompt", [])),
            prompt_hits=tally.counts.get("prompt_hits", 0),
            records={path: tally.counts.get(path, 0) for path in RECORD_PATHS},
            record_latency={path: _latency(tally.times.get(path, [])) for path in RECORD_PATHS},
            runs_ended=len(tally.ended),
            runs_done=runs_done,
            distilled=distilled,
            workers=_latency(tally.times.get("worker", [])),
            unembedded=unembedded,
            searches=_latency(tally.times.get("search", [])),
            pages=_latency(tally.times.get("page", [])),
            integrity=integrity,
            lost=lost,
            errors=tally.errors,
            error_count=tally.error_count,
        )
    finally:
        for stop in stops:
            stop.set()
        if mcp is not None:
            mcp.close()
        children.close()
        if own_work:
            shutil.rmtree(work, ignore_errors=True)


def _bind(function: Callable[..., None], *args: Any) -> Callable[[], None]:
    return lambda: function(*args)


# --- the report ----------------------------------------------------------------------------------------------------


def _scenario(r: LoadResult) -> str:
    """What ran, as one paragraph."""
    tick = f"{TICK_S * 1000:.0f} ms"
    return (
        f"`python -m bench.load --seconds {r.seconds:g}`: a temporary profile of {r.memories_before:,} memories "
        f"with vectors (int8 MiniLM), and all of the following at once for {r.seconds:g} s (the steps in hand then "
        f"ended {max(0.0, r.elapsed_s - r.seconds):.0f} s later; rates are over {r.elapsed_s:.0f} s), over 127.0.0.1 "
        f"only. {SESSIONS} simulated agent sessions, each sending a prompt every {tick} (`orcmem hook prompt`, a "
        "new process, Claude Code's UserPromptSubmit JSON on stdin) and at the same time recording memories, each "
        f"way every {tick}: `orcmem add`, and in turn `memory_record` and `memory_manage` on one running "
        "`orcmem mcp` over stdio, driven by the MCP SDK client (a step that takes longer delays the next one). "
        f"Every {RUN_EVERY_S:.0f} s each session ends its run (`orcmem hook session-end` with a transcript), and "
        f"{WORKERS} `orcmem worker` processes distil the queued runs, with a stand-in `claude` on PATH that prints "
        f"a real result envelope after {STANDIN_DELAY_S:g} s. The same MCP server answers `memory_search` every "
        f"{SEARCH_EVERY_S * 1000:.0f} ms, and `orcmem ui` the Memory page every {PAGE_EVERY_S * 1000:.0f} ms. "
        f"Afterwards the workers drained the queue in {r.drain_s:.0f} s. Setting up (profile, model, vectors) "
        f"took {r.setup_s:.0f} s."
    )


def render(r: LoadResult) -> list[str]:
    """The `## Under load` section of docs/benchmarks.md."""
    ratio = lambda a, b: f"{a / b:.1f} times" if b else "n/a"  # noqa: E731
    per_s = lambda n: f"{n / r.elapsed_s:.1f}/s" if r.elapsed_s else "n/a"  # noqa: E731
    hits = f"{r.prompt_hits / r.prompt_load.samples:.0%}" if r.prompt_load.samples else "n/a"
    yes = lambda ok: "yes" if ok else "**no**"  # noqa: E731
    lines = [
        "## Under load",
        "",
        *textwrap.wrap(_scenario(r), width=115),
        "",
        "| what | done | rate | p50 / p95 ms |",
        "|---|---:|---:|---:|",
        f"| `orcmem hook prompt` ({hits} got memories back) | {r.prompt_load.samples:,} "
        f"| {per_s(r.prompt_load.samples)} | {r.prompt_load.cell()} |",
        f"| `orcmem add` | {r.records['cli']:,} | {per_s(r.records['cli'])} | {r.record_latency['cli'].cell()} |",
        f"| `memory_record` | {r.records['mcp_record']:,} | {per_s(r.records['mcp_record'])} "
        f"| {r.record_latency['mcp_record'].cell()} |",
        f"| `memory_manage` (create) | {r.records['mcp_manage']:,} | {per_s(r.records['mcp_manage'])} "
        f"| {r.record_latency['mcp_manage'].cell()} |",
        f"| `memory_search` | {r.searches.samples:,} | {per_s(r.searches.samples)} | {r.searches.cell()} |",
        f"| GET of the Memory page | {r.pages.samples:,} | {per_s(r.pages.samples)} | {r.pages.cell()} |",
        f"| runs ended, then distilled | {r.runs_ended} / {r.runs_done} | | |",
        f"| `orcmem worker` processes (start to exit) | {r.workers.samples} | | {r.workers.cell()} |",
        f"| memories saved by the workers | {r.distilled} | | |",
        "",
        "The prompt hook, idle (nothing else running, same profile, same run) against under load:",
        "",
        "| | idle | under load | ratio |",
        "|---|---:|---:|---:|",
        f"| p50 | {r.prompt_idle.p50:.1f} ms | {r.prompt_load.p50:.1f} ms "
        f"| {ratio(r.prompt_load.p50, r.prompt_idle.p50)} |",
        f"| p95 | {r.prompt_idle.p95:.1f} ms | {r.prompt_load.p95:.1f} ms "
        f"| {ratio(r.prompt_load.p95, r.prompt_idle.p95)} |",
        "",
        f"- No lost write (every write that reported success is in the database, by id and title; every ended run "
        f"distilled): {yes(not r.lost and r.runs_done == r.runs_ended)}.",
        f"- No error reached a user (hooks exit 0 with valid output, CLI calls exit 0, no MCP tool error, every "
        f'page 200, no "database is locked", nothing in hooks.log): {yes(not r.error_count)}'
        + (f" ({r.error_count} errors)" if r.error_count else "")
        + ".",
        f"- `PRAGMA integrity_check`: {r.integrity}. Memories in the project afterwards: {r.memories_after:,}, "
        f"{r.unembedded:,} of them still without a vector (the background embedding catches up later).",
        "",
        "The test itself keeps every core busy (dozens of short-lived processes at once), so the latencies under",
        "load are reported, not asserted.",
        "",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.load`: run the scenario, print the section, exit 1 if anything was lost or failed."""
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the load runs")
    parser.add_argument("--memories", type=int, default=MEMORIES, help="memories in the profile beforehand")
    args = parser.parse_args(argv)
    result = run(args.seconds, memories=args.memories)
    print("\n".join(render(result)))
    for problem in [*result.lost, *result.errors]:
        print(f"problem: {problem}", file=sys.stderr)
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
