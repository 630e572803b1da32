"""Who the person behind a profile is: the id every memory they write, or an agent writes for them, carries."""

from __future__ import annotations

import getpass
import os
import socket

PERSON_ENV = "ORCMEM_PERSON"
GIT_TIMEOUT_S = 3.0


def person_from_environment() -> str:
    """ORCMEM_PERSON, else git's user.email, else user@host: a stable id for this person on this machine."""
    explicit = os.environ.get(PERSON_ENV, "").strip()
    if explicit:
        return explicit[:200]
    from orcmem.host.git_process import run_git

    found = run_git(None, "config", "--get", "user.email", timeout=GIT_TIMEOUT_S)
    email = found.decode("utf-8", errors="replace").strip() if found is not None else ""
    if email:
        return email[:200]
    return f"{getpass.getuser()}@{socket.gethostname()}"[:200]
