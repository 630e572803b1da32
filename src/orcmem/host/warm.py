"""The warm recall socket: where it is, and the prompt hook's side of it.

The session's `orcmem mcp` has its model loaded, so it recalls by meaning as well as by words in milliseconds. It
answers on a Unix socket in the profile's `run/` folder (0700, the socket 0600): the hook finds it by name, asks
with a short timeout, and falls back to its own word path when no server answers. Kept to os, time and the C
socket module: the hook imports this on every prompt.
"""

from __future__ import annotations

import os
import time

try:  # the C module itself: `socket` adds enum and selectors, milliseconds on every prompt
    import _socket
except ImportError:  # pragma: no cover - every CPython has it
    import socket as _socket  # type: ignore[no-redef]

RUN_DIRNAME = "run"  # in the profile: the socket and the lock that says which server holds it
SOCKET_NAME = "recall.sock"
LOCK_NAME = "recall.lock"
# sun_path holds 108 bytes on Linux and 104 on macOS; a longer profile path puts the socket in a short folder of
# this user's under /tmp instead, named by the profile (/tmp, not $TMPDIR: agents start servers with a minimal env).
SOCKET_PATH_MAX_BYTES = 100
SHORT_RUN_ROOT = "/tmp"
WARM_TIMEOUT_S = 1.0  # connect, ask and read the answer; the server answers in milliseconds once its model loaded
# `orcmem search` waits longer: the server may give the query's vector its whole limit (0.5 s) on a busy machine,
# and the command's own path (loading the model) takes seconds.
SEARCH_TIMEOUT_S = 3.0
ANSWER_MAX_BYTES = 1 << 20
WARM_PATH = "warm"  # how an answer names the path that made it (the log and `orcmem recall --explain` show it)
WARM_WORDS_PATH = "warm, words only (model not loaded yet)"
# A request is a mode line, then the JSON: `hook` gets back `ok` and the hook's own output (the agent's payload is
# passed on as it came, so the hook parses nothing), `json` gets back the answer as a JSON object.
HOOK_MODE = b"hook\n"
JSON_MODE = b"json\n"
# `search` (orcmem search) gets back `ok`, its words-only notice (or an empty line), then what the command prints.
SEARCH_MODE = b"search\n"
TOOL_MODE = b"tool\n"  # the tool hook's payload: back `ok` and its output, or `pass` (not a call memory answers)
PASS = b"pass"
OK = b"ok"


def run_dir(home: str) -> str:
    """The folder holding the socket (and the lock) of the profile at `home`."""
    folder = os.path.join(home, RUN_DIRNAME)
    if len(os.path.join(folder, SOCKET_NAME).encode()) <= SOCKET_PATH_MAX_BYTES:
        return folder
    import hashlib

    digest = hashlib.sha256(os.path.abspath(home).encode("utf-8", "replace")).hexdigest()[:16]
    return os.path.join(short_run_root(), digest)


def short_run_root() -> str:
    """This user's folder for the sockets of profiles whose own path is too long for one."""
    return os.path.join(SHORT_RUN_ROOT, f"orcmem-{os.getuid()}")


def socket_path(home: str) -> str:
    """Where the profile's warm server listens."""
    return os.path.join(run_dir(home), SOCKET_NAME)


def private_folder(folder: str) -> bool:
    """Whether `folder` (and, for a short socket path, this user's folder in /tmp) is a real folder of this user's
    that no one else can enter."""
    paths = [folder]
    if folder.startswith(short_run_root() + os.sep):
        paths.append(short_run_root())
    for path in paths:
        try:
            info = os.lstat(path)
        except OSError:
            return False
        if not (info.st_mode & 0o170000 == 0o040000 and info.st_uid == os.getuid() and info.st_mode & 0o077 == 0):
            return False
    return True


def _exchange(home: str, data: bytes, timeout: float) -> tuple[bytes | None, str]:
    """Send `data` to the warm server and read its whole answer, or (None, why not) when none answered in time."""
    path = socket_path(home)
    if not private_folder(os.path.dirname(path)):
        return None, "no warm server"
    deadline = time.monotonic() + timeout
    client = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        client.settimeout(timeout)
        try:
            client.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            return None, "no warm server"
        client.sendall(data)
        client.shutdown(_socket.SHUT_WR)
        chunks: list[bytes] = []
        size = 0
        while (left := deadline - time.monotonic()) > 0:
            client.settimeout(left)
            chunk = client.recv(65536)
            if not chunk:
                return b"".join(chunks), WARM_PATH
            chunks.append(chunk)
            size += len(chunk)
            if size > ANSWER_MAX_BYTES:
                return None, "warm server answer too large"
        return None, "warm server timed out"
    except TimeoutError:
        return None, "warm server timed out"
    except OSError as exc:
        return None, f"warm server failed: {type(exc).__name__}"
    finally:
        client.close()


def ask_for_hook(
    home: str, payload: bytes, timeout: float = WARM_TIMEOUT_S, mode: bytes = HOOK_MODE
) -> tuple[bytes | None, str]:
    """The prompt hook's (or with TOOL_MODE the tool hook's) output for the agent's `payload` (its stdin, passed
    on unparsed), or (None, why not)."""
    answer, why = _exchange(home, mode + payload, timeout)
    if answer is None:
        return None, why
    status, _, output = answer.partition(b"\n")
    if status != OK:
        return None, "warm server failed: " + status.decode("utf-8", "replace")[:200]
    return output, WARM_PATH


def ask(home: str, request: dict[str, object], timeout: float = WARM_TIMEOUT_S) -> tuple[dict[str, object] | None, str]:
    """The warm server's answer to a recall `request` ({prompt, cwd, session_id}), or (None, why not)."""
    import json

    answer, why = _exchange(home, JSON_MODE + json.dumps(request).encode("utf-8", "replace"), timeout)
    if answer is None:
        return None, why
    try:
        reply = json.loads(answer)
    except ValueError:
        return None, "warm server answered badly"
    if not isinstance(reply, dict) or not isinstance(reply.get("text"), str):
        return None, "warm server answered badly"
    return reply, str(reply.get("path") or WARM_PATH)


def ask_search(
    home: str, request: dict[str, object], timeout: float = SEARCH_TIMEOUT_S
) -> tuple[tuple[str, str] | None, str]:
    """The warm server's answer to an `orcmem search` (`request`: {text, cwd, limit, provenances, explain, json}):
    (what the command prints, its words-only notice or ""); or (None, why not). Without json (and so re): this
    runs before every search's first line of output."""
    answer, why = _exchange(home, SEARCH_MODE + _json({"search": request}).encode(), timeout)
    if answer is None:
        return None, why
    status, _, rest = answer.partition(b"\n")
    if status != OK:  # refused (not a search it answers as the command would) or failed: the command answers
        return None, "warm server refused: " + status.decode("utf-8", "replace")[:200]
    notice, _, output = rest.partition(b"\n")
    return (output.decode("utf-8", "replace"), notice.decode("utf-8", "replace")), WARM_PATH


def _json(value: object) -> str:
    """`value` as JSON: a dict of str keys, str, int, bool, None and lists of them (all a search request holds)."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return (
            '"'
            + "".join(
                _JSON_ESCAPES.get(ch) or (f"\\u{ord(ch):04x}" if ch < " " or "\ud800" <= ch <= "\udfff" else ch)
                for ch in value
            )
            + '"'
        )
    if isinstance(value, list):
        return "[" + ",".join(_json(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_json(str(key))}:{_json(item)}" for key, item in value.items()) + "}"
    raise TypeError(f"no JSON for {type(value).__name__}")


_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
