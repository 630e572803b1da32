"""The extraction prompt (the seed's own text) and the JSON schema Codex is asked to follow."""

from __future__ import annotations

import copy
import json
from typing import Any

from orcmem.extract.constants import EXTRACTION_TYPES

SYSTEM = """You distill a finished coding-agent run into durable memory for future runs on the same project.
Return ONLY minified JSON, no prose, no code fences, matching exactly:
{"summary":{"request":string,"workDone":string,"outcome":string,"openItems":string[]},
 "memories":[{"type":"decision|spec|lesson|preference|convention|command|env_quirk|ownership","title":string,"body":string,"topicKey":string|null,"files":string[],"confidence":number}]}
Rules:
- Record only what helps a future run: failed approaches with the cause, decisions with rationale, commands that worked, environment quirks, conventions, durable preferences. Skip anything obvious from reading the code.
- title <= 80 chars, imperative. body <= 400 chars, concrete.
- topicKey groups memories that supersede each other, like "test/pool" or "architecture/auth"; null if none.
- confidence 0.3-0.9: higher when the run proved it, lower when inferred.
- 0 to 6 memories. Prefer none over noise."""  # noqa: E501


def _strings() -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}}


OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["summary", "memories"],
    "properties": {
        "summary": {
            "type": "object",
            "additionalProperties": False,
            "required": ["request", "workDone", "outcome", "openItems"],
            "properties": {
                "request": {"type": "string"},
                "workDone": {"type": "string"},
                "outcome": {"type": "string"},
                "openItems": _strings(),
            },
        },
        "memories": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["type", "title", "body", "topicKey", "files", "confidence"],
                "properties": {
                    "type": {"type": "string", "enum": list(EXTRACTION_TYPES)},
                    "title": {"type": "string"},
                    "body": {"type": "string"},
                    "topicKey": {"type": ["string", "null"]},
                    "files": _strings(),
                    "confidence": {"type": "number"},
                },
            },
        },
    },
}


def output_schema() -> dict[str, Any]:
    """A fresh copy of the output JSON schema, safe to change."""
    return copy.deepcopy(OUTPUT_SCHEMA)


def output_schema_json() -> str:
    """The output JSON schema as the text written to Codex's schema file."""
    return json.dumps(OUTPUT_SCHEMA, indent=2)


def build_prompt(title: str, spec: str | None, digest_text: str) -> str:
    """The whole prompt: the instructions, the task's title, its spec (an empty line when none) and the digest."""
    lines = [
        SYSTEM,
        "",
        f"Project task: {title}",
        f"Spec: {spec}" if spec else "",
        "",
        "Run to distill:",
        digest_text,
    ]
    return "\n".join(lines)
