"""Extraction: a finished run's ledger events become a digest, a prompt, one model call, and parsed memories.

Domain layer: it imports only orcmem.models, orcmem.errors, orcmem.redact and the standard library (plus
`anthropic`, lazily, inside the API generator). Importing it reads no environment and starts nothing.
"""

from orcmem.lazy import lazy_getattr

TYPE_CHECKING = False  # the hooks import parts of this package; generators load only when a job runs
if TYPE_CHECKING:
    from orcmem.extract.anthropic_api import AnthropicApiGenerator, anthropic_available
    from orcmem.extract.claude_cli import ClaudeCliGenerator, claude_argv, read_claude_output
    from orcmem.extract.codex_cli import CodexCliGenerator, codex_argv, pick_codex_model
    from orcmem.extract.digest import (
        Digest,
        build_digest,
        is_empty,
        render_digest,
    )
    from orcmem.extract.generator import Generator, GeneratorResult
    from orcmem.extract.parse import ExtractedMemory, ExtractedSummary, Extraction, parse_extraction
    from orcmem.extract.prompt import OUTPUT_SCHEMA, SYSTEM, build_prompt, output_schema, render_earlier
    from orcmem.extract.resolve import GeneratorChoice, describe_extraction, resolve_generator
    from orcmem.extract.runner import ProcessOutcome, run_process

__all__ = [
    "OUTPUT_SCHEMA",
    "SYSTEM",
    "AnthropicApiGenerator",
    "ClaudeCliGenerator",
    "CodexCliGenerator",
    "Digest",
    "ExtractedMemory",
    "ExtractedSummary",
    "Extraction",
    "Generator",
    "GeneratorChoice",
    "GeneratorResult",
    "ProcessOutcome",
    "anthropic_available",
    "build_digest",
    "build_prompt",
    "claude_argv",
    "codex_argv",
    "describe_extraction",
    "is_empty",
    "output_schema",
    "parse_extraction",
    "pick_codex_model",
    "read_claude_output",
    "render_digest",
    "render_earlier",
    "resolve_generator",
    "run_process",
]

__getattr__ = lazy_getattr(
    __name__,
    {
        "AnthropicApiGenerator": "orcmem.extract.anthropic_api",
        "anthropic_available": "orcmem.extract.anthropic_api",
        "ClaudeCliGenerator": "orcmem.extract.claude_cli",
        "claude_argv": "orcmem.extract.claude_cli",
        "read_claude_output": "orcmem.extract.claude_cli",
        "CodexCliGenerator": "orcmem.extract.codex_cli",
        "codex_argv": "orcmem.extract.codex_cli",
        "pick_codex_model": "orcmem.extract.codex_cli",
        "Digest": "orcmem.extract.digest",
        "build_digest": "orcmem.extract.digest",
        "is_empty": "orcmem.extract.digest",
        "render_digest": "orcmem.extract.digest",
        "Generator": "orcmem.extract.generator",
        "GeneratorResult": "orcmem.extract.generator",
        "ExtractedMemory": "orcmem.extract.parse",
        "ExtractedSummary": "orcmem.extract.parse",
        "Extraction": "orcmem.extract.parse",
        "parse_extraction": "orcmem.extract.parse",
        "OUTPUT_SCHEMA": "orcmem.extract.prompt",
        "SYSTEM": "orcmem.extract.prompt",
        "build_prompt": "orcmem.extract.prompt",
        "output_schema": "orcmem.extract.prompt",
        "render_earlier": "orcmem.extract.prompt",
        "GeneratorChoice": "orcmem.extract.resolve",
        "describe_extraction": "orcmem.extract.resolve",
        "resolve_generator": "orcmem.extract.resolve",
        "ProcessOutcome": "orcmem.extract.runner",
        "run_process": "orcmem.extract.runner",
    },
)
