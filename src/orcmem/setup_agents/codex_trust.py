"""Whether Codex will run orcmem's hooks, asked of Codex itself: `codex app-server`, method `hooks/list`.

Codex runs a new or changed hook only once the person has trusted it by hash in `/hooks`; the hash and the hook's
key are Codex's own, so orcmem asks instead of computing them. The app server reads the config and answers without
any network or model call.
"""

from __future__ import annotations

import contextlib
import json
import selectors
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from orcmem.models.data_shapes import JsonObject
from orcmem.models.errors import OrcmemError
from orcmem.setup_agents.entries import is_orcmem_hook

APP_SERVER_TIMEOUT_S = 15.0  # the app server answers in about 0.4 s here; a slow first start of the native binary
# Keeps the app server from contacting anything while it answers.
APP_SERVER_ARGS = ("app-server", "-c", "analytics.enabled=false", "--disable", "plugins")
TRUSTED = "trusted"
MANAGED = "managed"  # set by an administrator's requirements: runs without the person's trust


@dataclass(frozen=True)
class HookTrust:
    """One of orcmem's hooks as Codex sees it."""

    event: str  # Codex's name, e.g. "userPromptSubmit"
    command: str
    status: str  # "trusted", "untrusted", "modified" (changed since it was trusted) or "managed"
    source_path: str
    key: str  # where Codex records the person's trust: [hooks.state."<key>"] trusted_hash = <current_hash>
    current_hash: str

    @property
    def runs(self) -> bool:
        """True when Codex will run it."""
        return self.status in (TRUSTED, MANAGED)


@dataclass(frozen=True)
class CodexHooks:
    """What Codex said about the hooks it found for one folder."""

    orcmem: list[HookTrust]
    warnings: list[str]
    errors: list[str]


def _requests(cwd: Path) -> str:
    messages: list[JsonObject] = [
        {"id": 0, "method": "initialize", "params": {"clientInfo": {"name": "orcmem", "version": "1"}}},
        {"method": "initialized"},
        {"id": 1, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
    ]
    return "".join(json.dumps(message) + "\n" for message in messages)


def _answer(process: subprocess.Popen[bytes], timeout_s: float) -> JsonObject:
    """The app server's answer to request 1, read line by line until the deadline."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout_s
    buffer = b""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if not selector.select(left):
                break
            chunk = process.stdout.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                raise OrcmemError("codex app-server stopped before it listed the hooks")
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict) and message.get("id") == 1:
                    if "error" in message:
                        raise OrcmemError(f"codex app-server refused hooks/list: {message['error']}")
                    return message
    raise OrcmemError(f"codex app-server did not list the hooks within {timeout_s:g} s")


def _parse(answer: JsonObject) -> CodexHooks:
    entries = answer.get("result", {}).get("data", [])
    ours: list[HookTrust] = []
    warnings: list[str] = []
    errors: list[str] = []
    for entry in entries if isinstance(entries, list) else []:
        warnings += [str(w) for w in entry.get("warnings", [])]
        errors += [f"{e.get('path')}: {e.get('message')}" for e in entry.get("errors", []) if isinstance(e, dict)]
        for hook in entry.get("hooks", []):
            handler = {"type": "command", "command": hook.get("command")}
            if hook.get("handlerType") == "command" and is_orcmem_hook(handler):
                ours.append(
                    HookTrust(
                        str(hook.get("eventName")),
                        str(hook.get("command")),
                        str(hook.get("trustStatus")),
                        str(hook.get("sourcePath")),
                        str(hook.get("key")),
                        str(hook.get("currentHash")),
                    )
                )
    return CodexHooks(ours, warnings, errors)


def codex_hooks(
    codex: str, cwd: Path, env: Mapping[str, str] | None = None, *, timeout_s: float = APP_SERVER_TIMEOUT_S
) -> CodexHooks:
    """Ask Codex which of orcmem's hooks it found for `cwd` and whether it trusts them; OrcmemError when it cannot."""
    try:
        process = subprocess.Popen(
            [codex, *APP_SERVER_ARGS],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
            env=None if env is None else dict(env),
        )
    except OSError as exc:
        raise OrcmemError(f"could not run {codex} app-server: {exc.strerror or exc}") from exc
    try:
        assert process.stdin is not None
        process.stdin.write(_requests(cwd).encode())
        process.stdin.flush()  # stdin stays open: the app server stops reading requests when it closes
        return _parse(_answer(process, timeout_s))
    except BrokenPipeError as exc:
        raise OrcmemError("codex app-server stopped before it listed the hooks") from exc
    finally:
        process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(BrokenPipeError):  # unflushed requests to a server that stopped
                    stream.close()


def trust_summary(hooks: CodexHooks) -> tuple[bool, str, str]:
    """(every orcmem hook will run, one line saying which will not and why, how to fix it)."""
    if not hooks.orcmem:
        found = "Codex finds none of orcmem's hooks" + (f" ({hooks.errors[0]})" if hooks.errors else "")
        return False, found, "Run `orcmem setup codex` (or `orcmem init`), then trust the hooks in Codex's /hooks."
    waiting = [hook for hook in hooks.orcmem if not hook.runs]
    if not waiting:
        return True, f"Codex trusts all {len(hooks.orcmem)} of orcmem's hooks", ""
    named = ", ".join(f"{hook.event} ({hook.status})" for hook in waiting)
    detail = f"Codex skips {len(waiting)} of orcmem's {len(hooks.orcmem)} hooks until they are trusted: {named}"
    return False, detail, "Open /hooks in Codex and trust orcmem's hooks."
