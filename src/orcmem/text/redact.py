"""Secret redaction: every title, body, summary, event and error passes through here before it is stored."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from orcmem.text.secret_formats import FORMATS, entropy, password_value, token_value
from orcmem.text.secret_rules import rule_set

MARKER = "[redacted:"
_MARKERS = re.compile(r"\[redacted:[^\]]*\]")
_SPACE = re.compile(r"\s")
_TAIL = re.compile(r"(\[redacted:[\w.-]+\])(?=[A-Za-z0-9_+/])[A-Za-z0-9_+/=-]+")

_SECRET_NAME = (
    r"[a-z0-9_-]*?(?:api[_-]?key|secret(?:[_-]?access)?(?:[_-]?key)?|client[_-]?secret|access[_-]?token"
    r"|auth[_-]?token|refresh[_-]?token|session[_-]?token|private[_-]?key|account[_-]?key"
    r"|shared[_-]?access[_-]?key|password|passwd|passphrase|authorization)"
)
_VALUE_END = r"(?=[\s\"'`,;)\]}>]|$)"
_MEMBER_PATH = r"[A-Za-z_]\w*(?:\??\.[A-Za-z_]\w*)+!?"
_SECRET_ASSIGNMENT = (
    rf"\b{_SECRET_NAME}\\?[\"']?\s*[=:]\s*"
    rf"(?:\\?\"([^\"\\\n]{{8,}})|\\?'([^'\\\n]{{8,}})"
    rf"|(?!{_MEMBER_PATH}{_VALUE_END})([^\s\"'`,;(){{}}\[\]<>$%\\]{{8,}}){_VALUE_END})"
)


class Rule:
    """One named pattern; with capture groups only the captured secret (the group named `secret`, else the first
    group that matched) is replaced, and only when `accept` (if any) says the captured value is one.

    The pattern is compiled the first time its cues are seen: a hook redacts a handful of texts, and compiling a
    hundred patterns it will not use would cost it more than all of its redaction.
    """

    __slots__ = ("name", "source", "flags", "cues", "accept", "long_token", "group", "gated", "_compiled")

    def __init__(
        self,
        name: str,
        source: str,
        cues: tuple[str, ...],
        flags: int = 0,
        accept: Callable[[str], bool] | None = None,
        long_token: bool = False,
        group: int | None = None,
        gated: bool = False,
    ) -> None:
        """A rule named `name` for the pattern `source`; see the class for the rest."""
        self.name = name
        self.source = source
        self.flags = flags | re.ASCII  # JavaScript's \w, \b and \s are ASCII-only; re.ASCII keeps that meaning
        self.cues = cues  # lowercase text that every match contains (none: `long_token` alone decides)
        self.accept = accept
        self.long_token = long_token  # every match holds a run of LONG_RUN letters and digits
        self.group = group  # the capture group that holds the secret, when not the first that matched
        # A scanner's keywords are part of its rule (it runs only on text holding one), not a hint that every
        # match holds one: such a rule is gated on them wherever it runs.
        self.gated = gated
        self._compiled: re.Pattern[str] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern (compiled on first use)."""
        if self._compiled is None:
            self._compiled = re.compile(self.source, self.flags)
        return self._compiled


_rule = Rule


_OWN_RULES: tuple[Rule, ...] = (
    # PEM keys (RSA, EC, OpenSSH, PKCS#8, encrypted) and PGP's "PRIVATE KEY BLOCK".
    _rule(
        "private-key",
        r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----",
        ("private key",),
    ),
    # A key cut off before its END line, or its BEGIN line alone: redact from BEGIN to the end of the text (what
    # follows a key's first line is the key, and a lone marker says a key stood there; scanners report it).
    _rule("private-key", r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*$", ("private key",)),
    # The markers secret scanners report on their own (detect-secrets' private-key plugin), with the rest of their line.
    _rule(
        "private-key",
        r"\bBEGIN (?:(?:DSA|EC|OPENSSH|PGP|RSA|SSH2 ENCRYPTED) )?PRIVATE KEY(?: BLOCK)?\b[^\n\"'`<]*"
        r"|\bPuTTY-User-Key-File-\d+:[^\n]*",
        ("private key", "putty-user-key-file"),
    ),
    _rule(
        "aws-access-key",
        r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
        ("akia", "asia", "a3t", "abia", "acca"),
    ),
    _rule(
        "aws-secret-key",
        r"\baws_?secret_?access_?key\\?[\"']?\s*[=:]\s*\\?[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        ("secret",),
        re.IGNORECASE,
    ),
    _rule(
        "github-token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _rule("gitlab-token", r"\bglpat-[A-Za-z0-9_-]{20,}", ("glpat-",)),
    _rule("slack-token", r"\bxox[abeoprs]-[A-Za-z0-9-]{10,}", ("xox",)),
    _rule("slack-app-token", r"\bxapp-[A-Za-z0-9-]{10,}", ("xapp-",)),
    _rule("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", ("sk-ant-",)),
    _rule("openai-key", r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}", ("sk-",)),
    _rule("stripe-key", r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}", ("k_live_", "k_test_")),
    _rule("stripe-webhook-secret", r"\bwhsec_[0-9A-Za-z]{24,}", ("whsec_",)),
    _rule("sendgrid-key", r"\bSG\.[\w-]{22}\.[\w-]{43}(?![\w-])", ("sg.",)),
    _rule("pypi-token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}", ("pypi-",)),
    # Incoming-webhook addresses are bearer credentials: whoever has the address can post.
    _rule(
        "webhook-url",
        r"\bhttps://hooks\.slack\.com/(?:services/T\w+/B\w+/\w+|(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,})",
        ("hooks.slack.com",),
    ),
    _rule(
        "webhook-url",
        r"\bhttps://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,}",
        ("discord",),
    ),
    _rule("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}", ("aiza",)),
    _rule("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",)),
    _rule("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}", ("hf_",)),
    _rule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", ("eyj",)),
    _rule(
        "authorization-header",
        r"\b(?:Bearer|Basic)\s+([\w.~+/-]{16,}=*)(?![\w.~+/=-]|(?<==)\\*[\"'])",
        ("bearer", "basic"),
        re.IGNORECASE,
    ),
    # The user name may be empty (redis://:password@host). A password may hold "/" or "@" (unescaped, as people
    # paste them): it runs to the first "@" that a host name follows.
    _rule(
        "url-credentials",
        r"\b[a-z][a-z0-9+.-]*://[^\s:@/]*:([^\s?#]+?)@(?=[A-Za-z0-9._-]+(?::\d+)?(?:[/?#\s\"'`,;|)\]}>\\]|$))",
        ("://",),
        re.IGNORECASE,
    ),
    _rule("url-credentials", r"\b[a-z][a-z0-9+.-]*://[^\s:@/]*:([^\s@/]+)(?=@)", ("://",), re.IGNORECASE),
    # curl -u user:password, --user=user:password
    _rule(
        "user-credentials",
        r"(?<![\w-])(?:-u|--user)(?:\s+|=)[\"']?[^\s:\"'@/]+:([^\s\"'@]{6,})",
        ("-u",),
    ),
    # ODBC and ADO.NET connection strings: ...;PWD=...; or ...;Password=two words;
    _rule("connection-string", r";\s*(?:pwd|password)\s*=\s*([^;\s\"'][^;\"'\n]{3,})", ("pwd", "passw"), re.IGNORECASE),
    # A command-line flag with the secret as the next word: --password VALUE, --token VALUE, --api-key VALUE.
    # (--password=VALUE is an assignment, below.) $VAR, $(...), paths and plain words ("--token explicitly") are
    # not secrets: the value needs a digit, or 20 characters.
    _rule(
        "secret-flag",
        rf"(?<![\w-])--(?:{_SECRET_NAME}|token)\s+[\"']?(?![-$%~./])"
        r"((?=[^\s\"'`<>|&;]*[0-9])[^\s\"'`<>|&;]{8,}|[^\s\"'`<>|&;]{20,})",
        ("key", "secret", "token", "passw", "passphrase", "authorization"),
        re.IGNORECASE,
    ),
    # Registry credentials: Docker's config.json ("auth": base64 of user:password, identity tokens) and .npmrc's
    # _auth (the same base64).
    _rule(
        "registry-auth",
        r"\"(?:auth|identitytoken|registrytoken)\"\s*:\s*\"([A-Za-z0-9+/_.-]{12,}={0,2})\"",
        ('"auth"', "identitytoken", "registrytoken"),
        re.IGNORECASE,
    ),
    _rule("registry-auth", r"(?<![\w-])_auth\s*=\s*([A-Za-z0-9+/]{12,}={0,2})", ("_auth",)),
    _rule(
        "secret-assignment",
        _SECRET_ASSIGNMENT,
        ("key", "secret", "token", "passw", "passphrase", "authorization"),
        re.IGNORECASE,
    ),
)


# The scanner's generic rules judge a value with CEL filters over the file and the lines around it, which are not
# carried over: ours judge the value itself (a placeholder, $VAR, a code reference or a plain word is kept).
_GENERIC_VALUE: dict[str, Callable[[str], bool]] = {
    "generic-password": password_value,
    "generic-api-key": token_value,
    "hashicorp-tf-password": password_value,
}


def _scanner_accept(rule: rule_set.ScannerRule, never: tuple[re.Pattern[str], ...]) -> Callable[[str], bool]:
    """The scanner's own filter for one rule: its entropy floor and its global list of values never secret."""
    floor = rule.min_entropy
    own = _GENERIC_VALUE.get(rule.id)

    def accept(value: str) -> bool:
        if any(pattern.search(value) for pattern in never) or (own is not None and not own(value)):
            return False
        if floor is None:
            return True
        measured = entropy(value) if value else 0.0
        return measured >= floor if rule.inclusive else measured > floor

    return accept


def _scanner_rules() -> tuple[Rule, ...]:
    """The maintained scanner's rules (secret_rules/rule_set.py), each run only on text holding one of its keywords."""
    shipped = rule_set.load()
    never = tuple(re.compile(pattern) for pattern in shipped.never_secret)
    return tuple(
        Rule(rule.id, rule.python, rule.keywords, accept=_scanner_accept(rule, never), group=rule.group, gated=True)
        for rule in shipped.rules
    )


class _Cues:
    """Finds which cues a lowered text holds, overlapping ones included, in one Aho-Corasick pass.

    A regular expression of all the cues tries a match at every letter of the text; the automaton reads each
    character once: a third of the time on the benchmark's synthetic transcript (25 ms against 9 when chosen).
    """

    def __init__(self, context: set[str], token: set[str]) -> None:
        """Look for `context` cues always and `token` cues only in text holding a long run (built on first use)."""
        self.context = frozenset(context)
        self.token = frozenset(token)
        self._automaton: Any = None

    def _build(self) -> Any:
        import ahocorasick

        automaton = ahocorasick.Automaton()
        for cue in self.context | self.token:
            automaton.add_word(cue, (cue, cue in self.context))
        automaton.make_automaton()
        self._automaton = automaton
        return automaton

    def found(self, lowered: str, tokens: bool) -> set[str]:
        """Every context cue in the lowered text, and every token cue too when `tokens`."""
        automaton = self._automaton or self._build()
        return {cue for _, (cue, context) in automaton.iter(lowered) if context or tokens}


# Most text holds no long run of letters and digits, and then the many token formats need no look at all: only the
# cues of the formats that can be short (passwords, assignments, flags, headers) are looked for.
LONG_RUN = 12
_LONG_RUN = re.compile(rf"[A-Za-z0-9]{{{LONG_RUN}}}")


def _by_cue(rules: tuple[Rule, ...]) -> dict[str, tuple[int, ...]]:
    """For each cue, the indexes of the rules that hold it (one pass: hundreds of rules, a thousand cues)."""
    found: dict[str, list[int]] = {}
    for index, rule in enumerate(rules):
        for cue in dict.fromkeys(rule.cues):
            found.setdefault(cue, []).append(index)
    return {cue: tuple(indexes) for cue, indexes in found.items()}


@dataclass(frozen=True, slots=True)
class _Engine:
    """Every rule in the order they run, and the cue index that picks the few a text needs."""

    rules: tuple[Rule, ...]
    cues: _Cues
    by_cue: dict[str, tuple[int, ...]]
    without_cues: tuple[int, ...]


@lru_cache(maxsize=1)
def _engine() -> _Engine:
    """Built on first use: a process that never redacts (most hooks) never reads the scanner's rule file."""
    # The formats run before the classic catch-all assignment rule, which would otherwise take an Authorization
    # header's scheme name ("GenieKey") for its secret and leave the key itself. The scanner's rules come first:
    # each knows where its secret ends (ours, run first, would take a vendor prefix up to a "/" or a "\\" and leave
    # the scanner's rule no match for the rest); ours then catch what the scanner's miss.
    rules = (
        *_scanner_rules(),
        *_OWN_RULES[:-1],
        *(Rule(f.name, f.pattern, f.cues, f.flags, f.accept, f.long_token) for f in FORMATS),
    )
    cues = _Cues(
        {cue for rule in rules if not rule.long_token for cue in rule.cues},
        {cue for rule in rules if rule.long_token for cue in rule.cues},
    )
    without = tuple(index for index, rule in enumerate(rules) if not rule.cues)
    return _Engine(rules, cues, _by_cue(rules), without)


def __getattr__(name: str) -> Any:
    """`RULES`: every rule, in the order they run (built on first use)."""
    if name == "RULES":
        return _engine().rules
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_SECRET_FIELD = re.compile(rf"^(?:{_SECRET_NAME}|cookie|set-cookie)$", re.IGNORECASE | re.ASCII)


@dataclass(frozen=True, slots=True)
class Redaction:
    """Redacted text and the names of the rules that fired."""

    text: str
    rules: tuple[str, ...]

    @property
    def changed(self) -> bool:
        """Whether anything was redacted."""
        return bool(self.rules)


def _covers_markers(whole: str, start: int, end: int) -> bool:
    """Whether every marker in `whole` lies wholly inside or wholly outside [start, end), and none is cut off."""
    spans = [(m.start(), m.end()) for m in _MARKERS.finditer(whole)]
    if len(spans) != whole.count(MARKER):
        return False
    return all(e <= start or s >= end or (start <= s and e <= end) for s, e in spans)


def _apply(rule: Rule, text: str, fired: list[str]) -> str:
    if rule.gated:
        # Our own markers name rules ("generic-api-key"): they must not open a gate the text itself keeps shut.
        lowered = _MARKERS.sub("", text.lower()) if MARKER in text else text.lower()
        if not any(cue in lowered for cue in rule.cues):
            return text

    def replace(match: re.Match[str]) -> str:
        whole = match.group(0)
        marker = f"[redacted:{rule.name}]"
        named = rule.group if rule.group is not None else match.re.groupindex.get("secret")
        groups = [named] if named is not None else range(1, (match.re.groups or 0) + 1)
        index = next((i for i in groups if match.group(i) is not None), 0)
        start, end = match.start(index) - match.start(0), match.end(index) - match.start(0)
        secret = whole[start:end]
        if MARKER in whole:
            # An earlier rule took part of this secret (a vendor prefix, up to a "/" or "."): the rest goes too, the
            # earlier marker inside the new one. A marker cut by this secret's edges, nothing left, or words after it
            # (a value that ran on past the marker into the text) stay as they are.
            rest = _MARKERS.sub("", secret)
            if not _covers_markers(whole, start, end) or not any(c.isalnum() for c in rest) or _SPACE.search(rest):
                return whole
        elif rule.accept is not None and not rule.accept(secret):
            return whole
        fired.append(rule.name)
        return whole[:start] + marker + whole[end:]

    count = len(fired)
    text = rule.pattern.sub(replace, text)
    # A rule whose pattern is shorter than the token (36 characters of a longer one) leaves the token's tail glued
    # to its marker: that tail is the same secret.
    return _TAIL.sub(r"\1", text) if len(fired) > count else text


# A token wrapped onto the next line (a terminal's width, a hard-wrapped log): the end of one line and a next line
# that holds one run of token characters and nothing else.
# (The look-behind starts a try only where a run starts: inside a long key block every start would rescan it.)
_WRAPPED = re.compile(
    r"(?<![A-Za-z0-9_+/=.:-])([A-Za-z0-9_+/=.:-]{8,})\\?\r?\n[ \t]*([A-Za-z0-9_+/=-]{6,})[ \t]*(?=\r?\n|$)"
)


def _unwrap(text: str) -> str:
    """Join a line break that splits a secret (the two halves make one, the second alone none), so it is redacted."""
    if "\n" not in text:
        return text

    def join(match: re.Match[str]) -> str:
        head, tail = match.group(1), match.group(2)
        if MARKER in head or redact_text(tail).changed:
            return match.group(0)
        return head + tail if tail not in redact_text(head + tail).text else match.group(0)

    return _WRAPPED.sub(join, text)


def redact_text(text: str) -> Redaction:
    """Replace every secret in `text` with `[redacted:<rule>]`; running it twice changes nothing more."""
    text = _unwrap(text)
    # A rule runs only when one of its literal cues is present: most text holds no secret, and one scan for
    # every cue costs far less than a hundred regular expressions.
    engine = _engine()
    long_run = _LONG_RUN.search(text) is not None
    present = engine.cues.found(text.lower(), tokens=long_run)
    if not present and not long_run:
        return Redaction(text, ())
    chosen = {index for cue in present for index in engine.by_cue[cue]}
    if long_run:
        chosen.update(engine.without_cues)
    fired: list[str] = []
    for index in sorted(chosen):  # in the order of RULES: the formats before the catch-all assignment
        rule = engine.rules[index]
        if long_run or not rule.long_token:
            text = _apply(rule, text, fired)
    return Redaction(text, tuple(dict.fromkeys(fired)))


# The files that decide what is redacted (the rules, the formats, how both are applied, the scanner's rule file): a
# change to any of them is a new rule set, and the store audit scans every memory again once (docs/audit.md).
_RULE_FILES = (
    Path(__file__),
    Path(__file__).with_name("secret_formats.py"),
    Path(__file__).parent / "secret_rules" / "rule_set.py",
    Path(__file__).parent / "secret_rules" / rule_set.SOURCE,
)


@lru_cache(maxsize=1)
def rules_version() -> int:
    """The version of today's redaction rules: a signed 64-bit digest of the files that define them."""
    digest = hashlib.blake2b(digest_size=8)
    for path in _RULE_FILES:
        digest.update(path.read_bytes())
    return int.from_bytes(digest.digest(), "big", signed=True)


def redact(text: str) -> str:
    """Shorthand for the redacted text alone."""
    return redact_text(text).text


@lru_cache(maxsize=1024)
def redact_label(label: str) -> str:
    """`redact` for short labels that repeat (tool names): a transcript names the same few thousands of times."""
    return redact(label)


def redact_value(value: Any) -> Any:
    """Redact every string inside a JSON-like value; strings under secret-named keys are replaced whole."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_value(item) for item in value]
    if isinstance(value, dict):
        cleaned: dict[Any, Any] = {}
        for key, item in value.items():
            if (
                isinstance(key, str)
                and isinstance(item, str)
                and item
                and MARKER not in item
                and _SECRET_FIELD.match(key)
            ):
                cleaned[key] = "[redacted:secret-field]"
            else:
                cleaned[key] = redact_value(item)
        return cleaned
    return value
