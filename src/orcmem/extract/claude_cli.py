"""Claude Code as a text generator: one `claude -p` turn without tools, hooks, MCP servers or a saved session."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence

from orcmem.extract.constants import (
    CLAUDE_BINARY,
    CLAUDE_DISABLE_HOOKS_SETTINGS,
    CLAUDE_DISALLOWED_TOOLS,
    TEMP_DIR_PREFIX,
)
from orcmem.extract.generator import GeneratorResult, clip
from orcmem.extract.runner import ProcessOutcome, run_process
from orcmem.extract.usage_report import claude_rate_limit, claude_usage, json_lines
from orcmem.models.constants import DEFAULT_CLAUDE_MODEL, GENERATOR_TIMEOUT_S
from orcmem.models.data_shapes import JsonObject
from orcmem.models.env_names import DISTILLING_ENV_VAR


def claude_argv(binary: str, model: str, launcher: Sequence[str] = ()) -> list[str]:
    """The command line: one turn, streamed JSON events, no MCP servers, no shell/write/web tools, no hooks, no
    session.

    `stream-json --verbose` (rather than `json`) ends with the same result envelope, and before it the
    `rate_limit_event` lines that tell how much of the account's limit is left. `launcher` comes before the binary
    when it is a script (node and Claude Code's cli.js).
    """
    return [
        *launcher,
        binary,
        "-p",
        "--model",
        model,
        "--output-format",
        "stream-json",
        "--verbose",
        "--max-turns",
        "1",
        "--strict-mcp-config",
        "--disallowed-tools",
        *CLAUDE_DISALLOWED_TOOLS,
        "--settings",
        CLAUDE_DISABLE_HOOKS_SETTINGS,
        "--no-session-persistence",
    ]


def claude_env(base: Mapping[str, str], cwd: str, api_key: str | None) -> dict[str, str]:
    """The CLI's environment: `base` without CLAUDECODE (set inside a Claude Code session), PWD at the temp folder."""
    env = {key: value for key, value in base.items() if key != "CLAUDECODE"}
    env["PWD"] = cwd
    env[DISTILLING_ENV_VAR] = "1"
    if api_key:
        env["ANTHROPIC_API_KEY"] = api_key
    return env


def _envelope(stdout: str) -> JsonObject | None:
    """The result object: the whole output (`--output-format json`), or else its last line that is one (the
    stream's final `result` event)."""
    text = stdout.strip()
    if not text:
        return None
    candidates = [text, *reversed(text.splitlines())]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict) and (value.get("type") == "result" or "is_error" in value or "result" in value):
            return value
    return None


def _envelope_error(envelope: JsonObject) -> str:
    """What a failed envelope says: its result text or its errors, with the subtype and API status when present."""
    parts: list[str] = []
    result = envelope.get("result")
    if isinstance(result, str) and result.strip():
        parts.append(result.strip())
    errors = envelope.get("errors")
    if isinstance(errors, list):
        parts.extend(str(item).strip() for item in errors if str(item).strip())
    detail = "; ".join(parts) or "no error text"
    tags = []
    subtype = envelope.get("subtype")
    if isinstance(subtype, str) and subtype and subtype != "success":
        tags.append(subtype)
    status = envelope.get("api_error_status")
    if isinstance(status, int) and not isinstance(status, bool):
        tags.append(f"API status {status}")
    suffix = f" ({', '.join(tags)})" if tags else ""
    return f"Claude Code reported an error{suffix}: {detail}"


def _stderr_note(outcome: ProcessOutcome) -> str:
    text = outcome.stderr.strip()
    return f"; stderr: {clip(text, 300)}" if text else ""


def read_claude_output(outcome: ProcessOutcome, timeout: float) -> GeneratorResult:
    """Turn a finished `claude -p` process into the answer (the envelope's `result` when `is_error` is false)."""
    if outcome.start_error is not None:
        return GeneratorResult.failure(f"Claude Code could not run: {outcome.start_error}")
    if outcome.timed_out:
        return GeneratorResult.failure(f"Claude Code gave no answer within {timeout:g} s and was stopped")
    envelope = _envelope(outcome.stdout)
    events = list(json_lines(outcome.stdout))
    if envelope is None:
        limit = claude_rate_limit(events, None)
        said = "no output" if not outcome.stdout.strip() else f"output that is not its JSON result: {outcome.stdout}"
        message = f"Claude Code gave {said} ({outcome.describe()}){_stderr_note(outcome)}"
        return GeneratorResult.failure(message, rate_limit=limit)
    usage = claude_usage(envelope)
    limit = claude_rate_limit(events, envelope)
    is_error = envelope.get("is_error")
    subtype = envelope.get("subtype")
    failed = is_error is True or (is_error is None and isinstance(subtype, str) and subtype.startswith("error"))
    if failed:
        return GeneratorResult.failure(_envelope_error(envelope), usage, limit)
    result = envelope.get("result")
    if not isinstance(result, str):
        return GeneratorResult.failure(f"Claude Code's JSON result has no text ({outcome.describe()})", usage, limit)
    if not result.strip():
        return GeneratorResult.failure("Claude Code answered with empty text", usage, limit)
    return GeneratorResult.answer(result, usage, limit)


class ClaudeCliGenerator:
    """Runs `claude -p` once per prompt, with the prompt on stdin, in a fresh temporary folder."""

    provider = "claude"

    def __init__(
        self,
        binary: str = CLAUDE_BINARY,
        model: str = DEFAULT_CLAUDE_MODEL,
        timeout: float = GENERATOR_TIMEOUT_S,
        env: Mapping[str, str] | None = None,
        api_key: str | None = None,
        launcher: Sequence[str] = (),
    ) -> None:
        """Use `binary` and `model`; `env` (default: this process's environment, read at each call) is copied."""
        self.binary = binary
        self.launcher = tuple(launcher)
        self.model: str | None = model or DEFAULT_CLAUDE_MODEL
        self.timeout = timeout
        self.env = env
        self.api_key = api_key

    def __repr__(self) -> str:
        key = ", api_key=<set>" if self.api_key else ""
        return f"ClaudeCliGenerator(binary={self.binary!r}, model={self.model!r}, timeout={self.timeout!r}{key})"

    def argv(self) -> list[str]:
        """The command line this generator runs."""
        return claude_argv(self.binary, self.model or DEFAULT_CLAUDE_MODEL, self.launcher)

    def generate(self, prompt: str, schema: JsonObject | None = None) -> GeneratorResult:
        """Ask Claude Code once; never raises. (the prompt itself asks for the JSON: `schema` is not enforced here)."""
        try:
            workdir = tempfile.mkdtemp(prefix=TEMP_DIR_PREFIX)
        except OSError as exc:
            return GeneratorResult.failure(f"Claude Code could not run: no temporary folder ({exc})")
        try:
            base = os.environ if self.env is None else self.env
            outcome = run_process(
                self.argv(),
                prompt,
                cwd=workdir,
                env=claude_env(base, workdir, self.api_key),
                timeout=self.timeout,
            )
            return read_claude_output(outcome, self.timeout)
        except Exception as exc:  # never raise: the job records why instead
            return GeneratorResult.failure(f"Claude Code could not run: {type(exc).__name__}: {exc}")
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
