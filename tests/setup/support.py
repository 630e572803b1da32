"""Shared material for the setup tests: a user's own agent configuration, tree snapshots."""

from __future__ import annotations

from pathlib import Path

CLAUDE_SETTINGS = """{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {"allow": ["Bash(git status)"], "deny": []},
  "env": {"FOO": "bar"},
  "hooks": {
    "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}],
    "Stop": [
      {
        "hooks": [
          {"type": "command", "command": "notify-send 'done'", "timeout": 5}
        ]
      }
    ],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/check-bash"}]}],
    "Notification": [{"hooks": [{"type": "command", "command": "say hi"}]}]
  },
  "someFutureKey": {"nested": [1, 2.5, null, true]},
  "model": "opus"
}
"""

CLAUDE_JSON = """{
  "numStartups": 42,
  "theme": "dark",
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-github"
      ],
      "env": {
        "GITHUB_TOKEN": "${GITHUB_TOKEN}"
      }
    }
  },
  "projects": {
    "/home/me/work": {
      "allowedTools": [],
      "hasTrustDialogAccepted": true
    }
  },
  "userID": "abc123"
}
"""

CODEX_CONFIG = """# My Codex configuration
model = "gpt-5"  # the default model
approval_policy = "on-request"

# Documentation lookups
[mcp_servers.context7]
command = "npx"   # node runner
args = ["-y", "@upstash/context7-mcp"]

[mcp_servers.context7.env]
LOG = "quiet"

[profiles.fast]
model = "gpt-5-mini"  # cheaper
"""

CODEX_HOOKS = """{
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "python3 ~/.codex/notify.py",
            "timeout": 5
          }
        ]
      }
    ]
  }
}
"""


ORCMEM_BACKUPS = ".local/share/orcmem/backups"  # orcmem's own folder, where setup keeps backups


def snapshot_tree(root: Path) -> dict[str, bytes]:
    """Every file under root, by relative path, with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def backups(root: Path) -> list[Path]:
    """orcmem's backup files under root."""
    return sorted(p for p in root.rglob("*") if ".orcmem-backup-" in p.name)


GEMINI_SETTINGS = """{
  "general": {"vimMode": true, "enableAutoUpdate": false},
  "ui": {"theme": "GitHub"},
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_TOKEN": "$GITHUB_TOKEN"},
      "timeout": 30000
    }
  },
  "hooks": {
    "BeforeTool": [
      {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "~/bin/check-shell", "timeout": 5000}]}
    ],
    "AfterAgent": [{"hooks": [{"name": "notify", "type": "command", "command": "notify-send done"}]}]
  }
}
"""
