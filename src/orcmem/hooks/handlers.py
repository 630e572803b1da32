"""Agent hooks: read the hook's JSON on stdin, do the quick part, return at once. They fail open and silently.

Kept free of click and of the embedding stack: a hook runs on every session end and every turn.
"""

from __future__ import annotations

import json
import os
import sys
import time

from orcmem.host.profile import home_dir_str
from orcmem.models.constants import DB_FILENAME, HOOK_OUTPUT_MAX_CHARS
from orcmem.models.env_names import BARE_ENV_VAR, COPILOT_HOME_ENV_VAR, DISTILLING_ENV_VAR, MAX_STDIN_BYTES
from orcmem.models.vocabulary import HookName

TYPE_CHECKING = False  # importing typing (or pathlib) costs every prompt milliseconds
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO

    from orcmem.models.data_shapes import JsonObject
    from orcmem.rules.permissions import PolicyVerdict
    from orcmem.service.learning import TaskLink

LOG_NAME = "hooks.log"
TASK_ENV_VAR = "ORCMEM_TASK"  # set by whatever starts an agent on a task: the run belongs to that task
RUN_KIND_ENV_VAR = "ORCMEM_RUN_KIND"  # "discussion": the run only talks about the task and is never distilled


def _read_payload(stream: TextIO) -> JsonObject:
    raw = stream.read(MAX_STDIN_BYTES)
    payload = json.loads(raw) if raw.strip() else {}
    if not isinstance(payload, dict):
        raise ValueError("hook input is not a JSON object")
    return payload


def _log(home: str, event: str, message: str) -> None:
    """One line per failure in $ORCMEM_HOME/logs/hooks.log; never raises."""
    from orcmem.text.redact import redact

    try:
        logs = os.path.join(home, "logs")
        os.makedirs(logs, mode=0o700, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        # Created 0600 whatever the umask: the log can name the person's paths and sessions.
        descriptor = os.open(os.path.join(logs, LOG_NAME), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(descriptor, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} {event}: {redact(message)}\n")
    except OSError:
        pass


def _text(payload: JsonObject, key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value.strip() else None


def _ingest(payload: JsonObject, home: str, *, ended: bool) -> None:
    """Ingest the session's transcript (what is new), mark the turn or the end, queue and start a worker."""
    from pathlib import Path

    from orcmem.host.agent_process import agent_command
    from orcmem.host.workspace import locate
    from orcmem.models.errors import ValidationError
    from orcmem.service.learning import Learning
    from orcmem.service.memory_service import MemoryService

    transcript = _text(payload, "transcript_path")
    cwd = _text(payload, "cwd")
    if transcript is None or cwd is None:
        return
    service = MemoryService.open(Path(home), vectors=False)
    try:
        learning = Learning(service)
        if learning.extraction_allowed() is not None:
            return  # memory or extraction is off: nothing is read or kept
        path = Path(transcript).expanduser()
        if not path.is_file():
            _log(home, "ingest", f"no transcript at {path}")  # _log redacts
            return
        try:
            result = learning.ingest(
                locate(Path(cwd)),
                path,
                session_id=_text(payload, "session_id"),
                cwd=cwd,
                ended=ended,
                # Claude Code runs Stop before it writes the turn's last answer; the payload already carries it.
                answered=_text(payload, "last_assistant_message") is not None,
                link=_task_link(),
                agent_command=agent_command(),
            )
        except ValidationError as exc:
            _log(home, "ingest", str(exc))
            return
        if ended:
            learning.queue(result.run)
        from orcmem.worker.control import spawn_worker, worker_running  # only once there is something to distil

        if not worker_running(Path(home)):
            spawn_worker(Path(home))
    finally:
        service.close()


def _task_link() -> TaskLink | None:
    """The task this agent was started for (`ORCMEM_TASK`; none: the one in progress), and whether it only
    discusses it (`ORCMEM_RUN_KIND=discussion`)."""
    from orcmem.service.learning import RUN_KIND_DISCUSSION, RUN_KIND_TASK, TaskLink

    task_id = (os.environ.get(TASK_ENV_VAR) or "").strip()
    discussion = (os.environ.get(RUN_KIND_ENV_VAR) or "").strip().lower() == RUN_KIND_DISCUSSION
    if not task_id and not discussion:
        return None
    return TaskLink(task_id, RUN_KIND_DISCUSSION if discussion else RUN_KIND_TASK)


def session_end(payload: JsonObject, home: str) -> str:
    """SessionEnd: ingest the transcript and queue the run; never waits for a model."""
    from orcmem.agent_context.session_recall import forget_session

    forget_session(home, _text(payload, "session_id"))
    _ingest(payload, home, ended=True)
    return ""


def stop(payload: JsonObject, home: str) -> str:
    """Stop: ingest what the turn added and record it; the worker distils the session once it goes idle."""
    _ingest(payload, home, ended=False)
    # Codex requires JSON on stdout from a Stop hook; an empty object changes nothing for either agent.
    return "{}"


PROMPT_EVENTS = ("UserPromptSubmit", "BeforeAgent", "userPromptSubmitted")  # Claude/Codex, Gemini CLI, Copilot CLI
# GitHub Copilot CLI's hook events (its payloads name none): told apart by the keys each payload carries.
COPILOT_EVENTS = {
    "toolResult": "postToolUse",
    "toolName": "preToolUse",
    "prompt": "userPromptSubmitted",
    "transcriptPath": "agentStop",
    "reason": "sessionEnd",
    "source": "sessionStart",
}


def shared_shape(payload: JsonObject) -> JsonObject:
    """A hook payload in the shape orcmem's hooks read (Claude Code's: `session_id`, `tool_name`, `tool_input`,
    `transcript_path`, `hook_event_name`). Copilot CLI's camel-case payload (`sessionId`, no event name) is
    translated, its transcript found under $COPILOT_HOME (or ~/.copilot) when the event does not name it; any
    other agent's comes back as it is."""
    session = payload.get("sessionId")
    if not isinstance(session, str) or "session_id" in payload or "hook_event_name" in payload:
        return payload
    event = next((name for key, name in COPILOT_EVENTS.items() if key in payload), "sessionStart")
    transcript = payload.get("transcriptPath")
    if not isinstance(transcript, str) and os.sep not in session and session not in ("", ".", ".."):
        state = os.environ.get(COPILOT_HOME_ENV_VAR) or os.path.join(os.path.expanduser("~"), ".copilot")
        transcript = os.path.join(state, "session-state", session, "events.jsonl")
    return {
        **payload,
        "hook_event_name": event,
        "session_id": session,
        "tool_name": payload.get("toolName"),
        "tool_input": payload.get("toolArgs"),
        "transcript_path": transcript,
    }


def prompt_event(payload: JsonObject) -> str:
    """The agent's name for the prompt hook's event, which its answer repeats (UserPromptSubmit unless told)."""
    event = payload.get("hook_event_name")
    return event if event in PROMPT_EVENTS else PROMPT_EVENTS[0]


def hook_context(event: str, text: str) -> str:
    """The JSON the agent reads as added context ("" adds nothing): Claude Code, Codex and Gemini CLI take
    `hookSpecificOutput.additionalContext` under their event's name, Copilot CLI a top-level `additionalContext`."""
    if not text:
        return ""
    text = text[:HOOK_OUTPUT_MAX_CHARS]
    if event in COPILOT_EVENTS.values():
        return json.dumps({"additionalContext": text})
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


CURSOR_FIELDS = ("cursor_version", "workspace_roots")  # in every payload of Cursor's, and no other agent's


def start_context(payload: JsonObject, text: str) -> str:
    """The brief as the agent reads it: Cursor's `{"additional_context": ...}` (its `sessionStart`), else
    `hook_context` under the agent's event name (Copilot CLI's is `sessionStart` too)."""
    if any(field in payload for field in CURSOR_FIELDS):
        return json.dumps({"additional_context": text[:HOOK_OUTPUT_MAX_CHARS]}) if text else ""
    return hook_context("sessionStart" if payload.get("hook_event_name") == "sessionStart" else "SessionStart", text)


def payload_cwd(payload: JsonObject) -> str | None:
    """The session's folder: `cwd`, else the first of Cursor's `workspace_roots`."""
    roots = payload.get("workspace_roots")
    first = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
    return _text(payload, "cwd") or (first if first and first.strip() else None)


def session_start(payload: JsonObject, home: str) -> str:
    """SessionStart (Cursor: sessionStart): the project brief as added context (nothing when memory is off or
    empty)."""
    import contextlib
    from pathlib import Path

    from orcmem.agent_context.brief import fenced_brief
    from orcmem.agent_context.recall import FENCE_CHARS
    from orcmem.agent_context.session_recall import forget_session, prune_sessions, recalled_in_sessions, start_session
    from orcmem.host.workspace import locate
    from orcmem.models.constants import CHARS_PER_TOKEN
    from orcmem.models.errors import OrcmemError
    from orcmem.service.memory_service import MemoryService

    cwd = payload_cwd(payload)
    if cwd is None or not os.path.exists(os.path.join(home, DB_FILENAME)):
        return ""
    recalled = recalled_in_sessions(home)  # read before the sessions' files go: the audit's "last recalled"
    # A new session, or a cleared or compacted one: the context no longer holds what recall gave before.
    forget_session(home, _text(payload, "session_id"))
    prune_sessions(home)
    service = MemoryService.open(Path(home), vectors=False)
    try:
        with contextlib.suppress(OrcmemError):  # a busy database costs only these recall times, never the brief
            service.store_audit.note_recalled(recalled)
        project = service.project(locate(cwd), create=False)
        # The brief and every recall of the session share its context budget: the brief takes at most half, so
        # that a small budget still leaves the session's prompts their recall.
        budget = service.context.session_budget() * CHARS_PER_TOKEN
        brief = fenced_brief(service.context.brief(project, max_chars=budget // 2 - FENCE_CHARS - 2))
        start_session(home, _text(payload, "session_id"), budget, len(brief))
        return start_context(payload, brief)
    finally:
        service.close()


def prompt(payload: JsonObject, home: str, warm_tried: str = "warm server not asked") -> str:
    """UserPromptSubmit (Gemini CLI: BeforeAgent), the word path: the memories whose words match the prompt, as
    reference material; nothing when none match, and nothing the session was already given unchanged.

    `orcmem hook prompt` asks the session's warm server first (`prompt_hook`); this runs when it did not answer,
    `warm_tried` saying why: one read-only query, no service, no model.
    """
    text, cwd = _text(payload, "prompt"), _text(payload, "cwd")
    if text is None or cwd is None:
        return ""
    session = _text(payload, "session_id")
    started = time.perf_counter()
    return hook_context(prompt_event(payload), recall_by_words_here(home, text, cwd, session, started, warm_tried))


def recall_by_words_here(home: str, text: str, cwd: str, session: str | None, started: float, why: str) -> str:
    """The word path in this process, for the session; logged with why the warm server did not answer."""
    from orcmem.agent_context.recall import own_prompt, recall_by_words
    from orcmem.agent_context.session_recall import log_recall, recall_for_session
    from orcmem.host.workspace import locate

    rows = recall_by_words(os.path.join(home, DB_FILENAME), locate(cwd).canonical_root, own_prompt(text))
    selection = None if rows is None else recall_for_session(home, session, rows, int(time.time() * 1000))
    log_recall(home, f"words ({why})", (time.perf_counter() - started) * 1000, session, selection)
    return selection.text if selection is not None else ""


WRITE_TOOLS = frozenset({"memory_record", "memory_feedback", "memory_manage"})
MEMORY_TOOL_NAMES = WRITE_TOOLS | {"memory_search", "memory_recall", "task_context"}


def is_mcp_tool(name: str) -> bool:
    """An MCP tool's call (Claude Code's `mcp__server__tool`, or one of orcmem's tools by its bare name, as other
    agents may send it): the permission check's business, never memory at tool time."""
    return name.startswith("mcp__") or name in MEMORY_TOOL_NAMES


def pre_tool_use(payload: JsonObject, home: str, warm_tried: str = "warm server not asked") -> str:
    """PreToolUse: on orcmem's MCP tools, the permission check; on the file and shell tools, the memories about
    what the call touches."""
    name = _text(payload, "tool_name") or ""
    if not is_mcp_tool(name):
        return tool_call(payload, home, warm_tried)
    return _permission(payload, home)


def tool_call(payload: JsonObject, home: str, why: str) -> str:
    """The direct path of memory at tool time (no warm server answered, `why`): the memories that cite the files
    the call touches or concern its command, each once per session; nothing when there are none."""
    from orcmem.agent_context.session_recall import log_recall, recall_for_session
    from orcmem.agent_context.tool_recall import tool_call_rows
    from orcmem.host.workspace import locate

    name, cwd = _text(payload, "tool_name"), _text(payload, "cwd")
    given = payload.get("tool_input")
    if name is None or cwd is None or not isinstance(given, dict) or not os.path.isabs(cwd):
        return ""
    started = time.perf_counter()
    where = locate(cwd)
    db_path = os.path.join(home, DB_FILENAME)
    rows = tool_call_rows(db_path, where.canonical_root, where.worktree_root, name, given, cwd)
    if not rows:
        return ""
    session = _text(payload, "session_id")
    selection = recall_for_session(home, session, rows, int(time.time() * 1000))
    log_recall(home, f"tool, direct ({why})", (time.perf_counter() - started) * 1000, session, selection)
    return hook_context(tool_event(_text(payload, "hook_event_name")), selection.text)


def tool_event(event: object) -> str:
    """The event a tool hook's output names: PostToolUse when it runs after the call, else PreToolUse (Copilot
    CLI's own names kept)."""
    return event if isinstance(event, str) and event in ("PostToolUse", "preToolUse", "postToolUse") else "PreToolUse"


def _permission(payload: JsonObject, home: str) -> str:
    """PreToolUse on orcmem's MCP tools: map the session's permission mode to orcmem's policy, and audit it."""
    from orcmem.models.vocabulary import Mode
    from orcmem.rules.permissions import CLAUDE_MODES, Decision, auto_review, decide

    tool = (_text(payload, "tool_name") or "").rsplit("__", 1)[-1]
    if tool not in WRITE_TOOLS:
        return ""  # reads are always allowed; other tools are none of orcmem's business
    mode = CLAUDE_MODES.get(_text(payload, "permission_mode") or "default", Mode.REVIEW)
    given = payload.get("tool_input")
    tool_input: JsonObject = given if isinstance(given, dict) else {}
    review = None
    if mode is Mode.AUTO:
        words = " ".join(str(tool_input.get(key, "")) for key in ("title", "body"))
        review = auto_review(words)
    verdict = decide(mode, write=True, review=review)
    _audit_decision(home, tool, mode, verdict, payload)
    decision = {Decision.ALLOW: "allow", Decision.DENY: "deny", Decision.ASK: "ask"}[verdict.decision]
    return json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                "permissionDecisionReason": verdict.reason,
            }
        }
    )


def _audit_decision(home: str, tool: str, mode: object, verdict: PolicyVerdict, payload: JsonObject) -> None:
    from pathlib import Path

    from orcmem.service.memory_service import MemoryService

    if not os.path.exists(os.path.join(home, DB_FILENAME)):
        return
    # No re-flag here: this hook runs before every tool call the agent makes, so it never adds work of its own.
    service = MemoryService.open(Path(home), vectors=False, reflag_budget_s=0)
    try:
        service.audit(
            "agent",
            f"permission.{verdict.decision}",
            metadata={
                "tool": tool,
                "mode": str(mode),
                "policy": verdict.policy,
                "via": "pre-tool-use hook",
                "session": _text(payload, "session_id"),
            },
            decision=str(verdict.decision),
        )
    finally:
        service.close()


HOOKS: dict[str, Callable[[JsonObject, str], str]] = {
    HookName.SESSION_START: session_start,
    HookName.PROMPT: prompt,
    HookName.PRE_TOOL_USE: pre_tool_use,
    HookName.STOP: stop,
    HookName.SESSION_END: session_end,
}
# Hooks that add context or tools, which --bare (ORCMEM_BARE=1) turns off; learning hooks still record.
CONTEXT_HOOKS = frozenset({HookName.SESSION_START, HookName.PROMPT, HookName.PRE_TOOL_USE})


def main(
    argv: list[str], stdin: TextIO | None = None, stdout: TextIO | None = None, *, warm_tried: str | None = None
) -> int:
    """Run one hook by name; any failure is logged and the hook exits 0 with nothing on stdout.

    `warm_tried` says why the warm server did not answer the prompt hook already (`prompt_hook` asked it first)."""
    if os.environ.get(DISTILLING_ENV_VAR):
        return 0  # this agent was started by orcmem to distil a run: its hooks must not feed orcmem again
    name = argv[0] if argv else ""
    handler = HOOKS.get(name)
    if handler is None:
        # Exit 0 even here: a non-zero exit from a prompt or tool hook would block the agent.
        print(f"orcmem: unknown hook {name!r}; hooks: {', '.join(HOOKS)}", file=sys.stderr)
        return 0
    if name in CONTEXT_HOOKS and (os.environ.get(BARE_ENV_VAR) or "--bare" in argv[1:]):
        return 0
    home = home_dir_str()
    try:
        payload = shared_shape(_read_payload(stdin or sys.stdin))
        if warm_tried and name == HookName.PRE_TOOL_USE:
            output = pre_tool_use(payload, home, warm_tried)
        else:
            output = prompt(payload, home, warm_tried) if warm_tried else handler(payload, home)
    except Exception as exc:  # a hook must never block or break the agent
        import traceback

        _log(home, name, f"{type(exc).__name__}: {exc} | {traceback.format_exc(limit=3)!r}")
        return 0
    if output:
        (stdout or sys.stdout).write(output)
    return 0
