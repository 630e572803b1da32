"""Where the agents keep their own files for a project on this machine: Claude Code's config folder and its
per-project folder (auto memory), Codex's home and its memories folder, OpenCode's config folder, claude-mem's
database."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

CLAUDE_PROJECT_NAME_MAX = 200  # Claude Code cuts a longer folder name and adds a hash of the whole path
CLAUDE_MEM_DB = Path(".claude-mem") / "claude-mem.db"


def claude_config_dir(env: Mapping[str, str], home: Path) -> Path:
    """Claude Code's folder: $CLAUDE_CONFIG_DIR, else ~/.claude."""
    configured = env.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else home / ".claude"


def codex_home(env: Mapping[str, str], home: Path) -> Path:
    """Codex's folder: $CODEX_HOME, else ~/.codex."""
    configured = env.get("CODEX_HOME")
    return Path(configured).expanduser() if configured else home / ".codex"


def opencode_config_dir(env: Mapping[str, str], home: Path) -> Path:
    """OpenCode's user config folder: $XDG_CONFIG_HOME/opencode, else ~/.config/opencode."""
    configured = env.get("XDG_CONFIG_HOME")
    return (Path(configured).expanduser() if configured else home / ".config") / "opencode"


def java_string_hash(text: str) -> int:
    """Claude Code's string hash (31 * h + code unit, in 32-bit signed arithmetic, over UTF-16 code units)."""
    value = 0
    data = text.encode("utf-16-le")
    for index in range(0, len(data), 2):
        value = (value * 31 + int.from_bytes(data[index : index + 2], "little")) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def base36(number: int) -> str:
    """A non-negative number in base 36, as JavaScript's `toString(36)` writes it."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    text = ""
    while True:
        number, rest = divmod(number, 36)
        text = digits[rest] + text
        if number == 0:
            return text


def claude_folder_name(folder: str) -> str:
    """The name Claude Code gives a project's folder under projects/: every character that is not an ASCII letter
    or digit becomes `-` (`/home/u/my.app` -> `-home-u-my-app`); a name over 200 characters is cut to 200 and `-`
    plus a hash of the whole path added."""
    name = re.sub(r"[^a-zA-Z0-9]", "-", folder)
    if len(name) <= CLAUDE_PROJECT_NAME_MAX:
        return name
    return f"{name[:CLAUDE_PROJECT_NAME_MAX]}-{base36(abs(java_string_hash(folder)))}"


def project_roots(canonical_root: str, worktree_root: str) -> tuple[str, ...]:
    """The folders a project is known by: its main working tree (the parent of a shared `.git`), then the working
    tree in use."""
    main = str(Path(canonical_root).parent) if Path(canonical_root).name == ".git" else canonical_root
    return tuple(dict.fromkeys((main, worktree_root)))


def claude_project_dir(config_dir: Path, folder: str) -> Path | None:
    """Claude Code's folder for the project at `folder`, if it has one (a long name whose hash another Claude Code
    version computed differently is found by its first 200 characters)."""
    projects = config_dir / "projects"
    name = claude_folder_name(folder)
    if (projects / name).is_dir():
        return projects / name
    if len(name) <= CLAUDE_PROJECT_NAME_MAX or not projects.is_dir():
        return None
    prefix = name[: CLAUDE_PROJECT_NAME_MAX + 1]
    matches = sorted(p for p in projects.iterdir() if p.is_dir() and p.name.startswith(prefix))
    return matches[0] if matches else None


def claude_memory_dir(config_dir: Path, roots: tuple[str, ...]) -> Path | None:
    """Claude Code's auto memory folder for a project: `autoMemoryDirectory` of the user's settings.json when set,
    else `projects/<project>/memory` of the first of its folders that has one."""
    try:
        settings = json.loads((config_dir / "settings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        settings = {}
    configured = settings.get("autoMemoryDirectory") if isinstance(settings, dict) else None
    if isinstance(configured, str) and configured.strip():
        folder = Path(configured).expanduser()
        return folder if folder.is_dir() else None
    for root in roots:
        project_dir = claude_project_dir(config_dir, root)
        if project_dir is not None and (project_dir / "memory").is_dir():
            return project_dir / "memory"
    return None


def codex_memories_dir(codex: Path) -> Path:
    """Codex's memories folder (MEMORY.md, memory_summary.md, rollout summaries)."""
    return codex / "memories"
