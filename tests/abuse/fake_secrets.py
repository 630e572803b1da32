"""Real-format FAKE secrets, generated from a seed: every one has the shape of a live credential and none is real.

Each fake carries the text an agent or a user would paste (`text`) and the random parts that must never reach the
disk or a page (`parts`): a leak of any 14-character run of a part counts, so half a secret is still a leak.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

ALNUM = string.ascii_letters + string.digits
BASE64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
WINDOW = 12  # runs of this many characters of a secret are searched for,
STRIDE = 3  # starting every STRIDE characters: any leaked run of WINDOW + STRIDE - 1 (14) characters is found


@dataclass(frozen=True, slots=True)
class FakeSecret:
    """A credential as it would be pasted, and its random parts."""

    kind: str
    text: str
    parts: tuple[str, ...]

    def windows(self) -> set[str]:
        """The runs of WINDOW characters of every part that start every STRIDE characters, and each part's last run
        (the whole part when shorter)."""
        found: set[str] = set()
        for part in self.parts:
            starts = [*range(0, max(len(part) - WINDOW, 0) + 1, STRIDE), max(len(part) - WINDOW, 0)]
            found.update(part[i : i + WINDOW] for i in starts)
        return found


def _r(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _pem(label: str) -> Callable[[random.Random], tuple[str, tuple[str, ...]]]:
    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        lines = tuple(_r(rng, 64, BASE64) for _ in range(4))
        body = "\n".join(lines)
        return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----", lines

    return make


def _aws_json(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    key_id, secret, token = _r(rng, 16, string.ascii_uppercase + "234567"), _r(rng, 40, BASE64), _r(rng, 120, BASE64)
    text = (
        f'{{"Credentials": {{"AccessKeyId": "ASIA{key_id}", "SecretAccessKey": "{secret}", '
        f'"SessionToken": "FwoGZXIvYXdzE{token}"}}}}'
    )
    return text, (key_id, secret, token)


def _jwt(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    payload = base64.urlsafe_b64encode(f'{{"sub":"{_r(rng, 12)}","role":"admin"}}'.encode()).decode().rstrip("=")
    signature = _r(rng, 43, URLSAFE)
    return f"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.{payload}.{signature}", (payload, signature)


def _simple(template: str, n: int, alphabet: str = ALNUM) -> Callable[[random.Random], tuple[str, tuple[str, ...]]]:
    """A secret whose one random part fills `{}` in template."""

    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        part = _r(rng, n, alphabet)
        return template.format(part), (part,)

    return make


def _two(template: str, rng: random.Random, sizes: tuple[int, int]) -> tuple[str, tuple[str, ...]]:
    parts = tuple(_r(rng, n, URLSAFE) for n in sizes)
    return template.format(*parts), parts


MAKERS: dict[str, Callable[[random.Random], tuple[str, tuple[str, ...]]]] = {
    "github-classic": _simple("ghp_{}", 36),
    "github-oauth": _simple("gho_{}", 36),
    "github-fine-grained": _simple("github_pat_11A{}", 79, ALNUM + "_"),
    "aws-access-key-id": _simple("AKIA{}", 16, string.ascii_uppercase + "234567"),
    "aws-secret-env": _simple("export AWS_SECRET_ACCESS_KEY={}", 40, BASE64),
    "aws-credentials-json": _aws_json,
    "slack-bot": _simple("xoxb-1234567890123-1234567890123-{}", 24),
    "slack-user": _simple("xoxp-1234567890-1234567890-1234567890-{}", 32, HEX),
    "slack-webhook": _simple("https://hooks.slack.com/services/T0123ABCD/B0123ABCD/{}", 24),
    "stripe-live": _simple("sk_live_{}", 24),
    "stripe-restricted": _simple("rk_live_{}", 24),
    "stripe-webhook": _simple("whsec_{}", 32),
    "openai-legacy": _simple("sk-{}", 48),
    "openai-project": _simple("sk-proj-{}", 100, URLSAFE),
    "anthropic": _simple("sk-ant-api03-{}AA", 93, URLSAFE),
    "pem-rsa": _pem("RSA PRIVATE KEY"),
    "pem-pkcs8": _pem("PRIVATE KEY"),
    "pem-ec": _pem("EC PRIVATE KEY"),
    "pem-openssh": _pem("OPENSSH PRIVATE KEY"),
    "pem-encrypted": _pem("ENCRYPTED PRIVATE KEY"),
    "pgp-private": _pem("PGP PRIVATE KEY BLOCK"),
    "jwt": _jwt,
    "password-assignment": _simple("password={}", 18),
    "password-json": _simple('{{"password": "{}"}}', 18),
    "password-env": _simple("export DB_PASSWORD='{}'", 18),
    "passphrase": _simple("passphrase: {}", 18),
    "postgres-url": _simple("postgresql://app:{}@db.internal:5432/app", 20),
    "mongodb-url": _simple("mongodb+srv://admin:{}@cluster0.ab1cd.mongodb.net/prod", 20),
    "redis-url": _simple("redis://:{}@cache.internal:6379/0", 20),
    "ado-connection": _simple("Server=tcp:db,1433;Database=app;User ID=sa;Password={};Encrypt=True", 20),
    "odbc-connection": _simple("Driver={{ODBC Driver 18}};Server=db;UID=sa;PWD={};", 20),
    "azure-storage": _simple(
        "DefaultEndpointsProtocol=https;AccountName=a1;AccountKey={}==;EndpointSuffix=x", 86, BASE64
    ),
    "azure-sas": _simple(
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=R;SharedAccessKey={}=", 43, BASE64
    ),
    "curl-user": _simple("curl -u deploy:{} https://api.example.com", 20),
    "password-flag": _simple("docker login -u deploy --password {}7 registry.example.com", 20),
    "token-flag": _simple("kubectl --token {} get pods", 40),
    "docker-config-auth": _simple('{{"auths": {{"ghcr.io": {{"auth": "{}=="}}}}}}', 40, BASE64),
    "npmrc-auth": _simple("//registry.npmjs.org/:_auth={}=", 40, BASE64),
    "bearer-header": _simple("Authorization: Bearer {}", 40),
    "gitlab": _simple("glpat-{}", 20, URLSAFE),
    "npm": _simple("npm_{}", 36),
    "pypi": _simple("pypi-AgEIcHlwaS5vcmc{}", 70, URLSAFE),
    "huggingface": _simple("hf_{}", 34),
    "google-api": _simple("AIza{}", 35, URLSAFE),
    "sendgrid": lambda rng: _two("SG.{}.{}", rng, (22, 43)),
    "discord-webhook": _simple("https://discord.com/api/webhooks/123456789012345678/{}", 68, URLSAFE),
}


KINDS = tuple(MAKERS)


def make_secret(kind: str, rng: random.Random) -> FakeSecret:
    """One fake of `kind`."""
    text, parts = MAKERS[kind](rng)
    return FakeSecret(kind, text, parts)


def corpus(seed: int = 20260820) -> list[FakeSecret]:
    """One fake of every kind."""
    rng = random.Random(seed)
    return [make_secret(kind, rng) for kind in KINDS]


def bundles(secrets: Iterable[FakeSecret], limit: int) -> list[list[FakeSecret]]:
    """The secrets packed in order into groups whose texts, one per line, fit in `limit` characters."""
    groups: list[list[FakeSecret]] = [[]]
    for secret in secrets:
        if groups[-1] and len(joined([*groups[-1], secret])) > limit:
            groups.append([])
        groups[-1].append(secret)
    return groups


def joined(secrets: Iterable[FakeSecret]) -> str:
    """The texts of the secrets, one per line."""
    return "\n".join(secret.text for secret in secrets)


def fake_secrets() -> st.SearchStrategy[FakeSecret]:
    """Hypothesis: a fake secret of any kind."""
    return st.builds(make_secret, st.sampled_from(KINDS), st.randoms(use_true_random=False))


# --- where secrets must never be ---------------------------------------------------------------------------------


def leaks(haystack: bytes | str, secrets: Iterable[FakeSecret]) -> list[str]:
    """The kinds of the secrets of which some WINDOW-long run appears in haystack (as is, or lowercased by FTS)."""
    data = haystack.encode("utf-8", "replace") if isinstance(haystack, str) else haystack
    lowered = data.lower()  # also finds what is stored as is: the windows are searched lowercased
    found = []
    for secret in secrets:
        for window in secret.windows():
            if window.lower().encode() in lowered:
                found.append(f"{secret.kind} ({window!r})")
                break
    return found


def profile_files(home: Path) -> dict[str, bytes]:
    """Every file of the profile that can hold what was written: the database, its WAL and SHM, and the logs."""
    files = {}
    for path in sorted(home.rglob("*")):
        if path.is_file() and "models" not in path.relative_to(home).parts:
            files[str(path.relative_to(home))] = path.read_bytes()
    return files


def assert_nowhere(home: Path, secrets: Iterable[FakeSecret], *extra: tuple[str, bytes | str]) -> None:
    """No run of any secret in any profile file (the WAL included) nor in the extra (name, content) pairs."""
    secrets = list(secrets)
    places = {**profile_files(home), **dict(extra)}
    assert "orcmem.db" in places, sorted(places)
    found = {name: hits for name, content in places.items() if (hits := leaks(content, secrets))}
    assert found == {}, f"secrets leaked: {found}"
