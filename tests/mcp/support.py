"""What the MCP tests import: a scripted elicitation callback."""

from __future__ import annotations

import mcp_types as types


class Elicitor:
    """A client's elicitation callback: records each question and answers with the next scripted reply."""

    def __init__(self, *replies: tuple[str, str | None]) -> None:
        self.replies = list(replies)  # (action, decision label or None)
        self.questions: list[str] = []
        self.schemas: list[dict[str, object]] = []

    async def __call__(self, context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.questions.append(params.message)
        self.schemas.append(params.requested_schema)  # type: ignore[union-attr]
        action, label = self.replies.pop(0) if self.replies else ("decline", None)
        content = {"decision": label} if label is not None else None
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]


def answer(label: str) -> tuple[str, str]:
    """An accepted elicitation choosing `label`."""
    return ("accept", label)
