"""Who the person behind a profile is: the id every memory they write, or an agent writes for them, carries.

Found per project, as git finds the author of a commit: ORCMEM_PERSON, else git's `user.email` for the project
(its own config, else the global one), else user@host. A team binding (`orcmem team connect`) fixes the id
instead (service.settings.person says which applies).
"""

from __future__ import annotations

import getpass
import os
import socket
from pathlib import Path

from orcmem.host.git_process import run_git

PERSON_ENV = "ORCMEM_PERSON"
GIT_TIMEOUT_S = 3.0
ID_MAX_CHARS = 200


def person_from_environment(root: str | None = None) -> str:
    """ORCMEM_PERSON, else git's user.email for the project at `root` (None: the current folder), else user@host."""
    found = explicit_person(root)
    return found[0] if found is not None else machine_person()


def explicit_person(root: str | None) -> tuple[str, str] | None:
    """(id, where it came from) from ORCMEM_PERSON or git's user.email for the project at `root`; None when
    neither names one."""
    explicit = os.environ.get(PERSON_ENV, "").strip()
    if explicit:
        return explicit[:ID_MAX_CHARS], f"{PERSON_ENV} is set"

    folder = Path(root) if root is not None and os.path.isdir(root) else None
    found = run_git(folder, "config", "--get", "user.email", timeout=GIT_TIMEOUT_S)
    email = found.decode("utf-8", errors="replace").strip() if found is not None else ""
    if email and not any(ch.isspace() for ch in email):
        return email[:ID_MAX_CHARS], "git's user.email" + (f" for {root}" if folder is not None else "")
    return None


def machine_person() -> str:
    """user@host: the id of a person git knows no email for."""
    return f"{getpass.getuser()}@{socket.gethostname()}"[:ID_MAX_CHARS]
