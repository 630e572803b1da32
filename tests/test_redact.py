"""Redaction: each rule fires on a real-format fake secret, keeps the surrounding text, and is idempotent."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orcmem.text.redact import redact, redact_text, redact_value

GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
CASES = [
    (
        "private-key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7xyzABCDEF\n-----END RSA PRIVATE KEY-----",
        "MIIEow",
    ),
    ("private-key", "key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAA", "b3Blbn"),
    ("private-key", "some text here\n-----BEGIN PRIVATE KEY-----\nyabba dabba doo", "yabba dabba"),
    ("private-key", 'PRIVATEKEY_TOKEN="BEGIN DSA PRIVATE KEY"', "BEGIN DSA PRIVATE KEY"),
    ("private-key", "<key>BEGIN PGP PRIVATE KEY BLOCK</key>", "BEGIN PGP PRIVATE KEY BLOCK"),
    ("private-key", "PuTTY-User-Key-File-2: ssh-rsa", "PuTTY-User-Key-File-2: ssh-rsa"),
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
    from orcmem.text.redact import RULES, _apply

    result = redact_text(f"before {text} after")
    assert secret not in result.text
    assert result.text.startswith("before ")  # (a key cut off before its END line is redacted to the end)
    # The scanner's rules run first and name most vendors' tokens; our own rule still catches it alone.
    assert result.rules and all(f"[redacted:{name}]" in result.text for name in result.rules)
    fired: list[str] = []
    alone = _apply(next(r for r in RULES if r.name == rule and _apply(r, text, []) != text), text, fired)
    assert secret not in alone and fired == [rule]


def test_assignment_keeps_the_name() -> None:
    assert redact("DB_PASSWORD=correcthorsebattery") == "DB_PASSWORD=[redacted:generic-password]"


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
    from orcmem.text.redact import RULES, _apply

    fired: list[str] = []
    for rule in RULES:
        text = _apply(rule, text, fired)
    return text


FRAGMENTS = st.sampled_from([text for _rule, text, _secret in CASES] + ["key", "Token: ", "sk-", " ", "\n", "x"])


@given(st.lists(st.one_of(FRAGMENTS, st.text(max_size=20)), max_size=8).map("".join))
def test_the_cue_shortcut_never_changes_the_result(text: str) -> None:
    assert redact(text) == _all_rules(text)


# --- the shapes and formats the scanners' test cases found stored raw (issue 25) ----------------------------------

TOKEN = "zq8xk2mvb7nwt4plr9sy0a"  # lowercase and digits: no "random-looking string" rule takes it for a secret
ISSUE_LEAKS = [
    ("make ?=", f'API_TOKEN ?= "{TOKEN}"', TOKEN),
    ("make ::=", f'API_TOKEN ::= "{TOKEN}"', TOKEN),
    ("make :::=", f'API_TOKEN :::= "{TOKEN}"', TOKEN),
    ("go var", f'var apiToken string = "{TOKEN}"', TOKEN),
    ("go backquote", f"apiToken := `{TOKEN}`", TOKEN),
    ("java setProperty", 'System.setProperty("DB_PASSWORD", "hunter2Secret!")', "hunter2Secret!"),
    ("php .=", f'$apiToken .= "{TOKEN}";', TOKEN),
    ("xml element", f"<apiToken>{TOKEN}</apiToken>", TOKEN),
    ("xml element multiline", f"<deployToken>\n    {TOKEN}\n</deployToken>", TOKEN),
    # an unsigned JWT (alg "none"): still a bearer of its claims
    (
        "jwt in prose",
        "it was eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3ODkwIiwiYWRtaW4iOnRydWV9. in the log",
        "MjM0NTY3ODkw",
    ),
    ("postgres url, / in the password", "postgresql://app:pa/ss@w0rd@db.internal:5432/app", "w0rd"),
    ("postgres url, @ in the password", "postgres://app:p@ssw0rd@db.internal/app", "ssw0rd"),
    ("echo base64 -d", "echo c3VwZXJzZWNyZXRwYXNzd29yZDEyMw== | base64 -d > key", "c3VwZXJzZWNyZXRwYXNz"),
    ("token split over two lines", "GITHUB_TOKEN=ghp_A1b2C3d4E5f6G7h8I9\nj0K1l2M3n4O5p6Q7r8", "j0K1l2M3n4O5p6Q7r8"),
    ("x-vault-token", 'curl -H "X-Vault-Token: s.Zq8xK2mVb7NwT4pL" https://vault:8200/v1/secret', "Zq8xK2mVb7NwT4pL"),
    ("pulumi", "log in with pul-0123456789abcdef0123456789abcdef01234567 today", "0123456789abcdef0123"),
    (
        "firebase server key",
        "key=AAAAqL8xYz0:APA91bHkq8ZtWm2vXr7nQpLs4TfYc9JdEe3UoGiKaBb6NhMx1CzVy5RwSjPl0Oq-DgFhIuAt_WkXe2YrTz9LmNbVc7Qa",
        "APA91bHkq8Zt",
    ),
    ("short bearer", 'curl -H "Authorization: Bearer abc123" https://api.example.com', "abc123"),
    ("short basic", "Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"),
    ("aws a3t key", "key A3TH6WH6XPVRX8AW2G1O here", "A3TH6WH6XPVRX8AW2G1O"),
    ("slack webhook, short path", "https://hooks.slack.com/services/TW8/Bfhw4/qe", "Bfhw4/qe"),
    # vendors the scanners know (Betterleaks' formats)
    ("discord", "discord_client_secret = 'q7Zk2mVb7NwT4pLr9sYaB3cD5eF7gH9i'", "q7Zk2mVb7NwT4pLr9sYaB3cD"),
    ("telegram", "TELEGRAM_BOT_TOKEN=123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "AAHdqTcvCH1vGW"),
    (
        "dynatrace",
        "DT=dt0c01.ST2EY72KQINMH574WMNVI7YN.G3DFPBEJYMODIDAEX454M7YWBUVEFOWKPRVMWFASS64NFH52PX6BNDVFFM572RZM",
        "G3DFPBEJYMODIDAEX454",
    ),
    ("mapbox", "mapbox_token = pk." + "q7zk2mvb7nwt4plr9sya" * 3 + ".b3cd5ef7gh9ij0kl1mn2op", "q7zk2mvb7nwt4plr9sya"),
]


@pytest.mark.parametrize(("shape", "text", "secret"), ISSUE_LEAKS, ids=[case[0] for case in ISSUE_LEAKS])
def test_each_shape_the_scanners_found_stored_raw_is_redacted(shape: str, text: str, secret: str) -> None:
    once = redact(text)
    assert secret not in once, once
    assert "[redacted:" in once
    assert redact(once) == once


KEPT = [
    "export API_TOKEN=$API_KEY",
    'API_TOKEN="${API_KEY}"',
    "api_token: {{ .Values.apiToken }}",
    'GITHUB_TOKEN: "${{ secrets.GITHUB_TOKEN }}"',
    "circleciToken = 'src/orcmem/service/memory_service.py'",
    '{"config.ini": "APIFY_TOKEN=REPLACE_ME\\nDEBUG=true"}',
    '{"config.ini": "SUPABASE_TOKEN=/etc/secrets/api.key\\nDEBUG=true"}',
    "looker_token: ababab1babababa21bab",
    'var bittrexToken = "a2abababa2ababab1bababababa2abab"',
    "release_token = v2.14.0",
    'image_digest_key = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
    "git log 3f2a9c1d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c -- src/",
]


@pytest.mark.parametrize("text", KEPT)
def test_what_the_scanners_call_no_secret_is_kept(text: str) -> None:
    assert redact(text) == text


# --- the maintained rule set and its translator -------------------------------------------------------------------


def test_go_flags_in_mid_pattern_become_scoped_groups() -> None:
    import re

    from orcmem.text.secret_rules.rule_set import go_to_python

    translated = go_to_python(r"\b(p8e-(?i)[a-z0-9]{4})x")
    assert translated == r"\b(p8e-(?i:[a-z0-9]{4}))x"
    assert re.search(translated, "p8e-AbC1x") and not re.search(translated, "P8E-abc1x")
    assert not re.search(translated, "p8e-abc1X")  # the flag ends with its group, as in Go
    assert go_to_python(r"(?i)abc(?-i:D)") == r"(?i)abc(?-i:D)"
    assert go_to_python(r"a(?i)b") == r"a(?i:b)"


def test_go_escapes_and_classes_are_carried_over() -> None:
    import re
    import warnings

    from orcmem.text.secret_rules.rule_set import TranslationError, go_to_python

    assert go_to_python(r"x(?:[^\w-]|\z)") == r"x(?:[^\w-]|\Z)"
    assert go_to_python(r"pat[[:alnum:]]{2}") == r"pat[0-9A-Za-z]{2}"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Python warns of a nested set or a set operation
        assert go_to_python(r"[[a-z]+") == r"[\[a-z]+"  # in Go a "[" in a set is itself
        assert re.compile(go_to_python(r"[a&&b--c]+")).fullmatch("a&b-c")
    assert re.fullmatch(go_to_python(r"[]a]+"), "]a]")
    for unsupported in (r"\pL+", r"[[:^alpha:]]", r"(?U)a+", r"(a"):
        with pytest.raises(TranslationError):
            go_to_python(unsupported)


def test_the_shipped_rules_are_the_translation_of_the_scanners_own() -> None:
    import re

    from orcmem.text.secret_rules.rule_set import go_to_python, load

    shipped = load()
    assert shipped.scanner == "betterleaks" and len(shipped.rules) >= 400
    for rule in shipped.rules:
        assert rule.python == go_to_python(rule.regex), rule.id
        re.compile(rule.python, re.ASCII)
        assert rule.keywords and all(k == k.lower() for k in rule.keywords), rule.id
    assert {"generic-api-key", "discord-api-token", "artifactory-api-key", "telegram-bot-api-token"} <= {
        rule.id for rule in shipped.rules
    }


def test_a_scanner_rule_runs_only_where_one_of_its_keywords_is() -> None:
    secret = "q7zk2mvb7nwt4plr9sya3cd5ef7gh9ij"
    assert redact_text(f"adafruit = '{secret}'").rules == ("adafruit-api-key",)
    assert redact_text(f"adafruxt = '{secret}'").rules == ()


def test_the_rules_are_read_on_first_use_only() -> None:
    import subprocess
    import sys

    # Importing redaction reads no rule file; the first redaction reads it once.
    code = (
        "import orcmem.text.redact; from orcmem.text.secret_rules import rule_set; "
        "assert rule_set.load.cache_info().currsize == 0; "
        "orcmem.text.redact.redact('x'); assert rule_set.load.cache_info().currsize == 1"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
