"""Codex as a text generator: one `codex exec` in a read-only sandbox, without MCP servers, held to a JSON schema."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from orcmem.extract.agent_cli import codex_config
from orcmem.extract.constants import CODEX_BINARY, CODEX_MODEL_HINTS, GENERATOR_OUTPUT_MAX_BYTES, TEMP_DIR_PREFIX
from orcmem.extract.generator import GeneratorResult, clip
from orcmem.extract.prompt import output_schema_json
from orcmem.extract.runner import ProcessOutcome, run_process
from orcmem.extract.usage_report import codex_report, rate_limit_text
from orcmem.models.constants import GENERATOR_TIMEOUT_S
from orcmem.models.data_shapes import JsonObject
from orcmem.models.env_names import DISTILLING_ENV_VAR
from orcmem.models.usage import RateLimit

SCHEMA_FILE = "schema.json"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")  # a TOML bare key: what a dotted `-c` path can name
LAST_MESSAGE_FILE = "last.txt"


def pick_codex_model(models: Iterable[str]) -> str | None:
    """The first model whose name contains spark, mini or nano (any case), else None for the account's default."""
    for model in models:
        lowered = model.lower()
        if any(hint in lowered for hint in CODEX_MODEL_HINTS):
            return model
    return None


def configured_mcp_servers(env: Mapping[str, str]) -> list[str]:
    """The MCP servers Codex's config.toml names (`$CODEX_HOME`, else `~/.codex`), to switch off one by one."""
    servers = codex_config(env).get("mcp_servers")
    return [name for name in servers if _BARE_KEY.fullmatch(name)] if isinstance(servers, dict) else []


def codex_argv(
    binary: str,
    model: str | None,
    workdir: str,
    disable_hooks: bool = True,
    launcher: Sequence[str] = (),
    mcp_servers: Sequence[str] = (),
) -> list[str]:
    """The command line: read-only sandbox, no git check, no rollout, no MCP servers, schema and answer files.

    `disable_hooks` adds `-c features.hooks=false` (Codex's documented switch), so orcmem's own Codex hooks do not
    fire inside its distillation run; codex-cli 0.171.0 accepts it, and ignores feature keys it does not know.
    `-c mcp_servers={}` no longer empties the configured servers in 0.171 (the override is merged), so each of
    `mcp_servers` is switched off by name instead (`{}` only when there is none to name): the distillation run
    offers the model no MCP tool.
    """
    argv = [*launcher, binary, "exec"]
    if model:
        argv += ["--model", model]
    argv += ["--skip-git-repo-check", "--sandbox", "read-only", "--ephemeral"]
    # Both at once could name a server the emptied table no longer has, on a Codex where {} still replaces it.
    for name in mcp_servers:
        argv += ["-c", f"mcp_servers.{name}.enabled=false"]
    if not mcp_servers:
        argv += ["-c", "mcp_servers={}"]
    if disable_hooks:
        argv += ["-c", "features.hooks=false"]
    argv += [
        "--output-schema",
        os.path.join(workdir, SCHEMA_FILE),
        "-o",
        os.path.join(workdir, LAST_MESSAGE_FILE),
        "--json",  # stdout becomes its events: `turn.completed` carries the tokens, `turn.failed` the error
        "-",
    ]
    return argv


def codex_env(base: Mapping[str, str], cwd: str) -> dict[str, str]:
    """The CLI's environment: `base` with NO_COLOR=1 and PWD at the temporary folder."""
    env = dict(base)
    env["NO_COLOR"] = "1"
    env["PWD"] = cwd
    env[DISTILLING_ENV_VAR] = "1"
    return env


def read_codex_output(
    outcome: ProcessOutcome, last_message: Path, timeout: float, model: str | None = None
) -> GeneratorResult:
    """Turn a finished `codex exec --json` into the answer: the last-message file, trimmed; the events on stdout
    give its usage, and its error when there is no answer."""
    if outcome.start_error is not None:
        return GeneratorResult.failure(f"Codex could not run: {outcome.start_error}")
    if outcome.timed_out:
        return GeneratorResult.failure(f"Codex gave no answer within {timeout:g} s and was stopped")
    try:
        with last_message.open("rb") as handle:
            text = handle.read(GENERATOR_OUTPUT_MAX_BYTES).decode("utf-8", errors="replace").strip()
    except OSError:
        text = ""
    usage, error = codex_report(outcome.stdout, model)
    if text:
        return GeneratorResult.answer(text, usage)
    stderr = outcome.stderr.strip()
    said = f"; it said: {clip(error, 300)}" if error else ""
    note = f"; stderr: {clip(stderr, 300)}" if stderr else ""
    limited = rate_limit_text(f"{error or ''} {stderr}")
    return GeneratorResult.failure(
        f"Codex wrote no final message ({outcome.describe()}){said}{note}",
        usage,
        RateLimit(limited=True) if limited else None,
    )


class CodexCliGenerator:
    """Runs `codex exec` once per prompt, with the prompt on stdin, in a fresh temporary folder."""

    provider = "codex"

    def __init__(
        self,
        binary: str = CODEX_BINARY,
        model: str | None = None,
        timeout: float = GENERATOR_TIMEOUT_S,
        env: Mapping[str, str] | None = None,
        disable_hooks: bool = True,
        launcher: Sequence[str] = (),
    ) -> None:
        """Use `binary` and `model` (None: the account's default); `env` defaults to this process's, read per call."""
        self.binary = binary
        self.launcher = tuple(launcher)
        self.model = model or None
        self.timeout = timeout
        self.env = env
        self.disable_hooks = disable_hooks

    def __repr__(self) -> str:
        return f"CodexCliGenerator(binary={self.binary!r}, model={self.model!r}, timeout={self.timeout!r})"

    def argv(self, workdir: str, mcp_servers: Sequence[str] = ()) -> list[str]:
        """The command line this generator runs with its files in `workdir`, switching off `mcp_servers`."""
        return codex_argv(self.binary, self.model, workdir, self.disable_hooks, self.launcher, mcp_servers)

    def generate(self, prompt: str, schema: JsonObject | None = None) -> GeneratorResult:
        """Ask Codex once, held to `schema` (the extraction's when None); never raises."""
        try:
            workdir = tempfile.mkdtemp(prefix=TEMP_DIR_PREFIX)
        except OSError as exc:
            return GeneratorResult.failure(f"Codex could not run: no temporary folder ({exc})")
        try:
            schema_text = output_schema_json() if schema is None else json.dumps(schema, indent=2)
            Path(workdir, SCHEMA_FILE).write_text(schema_text, encoding="utf-8")
            base = os.environ if self.env is None else self.env
            argv = self.argv(workdir, configured_mcp_servers(base))
            outcome = run_process(argv, prompt, cwd=workdir, env=codex_env(base, workdir), timeout=self.timeout)
            return read_codex_output(outcome, Path(workdir, LAST_MESSAGE_FILE), self.timeout, self.model)
        except Exception as exc:  # never raise: the job records why instead
            return GeneratorResult.failure(f"Codex could not run: {type(exc).__name__}: {exc}")
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
