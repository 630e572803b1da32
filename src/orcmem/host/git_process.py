"""The one way orcmem runs git: a repository's own configuration never gets to run a program, git never prompts.

A repository's `.git/config` (or a file it includes) can name programs git runs on its own: `core.fsmonitor` on
any command that looks at the working tree, filter drivers (`filter.<name>.clean` / `.process`, chosen by
`.gitattributes`) when git reads a working-tree file, external diff and textconv programs (`diff.external`,
`diff.<name>.command` / `.textconv`), `gpg.program` for `log.showSignature`, `core.pager`, `core.sshCommand`,
credential helpers, hooks. orcmem runs git by itself (the MCP server's freshness watch every few minutes, `orcmem
check`, team identity, the person id), so every call goes through `run_git`: it overrides that whole class with
`-c` (command-line settings win over every config file), empties every filter, diff and merge driver the
repository defines before a command that reads file content, passes --no-ext-diff --no-textconv to diff and log,
runs without a shell, with stdin from /dev/null (or the bytes given), a time limit, no terminal prompt and no
optional index lock.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

GIT_TIMEOUT_S = 10.0
# Settings that run a program, or could, for the subcommands orcmem uses (diff, log, cat-file, rev-parse, remote,
# config), each switched off; "" empties a list (credential.helper) or names no program.
SAFE_SETTINGS: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),  # no hook runs: /dev/null is no folder
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("core.askPass", ""),
    ("core.sshCommand", ""),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("diff.ignoreSubmodules", "all"),  # a submodule's own config would otherwise be read by a child git
    ("submodule.recurse", "false"),
    ("log.showSignature", "false"),  # it runs gpg.program (or gpg.ssh.program) on every signed commit
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("protocol.allow", "never"),  # orcmem never fetches: no transport, no remote helper
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("uploadpack.packObjectsHook", ""),
)
# Per-driver keys that name a program: `filter.<driver>.clean` and so on. Drivers are named by the repository (its
# config and .gitattributes), so each one it defines is found and emptied before a command that reads file content.
DRIVER_PROGRAM_KEYS: Mapping[str, tuple[str, ...]] = {
    "filter": ("clean", "smudge", "process"),
    "diff": ("command", "textconv"),
    "merge": ("driver",),
}
# Subcommands that would run an external diff or textconv program, and the options that stop them (git treats an
# emptied diff.external as a program to run, so the option, not a setting, is what turns it off).
NO_DIFF_PROGRAMS = ("--no-ext-diff", "--no-textconv")
SHOWS_DIFFS = frozenset({"diff", "log", "show"})
# Subcommands that may read working-tree files, and so apply a filter driver or refresh the index.
READS_WORKTREE = frozenset({"diff", "status", "add", "ls-files", "hash-object", "check-attr", "blame", "grep"})
# Variables that would point git at another repository or a program, inherited from whoever started orcmem.
_DROPPED_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
    "GIT_PAGER",
    "PAGER",
    "GIT_EDITOR",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_PROXY_COMMAND",
    "GIT_EXEC_PATH",
    "GIT_TRACE",
    "GIT_TRACE2",
    "GIT_TRACE2_EVENT",
    "GIT_TRACE2_PERF",
)


def git_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every git call gets: never a prompt, never an optional lock, no inherited redirection."""
    env = {
        key: value
        for key, value in (os.environ if base is None else base).items()
        if key not in _DROPPED_ENV and not key.startswith("GIT_CONFIG_KEY_") and not key.startswith("GIT_CONFIG_VALUE_")
    }
    env.update(
        {
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "",
            "SSH_ASKPASS": "",
            "GCM_INTERACTIVE": "never",
            "GIT_OPTIONAL_LOCKS": "0",  # a read never takes index.lock (the agent's own git would then fail)
            "GIT_NO_LAZY_FETCH": "1",  # a partial clone never fetches a missing object from its remote
            "GIT_PROTOCOL_FROM_USER": "0",
            "LC_ALL": "C",  # output orcmem parses is never translated
        }
    )
    return env


def safe_options(overrides: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """The `-c key=value` options (and --no-pager) that go before every subcommand."""
    options = ["--no-pager"]
    for key, value in (*SAFE_SETTINGS, *overrides):
        options += ["-c", f"{key}={value}"]
    return options


def _run(argv: list[str], cwd: Path | None, stdin: bytes | None, timeout: float) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        argv,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        timeout=timeout,
        env=git_environment(),
        cwd=cwd,
        shell=False,
        check=False,
    )


def driver_overrides(root: Path | None, timeout: float = GIT_TIMEOUT_S) -> tuple[tuple[str, str], ...] | None:
    """An empty program for every filter, diff and merge driver the repository's configuration defines (with
    `process` emptied too, git then applies no filter at all); None when they cannot all be switched off (the
    configuration cannot be listed, or a driver's name holds `=`, which `-c` would split at), so nothing runs."""
    base = ["git", *(["-C", str(root)] if root is not None else []), *safe_options()]
    try:
        listed = _run([*base, "config", "--name-only", "-z", "--list"], None, None, timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    if listed.returncode != 0:
        return None
    drivers: set[tuple[str, str]] = set()
    for name in listed.stdout.decode("utf-8", errors="surrogateescape").split("\x00"):
        section, _, rest = name.partition(".")
        driver, _, _key = rest.rpartition(".")
        if section.lower() in DRIVER_PROGRAM_KEYS and driver:
            if "=" in driver:
                return None
            drivers.add((section.lower(), driver))
    return tuple(
        (f"{section}.{driver}.{key}", "") for section, driver in sorted(drivers) for key in DRIVER_PROGRAM_KEYS[section]
    )


def run_git(root: Path | None, *args: str, stdin: bytes | None = None, timeout: float = GIT_TIMEOUT_S) -> bytes | None:
    """git's output for `args` in `root` (None: the current folder), or None when it failed, timed out or is not
    installed. No program the repository names runs, and git never waits for a terminal."""
    overrides = driver_overrides(root, timeout) if args and args[0] in READS_WORKTREE else ()
    if overrides is None:
        return None  # a driver that cannot be switched off: no answer rather than its program run
    if args and args[0] in SHOWS_DIFFS:
        args = (args[0], *NO_DIFF_PROGRAMS, *args[1:])
    argv = ["git", *(["-C", str(root)] if root is not None else []), *safe_options(overrides), *args]
    try:
        found = _run(argv, None, stdin, timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    return found.stdout if found.returncode == 0 else None
