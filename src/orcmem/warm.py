"""The warm recall socket: where it is, and the prompt hook's side of it.

The session's `orcmem mcp` has its model loaded, so it recalls by meaning as well as by words in milliseconds. It
answers on a Unix socket in the profile's `run/` folder (0700, the socket 0600): the hook finds it by name, asks
with a short timeout, and falls back to its own word path when no server answers. Kept to os, socket and json:
the hook imports this on every prompt.
"""

from __future__ import annotations

import json
import os
import socket
import time

RUN_DIRNAME = "run"  # in the profile: the socket and the lock that says which server holds it
SOCKET_NAME = "recall.sock"
LOCK_NAME = "recall.lock"
# sun_path holds 108 bytes on Linux and 104 on macOS; a longer profile path puts the socket in a short folder of
# this user's under /tmp instead, named by the profile (/tmp, not $TMPDIR: agents start servers with a minimal env).
SOCKET_PATH_MAX_BYTES = 100
SHORT_RUN_ROOT = "/tmp"
WARM_TIMEOUT_S = 1.0  # connect, ask and read the answer; the server answers in milliseconds once its model loaded
ANSWER_MAX_BYTES = 1 << 20
WARM_PATH = "warm"  # how an answer names the path that made it (the log and `orcmem recall --explain` show it)
WARM_WORDS_PATH = "warm, words only (model not loaded yet)"


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


def ask(home: str, request: dict[str, object], timeout: float = WARM_TIMEOUT_S) -> tuple[dict[str, object] | None, str]:
    """The warm server's answer to `request`, or (None, why not) when none answered in time."""
    path = socket_path(home)
    if not private_folder(os.path.dirname(path)):
        return None, "no warm server"
    deadline = time.monotonic() + timeout
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.settimeout(timeout)
        try:
            client.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            return None, "no warm server"
        client.sendall(json.dumps(request).encode("utf-8", "replace") + b"\n")
        client.shutdown(socket.SHUT_WR)
        chunks: list[bytes] = []
        size = 0
        while (left := deadline - time.monotonic()) > 0:
            client.settimeout(left)
            chunk = client.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > ANSWER_MAX_BYTES:
                return None, "warm server answer too large"
        else:
            return None, "warm server timed out"
        answer = json.loads(b"".join(chunks))
        if not isinstance(answer, dict) or not isinstance(answer.get("text"), str):
            return None, "warm server answered badly"
        return answer, str(answer.get("path") or "warm")
    except TimeoutError:
        return None, "warm server timed out"
    except (OSError, ValueError) as exc:
        return None, f"warm server failed: {type(exc).__name__}"
    finally:
        client.close()
