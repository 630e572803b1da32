"""Gemini CLI as a text generator: one `gemini -p` turn without tools, hooks, MCP servers or extensions.

What holds each constraint, as Gemini CLI 0.61.0 takes it (checked in tests/test_real_gemini_cli.py):
- no tools: a policy file (`--policy`) denying every tool, so the request declares none;
- no hooks, one turn: the temporary folder's own `.gemini/settings.json` (`hooksConfig.enabled: false`,
  `model.maxSessionTurns: 1`), read because the folder is trusted for the call (GEMINI_CLI_TRUST_WORKSPACE); a
  system settings file would be skipped, as Gemini CLI refuses one under a world-writable folder such as /tmp;
- no MCP server: `--allowed-mcp-server-names` naming none that exists; no extension: `--extensions none`.
The prompt goes on stdin (`-p ""` appends nothing); `--output-format json` prints one object: `response` and
`stats.models.<model>.tokens`, or, on failure, `error` {type, message, code} on stderr.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from orcmem.extract.constants import TEMP_DIR_PREFIX
from orcmem.extract.generator import AgentCliGenerator, GeneratorResult, clip
from orcmem.extract.runner import ProcessOutcome, run_process
from orcmem.extract.usage_report import gemini_usage, rate_limit_text
from orcmem.models.constants import DEFAULT_GEMINI_MODEL
from orcmem.models.data_shapes import JsonObject
from orcmem.models.env_names import DISTILLING_ENV_VAR
from orcmem.models.usage import RateLimit

POLICY_FILE = "deny-all-tools.toml"
DENY_ALL_TOOLS = '[[rule]]\ntoolName = "*"\ndecision = "deny"\npriority = 999\n'
FOLDER_SETTINGS = {"hooksConfig": {"enabled": False}, "model": {"maxSessionTurns": 1}}
NO_MCP_SERVER = "orcmem-distill-none"  # a server name nobody configures: every configured server is left out
RATE_LIMITED_CODE = 429


def gemini_argv(binary: str, model: str, workdir: str, launcher: Sequence[str] = ()) -> list[str]:
    """The command line: headless, JSON out, the model, no MCP server, no extension, every tool denied."""
    return [
        *launcher,
        binary,
        "-p",
        "",
        "--output-format",
        "json",
        "--model",
        model,
        "--allowed-mcp-server-names",
        NO_MCP_SERVER,
        "--extensions",
        "none",
        "--policy",
        os.path.join(workdir, POLICY_FILE),
    ]


def gemini_env(base: Mapping[str, str], cwd: str) -> dict[str, str]:
    """The CLI's environment: `base`, the temporary folder trusted (its settings apply), no colour, PWD there."""
    env = dict(base)
    env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
    env["NO_COLOR"] = "1"
    env["PWD"] = cwd
    env[DISTILLING_ENV_VAR] = "1"
    return env


def prepare_folder(workdir: str) -> None:
    """Write the policy file and the folder's settings the command line and Gemini CLI read."""
    Path(workdir, POLICY_FILE).write_text(DENY_ALL_TOOLS, encoding="utf-8")
    settings = Path(workdir, ".gemini")
    settings.mkdir()
    (settings / "settings.json").write_text(json.dumps(FOLDER_SETTINGS), encoding="utf-8")


def gemini_envelope(text: str) -> JsonObject | None:
    """The JSON object Gemini CLI printed: the whole text, or the last indented object at its end (on stderr it
    follows the error's report)."""
    stripped = text.strip()
    starts = [0] + [i + 1 for i in range(len(stripped)) if stripped[i] == "\n" and stripped[i + 1 : i + 2] == "{"]
    for start in reversed(starts):
        try:
            value = json.loads(stripped[start:])
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _error_text(error: JsonObject) -> tuple[str, bool]:
    """What a failed envelope's `error` says, and whether it is a rate limit (code 429 or its words)."""
    message = str(error.get("message") or error.get("type") or "no error text")
    code = error.get("code")
    limited = code == RATE_LIMITED_CODE or rate_limit_text(message)
    suffix = f" (code {code})" if isinstance(code, int | str) and code != "" else ""
    return f"Gemini CLI reported an error{suffix}: {clip(message, 400)}", limited


def read_gemini_output(outcome: ProcessOutcome, timeout: float, model: str | None) -> GeneratorResult:
    """Turn a finished `gemini -p --output-format json` into the answer (`response`), its usage, or why not."""
    if outcome.start_error is not None:
        return GeneratorResult.failure(f"Gemini CLI could not run: {outcome.start_error}")
    if outcome.timed_out:
        return GeneratorResult.failure(f"Gemini CLI gave no answer within {timeout:g} s and was stopped")
    envelope = gemini_envelope(outcome.stdout) or gemini_envelope(outcome.stderr)
    if envelope is None:
        note = f"; stderr: {clip(outcome.stderr.strip(), 300)}" if outcome.stderr.strip() else ""
        limited = rate_limit_text(outcome.stderr)
        return GeneratorResult.failure(
            f"Gemini CLI gave no JSON result ({outcome.describe()}){note}",
            rate_limit=RateLimit(limited=True) if limited else None,
        )
    usage = gemini_usage(envelope, model)
    error = envelope.get("error")
    if isinstance(error, dict):
        message, limited = _error_text(error)
        return GeneratorResult.failure(message, usage, RateLimit(limited=True) if limited else None)
    response = envelope.get("response")
    if not isinstance(response, str) or not response.strip():
        return GeneratorResult.failure(f"Gemini CLI answered with no text ({outcome.describe()})", usage)
    return GeneratorResult.answer(response.strip(), usage)


class GeminiCliGenerator(AgentCliGenerator):
    """Runs `gemini -p` once per prompt, with the prompt on stdin, in a fresh temporary folder."""

    provider = "gemini"
    default_model = DEFAULT_GEMINI_MODEL

    def argv(self, workdir: str) -> list[str]:
        """The command line this generator runs with its files in `workdir`."""
        return gemini_argv(self.binary, self.model or DEFAULT_GEMINI_MODEL, workdir, self.launcher)

    def generate(self, prompt: str, schema: JsonObject | None = None) -> GeneratorResult:
        """Ask Gemini CLI once; never raises (the prompt itself asks for the JSON: `schema` is not enforced here)."""
        try:
            with tempfile.TemporaryDirectory(prefix=TEMP_DIR_PREFIX, ignore_cleanup_errors=True) as workdir:
                prepare_folder(workdir)
                base = os.environ if self.env is None else self.env
                env = gemini_env(base, workdir)
                outcome = run_process(self.argv(workdir), prompt, cwd=workdir, env=env, timeout=self.timeout)
                return read_gemini_output(outcome, self.timeout, self.model)
        except Exception as exc:  # never raise (no temporary folder, or any other failure): the job records why
            return GeneratorResult.failure(f"Gemini CLI could not run: {type(exc).__name__}: {exc}")
