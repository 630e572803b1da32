"""Where the profile lives: the only place that reads ORCMEM_HOME (entry points call it)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from orcmem.models.constants import HOME_ENV_VAR


def home_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$ORCMEM_HOME`, else the platform's user data folder for orcmem."""
    env = os.environ if environ is None else environ
    configured = env.get(HOME_ENV_VAR, "").strip()
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("orcmem", appauthor=False))
