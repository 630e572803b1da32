"""What every text generator promises: a prompt in, the raw answer or the reason there is none out, never raising."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from orcmem.extract.constants import GENERATOR_ERROR_MAX_CHARS
from orcmem.models.constants import GENERATOR_TIMEOUT_S
from orcmem.models.data_shapes import JsonObject
from orcmem.models.usage import RateLimit, Usage
from orcmem.text.redact import redact


@dataclass(frozen=True, slots=True)
class GeneratorResult:
    """The raw answer (`text`), or None and `error` saying why; `error` is redacted and short.

    `usage` is what the provider reported the call cost (None when it said nothing), `rate_limit` what it said of
    its rate limits (refused, or the headroom left).
    """

    text: str | None
    error: str | None = None
    usage: Usage | None = None
    rate_limit: RateLimit | None = None

    @property
    def ok(self) -> bool:
        """Whether there is an answer."""
        return self.text is not None

    @property
    def rate_limited(self) -> bool:
        """Whether the provider refused the call for its rate limit (the job waits and is tried again)."""
        return self.rate_limit is not None and self.rate_limit.limited

    @classmethod
    def answer(cls, text: str, usage: Usage | None = None, rate_limit: RateLimit | None = None) -> GeneratorResult:
        """A successful answer, with what it cost."""
        return cls(text, None, usage, rate_limit)

    @classmethod
    def failure(cls, error: str, usage: Usage | None = None, rate_limit: RateLimit | None = None) -> GeneratorResult:
        """No answer, with a redacted, bounded reason (and what the call cost, if it reported it)."""
        return cls(None, clip(redact(error)), usage, rate_limit)


class AgentCliGenerator:
    """What a generator that runs an agent's CLI holds: the binary and what launches it, the model, the time limit
    and the environment (None: this process's, read per call)."""

    default_model: str | None = None  # None: the CLI's own choice

    def __init__(
        self,
        binary: str,
        model: str | None = None,
        timeout: float = GENERATOR_TIMEOUT_S,
        env: Mapping[str, str] | None = None,
        launcher: Sequence[str] = (),
    ) -> None:
        """Use `binary` (run by `launcher` when it is a script) and `model` (None: `default_model`)."""
        self.binary = binary
        self.launcher = tuple(launcher)
        self.model = model or self.default_model
        self.timeout = timeout
        self.env = env

    def __repr__(self) -> str:
        return f"{type(self).__name__}(binary={self.binary!r}, model={self.model!r}, timeout={self.timeout!r})"


@runtime_checkable
class Generator(Protocol):
    """One LLM call: prompt in, raw answer out; implementations never raise."""

    provider: str  # "claude", "codex", "gemini", "opencode" or "apikey"
    model: str | None  # None: the provider's own default

    def generate(self, prompt: str, schema: JsonObject | None = None) -> GeneratorResult:
        """Run the prompt once and return the raw answer or why there is none; `schema` is the answer's JSON schema
        where the provider enforces one (Codex), None for the extraction's own."""
        ...


def clip(text: str, limit: int = GENERATOR_ERROR_MAX_CHARS) -> str:
    """`text` collapsed to one trimmed line and cut to `limit` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
