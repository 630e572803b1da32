"""Memory when the agent acts: which files and command words a tool call touches, and the memories about them.

A tool call (Claude Code's Read, Edit, Write, MultiEdit, NotebookEdit, Bash; Codex's shell and apply_patch; Copilot
CLI's view, edit, create, bash; OpenCode's read, edit, write, bash, apply_patch) names files by path and commands by
their words. The memories that cite one of those files (exactly, relative to the project root), or whose words
hold a command's program and subcommand (commands, lessons and environment quirks only), are framed like recall.
Both the hook's direct path and the warm server use it; kept light like recall.
"""

from __future__ import annotations

import os
import re
import shlex

from orcmem.models.constants import RECALL_CANDIDATES
from orcmem.store.recall import RecallRow, tool_rows

TYPE_CHECKING = False  # importing typing costs the hook milliseconds
if TYPE_CHECKING:
    from orcmem.models.data_shapes import JsonObject

# Claude Code's file tools, then GitHub Copilot CLI's (`view`, `edit`, `create`: the file in `path`), then
# OpenCode's (`read`, `edit`, `write`, `multiedit`: the file in `filePath`).
FILE_TOOLS = frozenset(
    {"Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "view", "edit", "create", "read", "write", "multiedit"}
)
SHELL_TOOLS = frozenset({"Bash", "shell", "local_shell", "exec_command", "bash"})  # Claude's, Codex's, Copilot's
PATCH_TOOLS = frozenset({"apply_patch", "ApplyPatch"})
FILE_KEYS = ("file_path", "notebook_path", "path", "filePath")
COMMAND_TYPES = ("command", "lesson", "env_quirk")  # the kinds of memory a command's words can concern
# Programs that only look around: a lesson that names `ls` or `cd` is about something else, not this call.
PLAIN_PROGRAMS = frozenset(
    "cd ls cat echo pwd head tail grep rg find sed awk wc true false sleep test printf which type less more "
    "sort uniq cut tr xargs env export set source diff stat file mkdir touch cp mv".split()
)
COMMAND_SEGMENTS = 4  # the parts of a chained command (`a && b | c`) looked at
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
_SEPARATORS = re.compile(r"&&|\|\||[;|\n]")
_WORD = re.compile(r"[a-z][a-z0-9_-]{1,40}")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PREFIXES = frozenset({"sudo", "time", "nice", "nohup", "exec", "command", "env", "uv", "npx", "bunx", "pnpm"})


def tool_files(tool_name: str, tool_input: JsonObject) -> list[str]:
    """The paths a file or patch tool call names, as given (absolute or relative to the session's folder)."""
    if tool_name not in FILE_TOOLS | PATCH_TOOLS:
        return []
    paths = [value for key in FILE_KEYS if isinstance(value := tool_input.get(key), str) and value.strip()]
    for value in tool_input.values():  # a patch (Codex's apply_patch) names each file it touches on a line
        if isinstance(value, str) and "*** " in value:
            paths += [found.strip() for found in _PATCH_FILE.findall(value)]
    return paths


def command_text(tool_name: str, tool_input: JsonObject) -> str:
    """The command line a shell tool call runs ("" for any other tool)."""
    if tool_name not in SHELL_TOOLS:
        return ""
    command = tool_input.get("command", tool_input.get("cmd"))
    if isinstance(command, list):  # Codex's exec form: ["bash", "-lc", "npm test"] or the argv itself
        words = [str(word) for word in command]
        if len(words) >= 3 and words[1] in ("-c", "-lc"):
            return words[2]
        return shlex.join(words)
    return command if isinstance(command, str) else ""


def command_terms(command: str) -> list[list[str]]:
    """Each part of a command line as its program and subcommand words (`git rebase -i` -> ["git", "rebase"]);
    plain looking-around programs (ls, cat, grep...) give nothing."""
    found: list[list[str]] = []
    for segment in _SEPARATORS.split(command)[:COMMAND_SEGMENTS]:
        try:
            words = shlex.split(segment)
        except ValueError:
            words = segment.split()
        while words and (_ASSIGNMENT.match(words[0]) or words[0] in _PREFIXES):
            words = words[1:]
        if not words:
            continue
        program = os.path.basename(words[0]).lower()
        if program in PLAIN_PROGRAMS or not _WORD.fullmatch(program):
            continue
        terms = [program]
        for word in words[1:]:
            if word.startswith("-"):
                continue
            if _WORD.fullmatch(word.lower()):
                terms.append(word.lower())
            break  # the first non-option word only: what follows is arguments
        if terms not in found:
            found.append(terms)
    return found


def relative_paths(paths: list[str], cwd: str, worktree_root: str) -> list[str]:
    """The paths under the project's working tree, relative to it (as citations hold them); others dropped."""
    result = []
    root = os.path.realpath(worktree_root)
    for path in paths:
        full = os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))
        real = os.path.realpath(full)
        for candidate in dict.fromkeys((full, real)):
            relative = os.path.relpath(candidate, root)
            if not relative.startswith("..") and relative != "." and relative not in result:
                result.append(relative)
                break
    return result


def tool_call_rows(
    db_path: str, canonical_root: str, worktree_root: str, tool_name: str, tool_input: JsonObject, cwd: str
) -> list[RecallRow] | None:
    """The memories a tool call concerns, files' first; [] for a call touching nothing remembered, None when
    memory is off."""
    files = relative_paths(tool_files(tool_name, tool_input), cwd, worktree_root)
    commands = command_terms(command_text(tool_name, tool_input))
    if not files and not commands:
        return []
    rows = tool_rows(db_path, canonical_root, files, [], (), RECALL_CANDIDATES) if files else []
    if rows is None:
        return None
    for terms in commands:
        if len(rows) >= RECALL_CANDIDATES:
            break
        found = tool_rows(db_path, canonical_root, [], terms, COMMAND_TYPES, RECALL_CANDIDATES - len(rows))
        if found is None:
            return None
        rows += [row for row in found if row.id not in {r.id for r in rows}]
    return rows
