"""Where the Claude Code plugin installs orcmem for itself, and how that install stands (for `orcmem doctor`).

The plugin's `bin/orcmem-install` writes these files into Claude Code's data folder for the plugin
(`$CLAUDE_PLUGIN_DATA`: `~/.claude/plugins/data/orcmem-orcmem`); the names below are its names.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PLUGIN_DATA_NAME = "orcmem-orcmem"  # Claude Code's folder name for the plugin orcmem@orcmem
LOCK = "install.lock"
LOG = "install.log"
FAILED = "install-failed"
READY = "orcmem-ready"
RETRY_AFTER_S = 600


@dataclass(frozen=True)
class PluginInstall:
    """The plugin's private install: ok, installing or failed, in words, with its log."""

    state: str
    detail: str
    log: Path


def plugin_data_dir(environ: Mapping[str, str]) -> Path:
    """The plugin's data folder: the one Claude Code gave this process, else where Claude Code puts it."""
    given = environ.get("CLAUDE_PLUGIN_DATA")
    if given:
        return Path(given)
    plugins = environ.get("CLAUDE_CODE_PLUGIN_CACHE_DIR")
    if plugins:
        return Path(plugins).expanduser() / "data" / PLUGIN_DATA_NAME
    config = environ.get("CLAUDE_CONFIG_DIR") or str(Path(environ.get("HOME") or Path.home()) / ".claude")
    return Path(config).expanduser() / "plugins" / "data" / PLUGIN_DATA_NAME


def plugin_install(environ: Mapping[str, str] = os.environ) -> PluginInstall | None:
    """How the plugin's install stands; None when the plugin never started one on this machine."""
    data = plugin_data_dir(environ)
    log = data / LOG
    ready = sorted(data.glob(f"venv-*/{READY}"))
    if _installing(data / LOCK):
        started = time.strftime("%H:%M", time.localtime((data / LOCK).stat().st_mtime))
        return PluginInstall("installing", f"installing in the background since {started} (log: {log})", log)
    failed = _failed_at(data)
    if failed is not None:
        at = time.strftime("%Y-%m-%d %H:%M", time.localtime(failed))
        return PluginInstall("failed", f"the install failed at {at} (log: {log})", log)
    if ready:
        return PluginInstall("ok", f"installed in {ready[-1].parent}", log)
    return PluginInstall("failed", f"no finished install in {data} (log: {log})", log) if log.exists() else None


def _installing(lock: Path) -> bool:
    """Whether an installer holds the lock (a lock whose process is gone is the installer's to clear)."""
    try:
        pid = int((lock / "pid").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return lock.is_dir()  # being taken: the pid follows
    except (OSError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _failed_at(data: Path) -> float | None:
    try:
        return float((data / FAILED).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None
