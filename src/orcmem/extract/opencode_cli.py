"""OpenCode as a text generator: one `opencode run` turn without tools, plugins, MCP servers or project config.

What holds each constraint, as OpenCode 1.18.33 takes it (checked in tests/test_real_opencode.py):
- no tools: an agent of orcmem's own (`OPENCODE_CONFIG_CONTENT`, merged over the user's config) with every tool off
  (`tools: {"*": false}`) and every permission denied, so the request declares none;
- one turn: that agent's `steps: 1`; no side request for a title: `--title` gives one;
- no plugin (orcmem's own among them): `--pure`, and OpenCode's default plugins off; no project config or
  CLAUDE.md: `OPENCODE_DISABLE_PROJECT_CONFIG`, `OPENCODE_DISABLE_CLAUDE_CODE`, in a fresh temporary folder;
- no MCP server: each server the user's config files name is set `enabled: false` in the same overlay.
The prompt goes on stdin; `--format json` prints one event a line: `text` parts carry the answer, `step_finish`
parts the tokens, an `error` event why it failed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from tempfile import TemporaryDirectory

from orcmem.extract.constants import TEMP_DIR_PREFIX
from orcmem.extract.generator import AgentCliGenerator, GeneratorResult, clip
from orcmem.extract.runner import ProcessOutcome, run_process
from orcmem.extract.usage_report import opencode_usage, rate_limit_text
from orcmem.models.data_shapes import JsonObject
from orcmem.models.env_names import DISTILLING_ENV_VAR
from orcmem.models.usage import RateLimit

AGENT = "orcmem-distill"
TITLE = "orcmem distillation"
AGENT_PROMPT = "Answer the user's message with the JSON it asks for, and nothing else."
CONFIG_FILES = ("opencode.json", "opencode.jsonc", "config.json")
QUIET_ENV = {
    "OPENCODE_DISABLE_PROJECT_CONFIG": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_PURE": "1",
    "NO_COLOR": "1",
}


def opencode_argv(binary: str, model: str | None, launcher: Sequence[str] = ()) -> list[str]:
    """The command line: one run of orcmem's tool-less agent, no plugin, JSON events out, the model when chosen."""
    chosen = ["--model", model] if model else []
    return [*launcher, binary, "run", "--pure", "--format", "json", "--agent", AGENT, "--title", TITLE, *chosen]


def configured_servers(env: Mapping[str, str]) -> list[str]:
    """The MCP server names the user's OpenCode config files declare (unreadable files give none)."""
    config_home = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")
    paths = [Path(config_home, "opencode", name) for name in CONFIG_FILES]
    if env.get("OPENCODE_CONFIG_DIR"):
        paths += [Path(env["OPENCODE_CONFIG_DIR"], name) for name in CONFIG_FILES]
    if env.get("OPENCODE_CONFIG"):
        paths.append(Path(env["OPENCODE_CONFIG"]))
    names: list[str] = []
    for path in paths:
        try:
            servers = json.loads(path.read_text(encoding="utf-8")).get("mcp")
        except (OSError, ValueError, AttributeError):  # absent, JSONC with comments, or not an object
            continue
        if isinstance(servers, dict):
            names += [name for name in servers if name not in names]
    return names


def overlay(servers: Sequence[str]) -> JsonObject:
    """The config merged over the user's: orcmem's agent with every tool off, each named MCP server disabled."""
    agent = {"mode": "primary", "prompt": AGENT_PROMPT, "steps": 1, "tools": {"*": False}, "permission": {"*": "deny"}}
    return {"agent": {AGENT: agent}, "mcp": {name: {"enabled": False} for name in servers}}


def opencode_env(base: Mapping[str, str], cwd: str) -> dict[str, str]:
    """The CLI's environment: `base`, the overlay, OpenCode's plugins, project config and updates off, PWD there."""
    env = {**base, **QUIET_ENV}
    env["OPENCODE_CONFIG_CONTENT"] = json.dumps(overlay(configured_servers(base)))
    env["PWD"] = cwd  # OpenCode takes its folder from PWD
    env[DISTILLING_ENV_VAR] = "1"
    return env


def opencode_events(text: str) -> list[JsonObject]:
    """The JSON events, one a line; other lines are skipped."""
    events: list[JsonObject] = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            events.append(value)
    return events


def _error_text(event: JsonObject) -> str:
    """What an `error` event says: its data's message, else its name."""
    error = event.get("error")
    if not isinstance(error, dict):
        return str(error or "no error text")
    data = error.get("data")
    message = data.get("message") if isinstance(data, dict) else None
    return str(message or error.get("name") or "no error text")


def read_opencode_output(outcome: ProcessOutcome, timeout: float, model: str | None) -> GeneratorResult:
    """Turn a finished `opencode run --format json` into the answer (its text parts), its usage, or why not."""
    if outcome.start_error is not None:
        return GeneratorResult.failure(f"OpenCode could not run: {outcome.start_error}")
    if outcome.timed_out:
        return GeneratorResult.failure(f"OpenCode gave no answer within {timeout:g} s and was stopped")
    events = opencode_events(outcome.stdout)
    usage = opencode_usage(events, model)
    errors = [_error_text(event) for event in events if event.get("type") == "error"]
    if errors:
        limited = rate_limit_text(errors[0])
        message = f"OpenCode reported an error: {clip(errors[0], 400)}"
        return GeneratorResult.failure(message, usage, RateLimit(limited=True) if limited else None)
    parts = [event.get("part") for event in events if event.get("type") == "text"]
    text = "".join(str(part.get("text") or "") for part in parts if isinstance(part, dict)).strip()
    if not text:
        note = f"; stderr: {clip(outcome.stderr.strip(), 300)}" if outcome.stderr.strip() else ""
        limited = rate_limit_text(outcome.stderr)
        return GeneratorResult.failure(
            f"OpenCode answered with no text ({outcome.describe()}){note}",
            usage,
            RateLimit(limited=True) if limited else None,
        )
    return GeneratorResult.answer(text, usage)


class OpenCodeCliGenerator(AgentCliGenerator):
    """Runs `opencode run` once per prompt, with the prompt on stdin, in a fresh temporary folder; its model is
    "provider/model", None for the one OpenCode is set up with."""

    provider = "opencode"

    def argv(self) -> list[str]:
        """The command line this generator runs."""
        return opencode_argv(self.binary, self.model, self.launcher)

    def generate(self, prompt: str, schema: JsonObject | None = None) -> GeneratorResult:
        """Ask OpenCode once; never raises (the prompt itself asks for the JSON: `schema` is not enforced here)."""
        try:
            with TemporaryDirectory(prefix=TEMP_DIR_PREFIX, ignore_cleanup_errors=True) as workdir:
                env = opencode_env(os.environ if self.env is None else self.env, workdir)
                outcome = run_process(self.argv(), prompt, cwd=workdir, env=env, timeout=self.timeout)
                return read_opencode_output(outcome, self.timeout, self.model)
        except Exception as exc:  # never raise (no temporary folder, or any other failure): the job records why
            return GeneratorResult.failure(f"OpenCode could not run: {type(exc).__name__}: {exc}")
