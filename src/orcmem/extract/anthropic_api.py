"""The Anthropic Messages API as a text generator, for a user who gave orcmem an API key."""

from __future__ import annotations

import importlib.util
from typing import Any

from orcmem.extract.constants import API_MAX_TOKENS
from orcmem.extract.generator import GeneratorResult
from orcmem.extract.usage_report import api_rate_limit, api_usage
from orcmem.models.constants import DEFAULT_CLAUDE_MODEL, GENERATOR_TIMEOUT_S
from orcmem.models.data_shapes import JsonObject
from orcmem.models.usage import RateLimit


def anthropic_available() -> bool:
    """Whether the `anthropic` package is installed (checked without importing it)."""
    try:
        return importlib.util.find_spec("anthropic") is not None
    except (ImportError, ValueError):
        return False


def _text_of(message: Any) -> str:
    parts = []
    for block in getattr(message, "content", None) or []:
        if getattr(block, "type", None) == "text" and isinstance(getattr(block, "text", None), str):
            parts.append(block.text)
    return "".join(parts)


def _describe(exc: Exception) -> str:
    import anthropic

    if isinstance(exc, anthropic.APITimeoutError):
        return "the Anthropic API did not answer in time"
    if isinstance(exc, anthropic.APIStatusError):
        return f"the Anthropic API refused the request (HTTP {exc.status_code}): {exc.message}"
    if isinstance(exc, anthropic.APIConnectionError):
        return f"the Anthropic API could not be reached: {exc}"
    if isinstance(exc, anthropic.APIResponseValidationError):
        return f"the Anthropic API answered with something unexpected: {exc}"
    return f"the Anthropic API call failed: {type(exc).__name__}: {exc}"


def _refusal(exc: Exception) -> RateLimit | None:
    """A 429's rate limit (its retry-after and headers), or None for any other failure."""
    import anthropic

    if isinstance(exc, anthropic.APIStatusError) and exc.status_code == 429:
        return api_rate_limit(exc.response.headers, 429) or RateLimit(limited=True)
    return None


class AnthropicApiGenerator:
    """One Messages API request per prompt: a single user message, no retries, bounded by `timeout`; its usage and
    `anthropic-ratelimit-*` headers are read back, and a 429 says how long to wait."""

    provider = "apikey"

    def __init__(
        self,
        api_key: str,
        model: str = DEFAULT_CLAUDE_MODEL,
        timeout: float = GENERATOR_TIMEOUT_S,
        base_url: str | None = None,
        max_tokens: int = API_MAX_TOKENS,
    ) -> None:
        """Use `api_key` and `model`; `base_url` points the client elsewhere (a local server in tests)."""
        self.api_key = api_key
        self.model: str | None = model or DEFAULT_CLAUDE_MODEL
        self.timeout = timeout
        self.base_url = base_url
        self.max_tokens = max_tokens

    def __repr__(self) -> str:
        return f"AnthropicApiGenerator(model={self.model!r}, timeout={self.timeout!r}, base_url={self.base_url!r})"

    def generate(self, prompt: str, schema: JsonObject | None = None) -> GeneratorResult:
        """Send the prompt once; never raises. (the prompt itself asks for the JSON: `schema` is not enforced here)."""
        try:
            import anthropic
        except ImportError:
            return GeneratorResult.failure(
                "the anthropic package is not installed (pip install anthropic, in orcmem's environment)"
            )
        try:
            with anthropic.Anthropic(
                api_key=self.api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0
            ) as client:
                raw = client.messages.with_raw_response.create(
                    model=self.model or DEFAULT_CLAUDE_MODEL,
                    max_tokens=self.max_tokens,
                    messages=[{"role": "user", "content": prompt}],
                )
                limit = api_rate_limit(raw.headers, raw.status_code)
                message = raw.parse()
            usage = api_usage(message, self.model)
            text = _text_of(message)
        except Exception as exc:  # never raise: the job records why instead
            return GeneratorResult.failure(_describe(exc), rate_limit=_refusal(exc))
        if not text.strip():
            return GeneratorResult.failure("the Anthropic API answered with no text", usage, limit)
        return GeneratorResult.answer(text, usage, limit)
