"""Redaction: each rule fires on a real-format fake secret, keeps the surrounding text, and is idempotent."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orcmem.redact import redact, redact_text, redact_value

GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
CASES = [
    (
        "private-key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7xyzABCDEF\n-----END RSA PRIVATE KEY-----",
        "MIIEow",
    ),
    ("private-key", "key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAA", "b3Blbn"),
    ("aws-access-key", "AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("aws-secret-key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    ("github-token", GITHUB, GITHUB),
    ("github-token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv", "github_pat_11"),
    ("gitlab-token", "glpat-xxxxxxxxxxxxxxxxxxxx", "glpat-xxxx"),
    ("slack-token", "xoxb-1234567890-abcdefghij", "xoxb-1234"),
    ("slack-app-token", "xapp-1-A0123456789-abcdef", "xapp-1-A01"),
    ("anthropic-key", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345", "sk-ant-api03"),
    ("openai-key", "sk-proj-abcdefghijklmnopqrstuvwxyz0123", "sk-proj-abc"),
    ("stripe-key", "sk_live_0123456789abcdefABCD", "sk_live_0123"),
    ("google-api-key", "AIzaSyA-1234567890abcdefghijklmnopqrstu", "AIzaSyA"),
    ("npm-token", "npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_abcdef"),
    ("huggingface-token", "hf_abcdefghijklmnopqrstuvwxyz0123456", "hf_abcdefgh"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "dozjg"),
    ("authorization-header", "Authorization: Bearer abcdef0123456789abcdef", "abcdef0123456789"),
    ("authorization-header", "Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==", "dXNlcjpw"),
    ("url-credentials", "postgres://admin:s3cr3tpass@db.internal:5432/app", "s3cr3tpass"),
    ("secret-assignment", "DB_PASSWORD=correcthorsebattery", "correcthorse"),
    ("secret-assignment", 'api_key: "abcd1234efgh5678"', "abcd1234efgh"),
    ("secret-assignment", "client_secret='zyxw9876vuts'", "zyxw9876"),
    ("secret-flag", "docker login -u me --password Xk29dkQmz81LpQ ghcr.io", "Xk29dkQmz81"),
    ("secret-flag", "kubectl --token abc123def456ghi789 get pods", "abc123def456"),
    ("secret-flag", "--api-key 'correcthorsebatterystaple'", "correcthorse"),
    ("registry-auth", '{"auths": {"ghcr.io": {"auth": "dXNlcjpnaHBfYWJjZGVmZ2hp"}}}', "dXNlcjpnaHBf"),
    ("registry-auth", "//registry.npmjs.org/:_auth=dXNlcjpwYXNzd29yZDEy", "dXNlcjpwYXNz"),
]


@pytest.mark.parametrize(("rule", "text", "secret"), CASES)
def test_each_rule_redacts_its_secret(rule: str, text: str, secret: str) -> None:
    result = redact_text(f"before {text} after")
    assert secret not in result.text
    assert f"[redacted:{rule}]" in result.text
    assert rule in result.rules
    assert result.text.startswith("before ")


def test_assignment_keeps_the_name() -> None:
    assert redact("DB_PASSWORD=correcthorsebattery") == "DB_PASSWORD=[redacted:secret-assignment]"


@pytest.mark.parametrize(
    "text",
    [
        "password=short",  # under 8 characters
        "password = config.db.password",  # a member path, not a value
        "the api key lives in the keyring",
        "run pytest -k test_password_reset",
        "email me at someone@example.com",
        "pass --token explicitly when the keyring is locked",  # a word after a flag, not a value
        "the --password argument is deprecated",
        "docker login --password-stdin < pw.txt",
        "gh auth login --token $GH_TOKEN",  # a reference to a variable
        "curl --token ./token.txt",
    ],
)
def test_harmless_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_redaction_is_idempotent_on_the_corpus() -> None:
    for _rule, text, _secret in CASES:
        once = redact(text)
        assert redact(once) == once


@given(st.text(max_size=300))
def test_redaction_is_idempotent_on_any_text(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


def test_redact_value_walks_json_and_secret_fields() -> None:
    value = {"env": {"API_KEY": "plain-but-secret", "PATH": "/usr/bin"}, "args": [f"--token {GITHUB}"], "n": 3}
    cleaned = redact_value(value)
    assert cleaned["env"]["API_KEY"] == "[redacted:secret-field]"
    assert cleaned["env"]["PATH"] == "/usr/bin"
    assert GITHUB not in cleaned["args"][0]
    assert cleaned["n"] == 3


def _all_rules(text: str) -> str:
    """Every rule on every text, without the cue shortcut."""
    from orcmem.redact import RULES, _apply

    fired: list[str] = []
    for rule in RULES:
        text = _apply(rule, text, fired)
    return text


FRAGMENTS = st.sampled_from([text for _rule, text, _secret in CASES] + ["key", "Token: ", "sk-", " ", "\n", "x"])


@given(st.lists(st.one_of(FRAGMENTS, st.text(max_size=20)), max_size=8).map("".join))
def test_the_cue_shortcut_never_changes_the_result(text: str) -> None:
    assert redact(text) == _all_rules(text)
