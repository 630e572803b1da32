"""Who the person behind a profile is: the id every memory they write, or an agent writes for them, carries."""

from __future__ import annotations

import getpass
import os
import socket
import subprocess

PERSON_ENV = "ORCMEM_PERSON"
GIT_TIMEOUT_S = 3.0


def person_from_environment() -> str:
    """ORCMEM_PERSON, else git's user.email, else user@host: a stable id for this person on this machine."""
    explicit = os.environ.get(PERSON_ENV, "").strip()
    if explicit:
        return explicit[:200]
    try:
        found = subprocess.run(
            ["git", "config", "--get", "user.email"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
        email = found.stdout.strip()
        if found.returncode == 0 and email:
            return email[:200]
    except (OSError, subprocess.SubprocessError):
        pass  # no git: the login and host name still tell people apart
    return f"{getpass.getuser()}@{socket.gethostname()}"[:200]
