"""What an installed agent CLI says about itself: whether someone is signed in, and which models it offers.

Each answer costs a process start (a few hundred milliseconds for `claude`), so it is cached in a small JSON file
in orcmem's folder: a "signed in" for an hour, a "not signed in" for a minute (the person may log in right after
reading the message), the model list for a day. A CLI that does not answer in time, or too old to know the
command, gives "unknown", and distillation goes ahead as before.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from orcmem.extract.runner import ProcessOutcome, run_process

PROBE_TIMEOUT_S = 5.0
SIGNED_IN_TTL_S = 3600.0
SIGNED_OUT_TTL_S = 60.0
MODELS_TTL_S = 86_400.0
CODEX_KEY_VARIABLES = ("OPENAI_API_KEY", "CODEX_API_KEY")
CLAUDE_KEY_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
)
LOGIN_HINTS = {
    "claude": "run `claude` and sign in with /login (or `claude auth login`)",
    "codex": "run `codex login`",
}


def codex_config(env: Mapping[str, str]) -> dict[str, object]:
    """Codex's config.toml (`$CODEX_HOME`, else `~/.codex`) as a table; {} when missing or unreadable."""
    import tomllib

    home = Path(env.get("CODEX_HOME") or Path(env.get("HOME") or Path.home()) / ".codex")
    try:
        return tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


class AgentCli:
    """Asks `claude` and `codex` about sign-in and models, with answers cached in `cache_file` (None: no cache)."""

    def __init__(self, cache_file: Path | None, env: Mapping[str, str] | None = None) -> None:
        """Cache in `cache_file`; run the CLIs with `env` (default: this process's environment)."""
        self.cache_file = cache_file
        self.env = dict(os.environ if env is None else env)

    def signed_in(self, agent: str, command: Sequence[str]) -> bool | None:
        """True or False when the CLI says whether someone is signed in; None when it cannot tell."""
        key = f"{agent}:signed_in:{' '.join(command)}"
        cached = self._cached(key)
        if cached is not None:
            return bool(cached)
        if agent == "claude":
            answer = self._claude_signed_in(command)
        elif agent == "codex":
            answer = self._codex_signed_in(command)
        else:
            return None
        if answer is not None:
            self._store(key, answer, SIGNED_IN_TTL_S if answer else SIGNED_OUT_TTL_S)
        return answer

    def codex_models(self, command: Sequence[str]) -> list[str]:
        """The models Codex lists for people (`codex debug models`), in its order; [] when it cannot tell."""
        key = f"codex:models:{' '.join(command)}"
        cached = self._cached(key)
        if isinstance(cached, list):
            return [str(model) for model in cached]
        outcome = self._run([*command, "debug", "models"])
        if outcome is None or outcome.returncode != 0:
            return []
        try:
            catalog = json.loads(outcome.stdout)
        except ValueError:
            return []
        entries = catalog.get("models") if isinstance(catalog, dict) else catalog
        models = [
            entry["slug"]
            for entry in entries or []
            if isinstance(entry, dict)
            and isinstance(entry.get("slug"), str)
            and entry.get("visibility", "list") == "list"
            and entry.get("supported_in_api", True) is not False
        ]
        self._store(key, models, MODELS_TTL_S)
        return models

    # --- the CLIs ----------------------------------------------------------------------------------------------
    def _claude_signed_in(self, command: Sequence[str]) -> bool | None:
        if any(self.env.get(name) for name in CLAUDE_KEY_VARIABLES):
            return None  # a key, a token or a cloud provider from the environment: nothing to log in to
        outcome = self._run([*command, "auth", "status", "--json"])
        if outcome is None:
            return None
        try:
            status = json.loads(outcome.stdout)
        except ValueError:
            return None  # a version without `auth status` prints help or an error
        logged_in = status.get("loggedIn") if isinstance(status, dict) else None
        return logged_in if isinstance(logged_in, bool) else None

    def _codex_signed_in(self, command: Sequence[str]) -> bool | None:
        if any(self.env.get(name) for name in CODEX_KEY_VARIABLES) or self._codex_custom_provider():
            return None  # Codex runs on a key from the environment or another provider, which `login` does not know
        outcome = self._run([*command, "login", "status"])
        if outcome is None:
            return None
        # 0.171 exits 0 with "Logged in using ChatGPT" or "API key configured", 1 with "Not logged in".
        said = (outcome.stdout + outcome.stderr).lower()
        if "not logged in" in said:
            return False
        return True if outcome.returncode == 0 else None

    def _codex_custom_provider(self) -> bool:
        """Whether Codex's config.toml picks a model provider other than OpenAI's (its own sign-in, or none)."""
        provider = codex_config(self.env).get("model_provider")
        return isinstance(provider, str) and provider != "openai"

    def _run(self, argv: list[str]) -> ProcessOutcome | None:
        """What the CLI said, or None when it did not start or finish in time."""
        with tempfile.TemporaryDirectory(prefix="orcmem-probe-") as workdir:
            outcome = run_process(argv, "", cwd=workdir, env={**self.env, "NO_COLOR": "1"}, timeout=PROBE_TIMEOUT_S)
        if outcome.start_error is not None or outcome.timed_out:
            return None
        return outcome

    # --- cache -------------------------------------------------------------------------------------------------
    def _load(self) -> dict[str, object]:
        if self.cache_file is None:
            return {}
        try:
            data = json.loads(self.cache_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _cached(self, key: str) -> object | None:
        entry = self._load().get(key)
        if not isinstance(entry, dict) or not isinstance(entry.get("until"), (int, float)):
            return None
        return entry.get("value") if entry["until"] > time.time() else None

    def _store(self, key: str, value: object, ttl: float) -> None:
        if self.cache_file is None:
            return
        data = self._load()
        data[key] = {"value": value, "until": time.time() + ttl}
        try:
            self.cache_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            temporary = self.cache_file.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps(data), encoding="utf-8")
            os.chmod(temporary, 0o600)
            os.replace(temporary, self.cache_file)
        except OSError:
            pass  # no cache: the next call asks the CLI again
