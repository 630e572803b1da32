"""A stand-in `claude` / `codex` that runs sessions the way the real CLIs do, and answers distillation calls.

Installed under the name `claude` or `codex` (the name picks the behaviour). What it reproduces of the real CLIs:

- Claude Code 2.1.x: the transcript at `$HOME/.claude/projects/<folder>/<session>.jsonl`; hooks read from the
  project's `.claude/settings.json` and run through `/bin/sh -c` with their JSON on stdin; a turn that ends after
  a tool call runs `Stop` BEFORE its final assistant line is written (the payload carries `last_assistant_message`);
  `SessionEnd` runs after that line landed. `--resume ID` continues the same transcript (SessionStart source
  "resume"). `claude -p ... --output-format stream-json --verbose` answers with the real events: `system/init`,
  a `rate_limit_event`, the `assistant` message, and the `result` envelope with `usage`, `modelUsage`,
  `total_cost_usd` and `duration_ms` (`--output-format json`: the envelope alone); `claude auth status --json` as
  the real one.
- Codex 0.171: the rollout at `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl` in the paginated
  format (`ordinal`, the prompt only as a `response_item` user message after the injected environment context,
  `item_completed` and `token_usage_record` lines), hooks from `$CODEX_HOME/hooks.json`; `codex exec ... -o FILE -`
  reads the prompt on stdin and writes its answer to FILE, and with `--json` prints its events (`thread.started`,
  `turn.started`, `item.completed`, `turn.completed` with `usage`); `codex login status`, `codex debug models`.

What a distillation call reports can be steered: $STANDIN_RATE_LIMITED (a file; while it exists the call is refused
as the real CLIs refuse it for a rate limit: Claude's `rate_limit_event` "rejected" and a 429 result, Codex's
`turn.failed`), $STANDIN_UTILIZATION (the share of Claude's rate limit used, reported in the `rate_limit_event`,
with "allowed_warning" from 0.8 on). Usage: CLAUDE_USAGE and CODEX_USAGE below, the same on every call.

The session commands: `NAME [--session-id ID | --resume ID] [--open] PROMPT...` runs one turn per prompt, then
`SessionEnd` unless `--open` (the session stays open, as when the person just stops typing).

The distillation answer: every pass says "Run the tests with uv run pytest" again (the same words), plus one
lesson per "prompt N" found in the events it was sent. Each prompt it receives is appended to $STANDIN_PROMPTS.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

FLAVOUR = Path(sys.argv[0]).name


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def answer_for(prompt: str) -> dict:
    """The stand-in model's distillation: one lesson always said again, one per prompt in the new events."""
    with open(os.environ["STANDIN_PROMPTS"], "a", encoding="utf-8") as log:
        log.write(prompt + "\n\f\n")
    events = prompt.split("Run to distill:", 1)[-1]
    memories = [
        {
            "type": "command",
            "title": "Run the tests with uv run pytest",
            "body": "uv run pytest runs the suite with the project's locked dependencies.",
            "topicKey": None,
            "files": [],
            "confidence": 0.7,
        }
    ]
    for n in sorted(set(re.findall(r"prompt (\d+)", events))):
        memories.append(
            {
                "type": "lesson",
                "title": f"Lesson learned in turn {n}",
                "body": f"Turn {n} showed that step {n} needs its own fixture file.",
                "topicKey": None,
                "files": [],
                "confidence": 0.6,
            }
        )
    summary = {"request": "the session's work", "workDone": "did it", "outcome": "done", "openItems": []}
    return {"summary": summary, "memories": memories}


def run_hooks(event: str, payload: dict, config: Path) -> None:
    """Run the hooks configured for `event`, each through /bin/sh with its JSON on stdin, as the real CLIs do."""
    try:
        hooks = json.loads(config.read_text(encoding="utf-8")).get("hooks", {})
    except (OSError, ValueError):
        return
    for group in hooks.get(event, []):
        for hook in group.get("hooks", []):
            if hook.get("type") == "command":
                data = json.dumps({**payload, "hook_event_name": event})
                subprocess.run(["/bin/sh", "-c", hook["command"]], input=data, text=True, capture_output=True)


# --- Claude Code --------------------------------------------------------------------------------------------------


def claude_transcript(cwd: str, session: str) -> Path:
    folder = Path.home() / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", cwd)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{session}.jsonl"


def claude_line(path: Path, cwd: str, session: str, record: dict) -> None:
    base = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session, "version": "2.1.197"}
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({**base, **record, "uuid": str(uuid.uuid4()), "timestamp": now()}) + "\n")


def claude_session(args: list[str]) -> int:
    session, source, keep_open, prompts = parse_session(args)
    cwd = os.getcwd()
    path = claude_transcript(cwd, session)
    settings = Path(cwd) / ".claude" / "settings.json"
    common = {"session_id": session, "transcript_path": str(path), "cwd": cwd, "permission_mode": "default"}
    run_hooks("SessionStart", {**common, "source": source}, settings)
    for text in prompts:
        claude_line(path, cwd, session, {"type": "user", "message": {"role": "user", "content": text}})
        run_hooks("UserPromptSubmit", {**common, "prompt": text}, settings)
        call = f"toolu_{uuid.uuid4().hex[:12]}"
        use = {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "uv run pytest"}}
        message = {"id": f"msg_{uuid.uuid4().hex[:12]}", "role": "assistant", "model": "claude-sonnet-4-5"}
        claude_line(path, cwd, session, {"type": "assistant", "message": {**message, "content": [use]}})
        result = {"type": "tool_result", "tool_use_id": call, "content": "3 passed", "is_error": False}
        claude_line(path, cwd, session, {"type": "user", "message": {"role": "user", "content": [result]}})
        final = f"Done with {text}."
        # The real CLI runs Stop here, and writes the turn's last assistant line only afterwards.
        run_hooks("Stop", {**common, "stop_hook_active": False, "last_assistant_message": final}, settings)
        reply = {"id": f"msg_{uuid.uuid4().hex[:12]}", "role": "assistant", "model": "claude-sonnet-4-5"}
        text_block = {"type": "text", "text": final}
        claude_line(path, cwd, session, {"type": "assistant", "message": {**reply, "content": [text_block]}})
    if not keep_open:
        run_hooks("SessionEnd", {**common, "reason": "other"}, settings)
    return 0


CLAUDE_MODEL = "claude-haiku-4-5-20251001"
# What one call reports, in the shapes of the real 2.1.x result envelope (fixtures/envelopes).
CLAUDE_USAGE = {
    "input_tokens": 1843,
    "cache_creation_input_tokens": 7314,
    "cache_read_input_tokens": 34324,
    "output_tokens": 175,
    "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
    "service_tier": "standard",
}
CLAUDE_COST_USD = 0.0189534
CODEX_USAGE = {"input_tokens": 27493, "cached_input_tokens": 3840, "output_tokens": 174, "reasoning_output_tokens": 0}
RESETS_AT = 1_900_000_000  # seconds: when the stand-in's rate limit window resets


def rate_limited() -> bool:
    flag = os.environ.get("STANDIN_RATE_LIMITED")
    return bool(flag) and os.path.exists(flag)


def claude_print(args: list[str]) -> int:
    prompt = sys.stdin.read()
    session = str(uuid.uuid4())
    stream = args[args.index("--output-format") + 1] == "stream-json" if "--output-format" in args else False
    limited = rate_limited()
    utilization = float(os.environ.get("STANDIN_UTILIZATION") or 0.1)
    status = "rejected" if limited else "allowed_warning" if utilization >= 0.8 else "allowed"
    info = {"status": status, "resetsAt": RESETS_AT, "rateLimitType": "five_hour", "utilization": utilization}
    model_usage = {
        "inputTokens": CLAUDE_USAGE["input_tokens"],
        "outputTokens": CLAUDE_USAGE["output_tokens"],
        "cacheReadInputTokens": CLAUDE_USAGE["cache_read_input_tokens"],
        "cacheCreationInputTokens": CLAUDE_USAGE["cache_creation_input_tokens"],
        "costUSD": CLAUDE_COST_USD,
    }
    text = "You've hit your limit · resets 3am" if limited else json.dumps(answer_for(prompt))
    envelope = {
        "type": "result",
        "subtype": "success",
        "is_error": limited,
        "duration_ms": 4264,
        "duration_api_ms": 4102,
        "num_turns": 1,
        "result": text,
        "stop_reason": "end_turn",
        "session_id": session,
        "total_cost_usd": 0 if limited else CLAUDE_COST_USD,
        "usage": CLAUDE_USAGE if not limited else {"input_tokens": 0, "output_tokens": 0},
        "modelUsage": {} if limited else {CLAUDE_MODEL: model_usage},
        "permission_denials": [],
        "terminal_reason": "completed",
        "uuid": str(uuid.uuid4()),
    }
    if limited:
        envelope["api_error_status"] = 429
    if not stream:
        print(json.dumps(envelope))
        return 0
    init = {"type": "system", "subtype": "init", "session_id": session, "model": CLAUDE_MODEL, "tools": []}
    print(json.dumps(init))
    print(json.dumps({"type": "rate_limit_event", "rate_limit_info": info, "session_id": session}))
    if not limited:
        message = {"id": f"msg_{uuid.uuid4().hex[:12]}", "type": "message", "role": "assistant", "model": CLAUDE_MODEL}
        content = [{"type": "text", "text": text}]
        assistant = {"type": "assistant", "message": {**message, "content": content, "usage": CLAUDE_USAGE}}
        print(json.dumps({**assistant, "parent_tool_use_id": None, "session_id": session}))
    print(json.dumps(envelope))
    return 1 if limited else 0


def claude_main(args: list[str]) -> int:
    if args[:2] == ["auth", "status"]:
        signed_in = "STANDIN_SIGNED_OUT" not in os.environ
        status = {
            "loggedIn": signed_in,
            "authMethod": "claude.ai" if signed_in else "none",
            "apiProvider": "firstParty",
        }
        print(json.dumps(status, indent=2))
        return 0 if signed_in else 1
    if "-p" in args:
        return claude_print(args)
    return claude_session(args)


# --- Codex --------------------------------------------------------------------------------------------------------


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def codex_rollout(session: str) -> Path:
    existing = sorted((codex_home() / "sessions").glob(f"*/*/*/rollout-*-{session}.jsonl"))
    if existing:
        return existing[0]
    day = dt.datetime.now(dt.UTC)
    folder = codex_home() / "sessions" / day.strftime("%Y/%m/%d")
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"rollout-{day.strftime('%Y-%m-%dT%H-%M-%S')}-{session}.jsonl"


class Rollout:
    """Appends 0.171-format lines with their ordinal."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.ordinal = sum(1 for _ in path.open(encoding="utf-8")) if path.exists() else 0

    def write(self, kind: str, payload: dict) -> None:
        line = {"timestamp": now(), "ordinal": self.ordinal, "type": kind, "payload": payload}
        self.ordinal += 1
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")


def codex_session(args: list[str]) -> int:
    session, source, keep_open, prompts = parse_session(args)
    cwd = os.getcwd()
    path = codex_rollout(session)
    rollout = Rollout(path)
    hooks = codex_home() / "hooks.json"
    common = {"session_id": session, "transcript_path": str(path), "cwd": cwd, "model": "gpt-5.5"}
    if rollout.ordinal == 0:
        meta = {"session_id": session, "id": session, "cwd": cwd, "originator": "codex_cli_rs", "source": "cli"}
        rollout.write("session_meta", {**meta, "cli_version": "0.171.0", "history_mode": "paginated"})
    run_hooks("SessionStart", {**common, "source": source}, hooks)
    for text in prompts:
        turn = str(uuid.uuid4())
        rollout.write("event_msg", {"type": "task_started", "turn_id": turn})
        environment = f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <shell>bash</shell>\n</environment_context>"
        rollout.write("response_item", user_item(environment, "environment"))
        rollout.write("turn_context", {"turn_id": turn, "cwd": cwd, "model": "gpt-5.5"})
        run_hooks("UserPromptSubmit", {**common, "turn_id": turn, "prompt": text}, hooks)
        rollout.write("response_item", user_item(text, "user"))
        item = {"type": "UserMessage", "id": str(uuid.uuid4()), "content": [{"type": "text", "text": text}]}
        rollout.write("event_msg", {"type": "item_completed", "turn_id": turn, "item": item})
        call = f"call_{uuid.uuid4().hex[:8]}"
        arguments = json.dumps({"cmd": "uv run pytest"})
        rollout.write(
            "response_item", {"type": "function_call", "name": "exec_command", "arguments": arguments, "call_id": call}
        )
        rollout.write("token_usage_record", {"session_id": session, "turn_id": turn, "usage": {"total_tokens": 15}})
        output = "Chunk ID: 1a2b3c\nWall time: 0.4 seconds\nProcess exited with code 0\nOutput:\n3 passed\n"
        rollout.write("response_item", {"type": "function_call_output", "call_id": call, "output": output})
        final = f"Done with {text}."
        message = {"type": "message", "id": f"msg_{uuid.uuid4().hex[:8]}", "role": "assistant"}
        rollout.write("response_item", {**message, "content": [{"type": "output_text", "text": final}]})
        rollout.write("event_msg", {"type": "task_complete", "turn_id": turn, "last_agent_message": final})
        stop = {**common, "turn_id": turn, "stop_hook_active": False, "last_assistant_message": final}
        run_hooks("Stop", stop, hooks)
    if not keep_open:
        run_hooks("SessionEnd", {**common, "reason": "other"}, hooks)
    return 0


def user_item(text: str, provenance: str) -> dict:
    metadata = {"content_item_metadata": [{"provenance": {"type": provenance}}]}
    return {
        "type": "message",
        "id": f"msg_{uuid.uuid4().hex[:8]}",
        "role": "user",
        "content": [{"type": "input_text", "text": text}],
        "internal_chat_message_metadata_passthrough": metadata,
    }


def codex_exec(args: list[str]) -> int:
    prompt = sys.stdin.read()
    events = "--json" in args
    thread = str(uuid.uuid4())
    if events:
        print(json.dumps({"type": "thread.started", "thread_id": thread}))
        print(json.dumps({"type": "turn.started"}))
    if rate_limited():
        message = "exceeded retry limit, last status: 429 Too Many Requests"
        if events:
            print(json.dumps({"type": "error", "message": message}))
            print(json.dumps({"type": "turn.failed", "error": {"message": message}}))
        else:
            print(f"ERROR: {message}", file=sys.stderr)
        return 1
    answer = json.dumps(answer_for(prompt))
    target = Path(args[args.index("-o") + 1])
    target.write_text(answer, encoding="utf-8")
    if events:
        item = {"id": "item_0", "type": "agent_message", "text": answer}
        print(json.dumps({"type": "item.completed", "item": item}))
        print(json.dumps({"type": "turn.completed", "usage": CODEX_USAGE}))
    else:
        print(answer)
    return 0


def codex_main(args: list[str]) -> int:
    if args[:2] == ["login", "status"]:
        print("API key configured - ***\nAuthentication is checked when you send a request.", file=sys.stderr)
        return 0
    if args[:2] == ["debug", "models"]:
        print(json.dumps({"models": [{"slug": "gpt-5.5", "visibility": "list", "supported_in_api": True}]}))
        return 0
    if args[:1] == ["exec"]:
        return codex_exec(args)
    return codex_session(args)


def parse_session(args: list[str]) -> tuple[str, str, bool, list[str]]:
    """(session id, SessionStart source, keep the session open, prompts) from the session command line."""
    session, source, keep_open, prompts = str(uuid.uuid4()), "startup", False, []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("--session-id", "--resume"):
            session = args[index + 1]
            source = "resume" if arg == "--resume" else source
            index += 2
            continue
        if arg == "--open":
            keep_open = True
        else:
            prompts.append(arg)
        index += 1
    return session, source, keep_open, prompts


if __name__ == "__main__":
    sys.exit(claude_main(sys.argv[1:]) if FLAVOUR == "claude" else codex_main(sys.argv[1:]))
