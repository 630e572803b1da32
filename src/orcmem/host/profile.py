"""Where the profile lives: the only place that reads ORCMEM_HOME (entry points call it).

Kept free of pathlib on the string path: the prompt hook calls it on every prompt, and importing pathlib costs
more than the hook's own work.
"""

from __future__ import annotations

import os
import sys

from orcmem.models.env_names import HOME_ENV_VAR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

APP_NAME = "orcmem"


def home_dir_str(environ: Mapping[str, str] | None = None) -> str:
    """`$ORCMEM_HOME`, else the platform's user data folder for orcmem (platformdirs' answer), as a string."""
    env = os.environ if environ is None else environ
    configured = env.get(HOME_ENV_VAR, "").strip()
    if configured:
        return os.path.expanduser(configured)
    # platformdirs' own rules for Linux and macOS, without importing it (it imports pathlib); elsewhere, ask it.
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~/Library/Application Support"), APP_NAME)
    if sys.platform.startswith("linux"):
        base = env.get("XDG_DATA_HOME", "").strip() or os.path.expanduser("~/.local/share")
        return os.path.join(base, APP_NAME)
    import platformdirs

    return platformdirs.user_data_dir(APP_NAME, appauthor=False)


def home_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$ORCMEM_HOME`, else the platform's user data folder for orcmem."""
    from pathlib import Path

    return Path(home_dir_str(environ))
