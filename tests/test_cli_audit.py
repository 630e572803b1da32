"""`orcmem audit` as a user types it: the health line, the findings with their fixes, --json, and `audit fix`."""

from __future__ import annotations

import json
import re

ID = re.compile(r"mem_[0-9a-f]{32}")


def test_audit_reports_and_fixes(run) -> None:
    run("memory", "on")
    assert "nothing to audit" in run("audit", ok=False).stderr
    words = ("--type", "lesson", "--title", "Tests need Postgres 16", "--body", "json_table needs Postgres 16.")
    first = run("add", *words).stdout.strip()
    second = run("add", *words).stdout.strip()
    run("add", "--type", "lesson", "--title", "Be careful", "--body", "Always test your changes.")
    text = run("audit").stdout
    assert text.splitlines()[0] == "3 memories: 1 duplicate, 1 empty or generic"
    assert f"fix: orcmem audit fix merge {first} {second}" in text
    report = json.loads(run("audit", "--json", "--days", "30").stdout)
    assert report["counts"]["duplicate"] == 1 and report["days"] == 30 and not report["healthy"]
    assert "merged" in run("audit", "fix", "merge", first, second).stdout
    assert json.loads(run("audit", "--json").stdout)["counts"]["duplicate"] == 0
    assert "nothing to redact" in run("audit", "fix", "redact", first).stdout
    bad = run("audit", "--days", "0", ok=False)
    assert bad.exit_code == 1 and "--days" in bad.stderr and "Traceback" not in bad.stderr
