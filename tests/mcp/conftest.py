"""Fixtures for the MCP tests: tools in a chosen mode, and an elicitation callback that answers as told."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """The in-memory client runs on asyncio."""
    return "asyncio"
