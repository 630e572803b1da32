"""Test doubles: the hashing fake with a tiny synonym table for meaning, a real `claude -p` envelope, a stand-in
`claude` on PATH, and a loopback HTTP server."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.embedders import HashingEmbedder

SYNONYMS = {"automobile": "car", "vehicle": "car", "sedan": "car", "fix": "repair", "mend": "repair"}


class SynonymEmbedder(HashingEmbedder):
    """FAKE: maps a few synonyms onto one word before hashing, so fusion can be tested without the real model."""

    def __init__(self) -> None:
        super().__init__(model_id="test-synonym-hash")
        self.queries = 0

    def embed_documents(self, texts):
        return super().embed_documents([self._canonical(text) for text in texts])

    def embed_query(self, text: str, timeout: float | None = None):
        self.queries += 1
        return super().embed_query(text, timeout)

    @staticmethod
    def _canonical(text: str) -> str:
        return re.sub(r"\w+", lambda m: SYNONYMS.get(m.group(0).lower(), m.group(0)), text)


ENVELOPES = Path(__file__).parent / "fixtures" / "envelopes" / "claude_print_result_envelopes.jsonl"


def claude_success_envelope() -> str:
    """The real `claude -p --output-format json` success envelope from the fixtures, as a JSON line."""
    envelope = json.loads(ENVELOPES.read_text().splitlines()[-1])
    assert envelope["is_error"] is False
    return json.dumps(envelope)


# What the real CLI (2.1.x) prints for `claude auth status --json`: exit 0 signed in, 1 signed out.
CLAUDE_AUTH_STATUS = """
import json as _json, os as _os, sys as _sys
if _sys.argv[1:3] == ["auth", "status"]:
    _signed_in = "STANDIN_SIGNED_OUT" not in _os.environ
    _method = "claude.ai" if _signed_in else "none"
    print(_json.dumps({"loggedIn": _signed_in, "authMethod": _method, "apiProvider": "firstParty"}, indent=2))
    _sys.exit(0 if _signed_in else 1)
"""


def standin_claude_env(bin_dir: Path, template: str, answer: object) -> dict[str, str]:
    """Write `template` as an executable `claude` in `bin_dir`; the process environment with `bin_dir` first on PATH.

    The template is formatted with `python` (this interpreter), `envelope` (the real success envelope) and `answer`
    (the JSON of `answer`).
    """
    bin_dir.mkdir(parents=True, exist_ok=True)
    claude = bin_dir / "claude"
    script = template.format(python=sys.executable, envelope=claude_success_envelope(), answer=json.dumps(answer))
    shebang, _, body = script.partition("\n")
    script = f"{shebang}\n{CLAUDE_AUTH_STATUS}\n{body}"
    claude.write_text(script, encoding="utf-8")
    claude.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


@contextlib.contextmanager
def loopback_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A threaded HTTP server on 127.0.0.1 at a free port for the block; yields its base address."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
