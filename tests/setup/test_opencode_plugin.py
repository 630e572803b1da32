"""The OpenCode plugin `orcmem setup opencode` writes, run by Node the way OpenCode calls a plugin's hooks: with a
real orcmem it adds the brief, recall and the memories about a command; with an orcmem that fails, prints garbage
or hangs it adds nothing and never throws. Skipped where Node is not installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from orcmem.setup_agents.opencode import plugin_text
from tests.agent_cli_harness import orcmem

# Calls the plugin's hooks as OpenCode 1.18 does for one prompt and one bash call, and prints what they changed.
DRIVER = """
const [plugin, folder, prompt, command] = process.argv.slice(2);
const { OrcmemPlugin } = await import(plugin);
const hooks = await OrcmemPlugin({ directory: folder, worktree: folder });
const message = { message: { id: "msg_1", role: "user", sessionID: "ses_1" },
  parts: [{ id: "prt_25214f914001VfIQrymo9k3F4j", type: "text", text: prompt }] };
await hooks["chat.message"]({ sessionID: "ses_1" }, message);
const system = { system: ["You are opencode."] };
await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1", model: {} }, system);
await hooks["tool.execute.before"]({ tool: "bash", sessionID: "ses_1", callID: "call_1" }, { args: { command } });
const tool = { title: command, output: "ran", metadata: {} };
await hooks["tool.execute.after"]({ tool: "bash", sessionID: "ses_1", callID: "call_1", args: { command } }, tool);
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_1" } } });
await hooks.dispose();
console.log(JSON.stringify({ parts: message.parts, system: system.system, tool: tool.output }));
"""
PROMPT = "Why does cargo build --release fail without the Cargo.lock lockfile?"


def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not installed")
    return found


def run_plugin(tmp_path: Path, command: list[str], folder: Path, env: dict[str, str]) -> dict[str, Any]:
    plugin = tmp_path / "orcmem.mjs"  # Node reads .mjs as a module, as OpenCode reads its plugins
    plugin.write_text(plugin_text(command), encoding="utf-8")
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER, encoding="utf-8")
    argv = [node(), str(driver), str(plugin), str(folder), PROMPT, "deploytool publish --yes"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


def test_the_plugin_adds_the_brief_recall_and_memory_at_tool_time(
    tmp_path: Path, orcmem_home: Path, project_dir: Path, orcmem_bin: Path
) -> None:
    env = {**os.environ, "ORCMEM_HOME": str(orcmem_home), "XDG_DATA_HOME": str(tmp_path / "data")}
    orcmem(env, project_dir, "memory", "on")
    for kind, title, body in (
        ("lesson", "Release builds need the lockfile", "cargo build --release fails without it"),
        ("env_quirk", "deploytool publish needs staging", "select staging before deploytool publish"),
    ):
        orcmem(env, project_dir, "add", "--type", kind, "--title", title, "--body", body)
    changed = run_plugin(tmp_path, [str(orcmem_bin)], project_dir, env)
    prompt, recall = changed["parts"]
    assert prompt["text"] == PROMPT
    assert recall["synthetic"] is True and recall["id"] > prompt["id"]  # OpenCode orders a message's parts by id
    assert recall["text"].startswith('<orcmem-context kind="recall"') and "Release builds" in recall["text"]
    assert recall["messageID"] == "msg_1" and recall["sessionID"] == "ses_1"
    base, brief = changed["system"]
    assert base == "You are opencode." and brief.startswith('<orcmem-context kind="brief"')
    assert (
        changed["tool"].startswith("ran\n\n<orcmem-context") and "deploytool publish needs staging" in changed["tool"]
    )
    log = (orcmem_home / "logs" / "recall.log").read_text()
    assert "session=ses_1" in log and "tool," in log
    # The turn's end and the session's end asked learning to read OpenCode's database (none here).
    database = tmp_path / "data" / "opencode" / "opencode.db"
    said = (orcmem_home / "logs" / "hooks.log").read_text()
    assert said.count(f"no transcript at {database}") == 2


@pytest.mark.parametrize(
    "script",
    [
        "exit 1",  # orcmem failed
        "echo 'not json'",  # printed something that is not a hook's answer
        "sleep 12",  # hangs: each call gives up at its limit (10 s for context, 3 s at tool time, 5 s to learn)
    ],
)
def test_a_failing_or_hanging_orcmem_adds_nothing_and_breaks_nothing(
    tmp_path: Path, project_dir: Path, script: str
) -> None:
    program = tmp_path / "orcmem"
    program.write_text(f"#!/bin/sh\ncat > /dev/null\n{script}\n")
    program.chmod(0o755)
    changed = run_plugin(tmp_path, [str(program)], project_dir, dict(os.environ))
    assert [part["text"] for part in changed["parts"]] == [PROMPT]
    assert changed["system"] == ["You are opencode."]
    assert changed["tool"] == "ran"


def test_a_missing_orcmem_adds_nothing(tmp_path: Path, project_dir: Path) -> None:
    changed = run_plugin(tmp_path, [str(tmp_path / "gone" / "orcmem"), "-m", "orcmem"], project_dir, dict(os.environ))
    assert changed == {"parts": changed["parts"][:1], "system": ["You are opencode."], "tool": "ran"}
