"""The secret formats redaction knows beyond the classic ones in `redact.py`: vendor prefixes, credentials named in
assignments, headers, URLs and command lines, credential files, and random-looking quoted strings.

Each format is a pattern, the lowercase cues one of which every match contains (a rule runs only when a cue is
there), and, where a pattern alone would catch ordinary text, a check of the captured value. Built from the
vendors' published token formats and the keyword and entropy ideas of detect-secrets; measured on the fake-secret
corpus (tests/abuse/fake_secrets.py) and on ordinary coding text (docs/benchmarks.md, bench/redaction.py).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

Accept = Callable[[str], bool]


@dataclass(frozen=True, slots=True)
class Format:
    """One secret format: its name, pattern (group 1, when present, is the secret) and cues; `accept` vets a value."""

    name: str
    pattern: str
    cues: tuple[str, ...]
    flags: int = 0
    accept: Accept | None = None
    long_token: bool = False  # the secret holds a run of 12 letters and digits: looked for only where one is


# --- what a secret value looks like -----------------------------------------------------------------------------

_PLACEHOLDER = re.compile(
    r"^(?:\$|%\(|\{\{|<|@[A-Z_]+@$|\[redacted|process\.env|os\.environ|getenv|env\(|\*{3,}|x{4,}|\.{3}|changeme|"
    r"your[-_ ]|example|placeholder|dummy|redacted|none$|null$|true$|false$|undefined$|required$|optional$)",
    re.IGNORECASE,
)
_CODE_CALL = re.compile(r"^[A-Za-z_][\w.]+\((?:[\"')]|$)")  # os.getenv("X"), get_secret(): code, not a value
_MEMBER_PATH = re.compile(r"^[A-Za-z_]\w*(?:\??\.[A-Za-z_]\w*)+!?$")  # config.db.password: a reference, not a value
# A plain word, or an environment variable's name (capitals, with underscores between its words).
_WORDS_ONLY = re.compile(r"^[a-z][a-z_-]*$|^[A-Z]+$|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")


def _shape_ok(value: str) -> bool:
    if not value or _PLACEHOLDER.match(value) or _CODE_CALL.match(value) or _MEMBER_PATH.match(value):
        return False
    return "://" not in value


def password_value(value: str) -> bool:
    """A password: four characters or more, not a placeholder, with a digit, a symbol or mixed case (or long)."""
    value = value.strip().strip("\"'")
    if len(value) < 4 or not _shape_ok(value) or _ENV_NAME.match(value):
        return False
    if _WORDS_ONLY.match(value):
        return len(value) >= 12  # a passphrase of plain words ("correcthorsebattery"); a short word is a setting
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(not c.isalnum() for c in value)
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value)
    return has_digit or has_symbol or mixed or len(value) >= 12


# What an assignment to a "token" or "key" often holds and no key is: a file's path, a version, a digest (the ids
# that make a memory useful), or a value of almost no entropy (a shape-alike placeholder).
_PATH = re.compile(r"^(?:~|\.{1,2})?/?(?:[\w.@-]+/)+[\w.@-]+$")
_FILE_PATH = re.compile(r"^(?:~|\.{0,2}/|/)|\.[a-z][a-z0-9]{0,4}$")
_VERSION = re.compile(r"^v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?$")
# Bare hex (40 or 64 characters) and UUIDs stay tokens here: GitHub's classic tokens, Linode's, npm's and Heroku's
# keys have those shapes, and a "token" seldom names a commit or a record; a digest is one with its algorithm named.
_DIGEST = re.compile(r"^(?:sha(?:1|256|384|512)|md5)[:-][0-9a-f]{32,128}$")
# Bits per character: "ababab12ab" has 1.5 and a shape-alike "AbAB1b-ab2AB_abBA" under 3; a real token of 16
# characters or more has 3.5 to 6 (a short one cannot reach as high: 8 distinct characters make 3 bits).
MIN_TOKEN_ENTROPY = 2.5
MIN_LONG_TOKEN_ENTROPY = 3.0


def id_like(value: str) -> bool:
    """A path, a version, a digest, or a value of almost no entropy: not a token."""
    if _PATH.match(value) and _FILE_PATH.search(value):
        return True
    if _VERSION.match(value) or _DIGEST.match(value):
        return True
    return entropy(value) < (MIN_LONG_TOKEN_ENTROPY if len(value) >= 16 else MIN_TOKEN_ENTROPY)


def token_value(value: str) -> bool:
    """A token or key: eight characters or more, not a placeholder, letters with digits (or twenty characters)."""
    value = value.strip().strip("\"'")
    if len(value) < 8 or not _shape_ok(value) or " " in value or id_like(value):
        return False
    if _WORDS_ONLY.match(value):
        return len(value) >= 20 and not _ENV_NAME.match(value)  # a long opaque value, even one of plain letters
    has_digit = any(c.isdigit() for c in value)
    has_letter = any(c.isalpha() for c in value)
    return (has_digit and has_letter) or len(value) >= 20


# Ids with a type prefix (msg_, toolu_, req_, call_, cus_...): what APIs and transcripts name things by, not keys.
_ID_LIKE = re.compile(r"^[a-z]{2,8}_[A-Za-z0-9]{8,}$")


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def random_string(value: str) -> bool:
    """A quoted string that reads as random: mixed case with digits and high entropy, or a 32-character hex key.

    Commit ids and content digests (40 and 64 hex characters) are not secrets and are kept.
    """
    if len(value) in (40, 64) and all(c in "0123456789abcdef" for c in value.lower()):
        return False
    if _ID_LIKE.match(value):
        return False
    if len(value) == 32 and all(c in "0123456789abcdef" for c in value):
        return entropy(value) >= MIN_LONG_TOKEN_ENTROPY
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value) and any(c.isdigit() for c in value)
    return mixed and entropy(value) >= 4.0


_PASSWORD_WORDS = r"(?:passw(?:or)?d|passwd|passphrase|pwd|pass|psk)"
_KEY_WORDS = (
    r"(?:token|secret|api[_-]?key|apikey|access[_-]?key|private[_-]?key|secret[_-]?key|key[_-]?data|"
    r"certificate[_-]?data|license[_-]?key|licen[cs]e|write[_-]?key|routing[_-]?key|app[_-]?key|master[_-]?key|"
    r"consumer[_-]?key|application[_-]?key|signing[_-]?key|encryption[_-]?key|auth|credential|cookie|"
    r"dsn|signature|sig|pat\b)"
)
_NAME_CHARS = r"[A-Za-z0-9_.-]*"
# A type between the name and the operator (Go's `var key string =`, Kotlin's `val key: String =`), then every
# assignment operator of the languages secrets are written in: = := ::= :::= ?= .= += ??= => :
_TYPED = r"(?:\s*:\s*String\??(?=\s*=)|\s+(?:string|String|str|\[\]byte)(?=\s*=))?"
_ASSIGNED = rf"\\?[\"']?{_TYPED}\s*(?:=>|:{{1,3}}=|\?\?=|[?.+]=|[=:])\s*"
# A quoted value may have lost its closing quote (text cut at a limit): what is there is still the secret.
# An unquoted value ends at an escaped newline too: JSON holding a file's lines ("KEY=value\\nNEXT=1").
_VALUE = r"(?:\\?\"([^\"\\\n]+)|'([^'\n]+)|`([^`\n]+)`|((?:[^\s\"'`,;<>{}\[\]\\]|\\(?![nrt]))+))"


def _assignment(words: str) -> str:
    return rf"(?<![\w.-]){_NAME_CHARS}{words}{_NAME_CHARS}{_ASSIGNED}{_VALUE}"


def _call_pair(words: str) -> str:
    """A name and its value as two quoted arguments: setProperty("API_TOKEN", "v"), os.environ.setdefault(...)."""
    return rf"[\"']{_NAME_CHARS}{words}{_NAME_CHARS}[\"']\s*,\s*(?:\"([^\"\\\n]+)\"|'([^'\n]+)')"


def _element(words: str) -> str:
    """An XML element named for a secret: <apiToken>v</apiToken>, the value on its own line or not."""
    return rf"<(?P<tag>{_NAME_CHARS}{words}{_NAME_CHARS})>[ \t]*\n?[ \t]*(?P<secret>[^<>\s][^<>\n]*?)\s*</(?P=tag)>"


def _prefixed(name: str, pattern: str, *cues: str) -> Format:
    return Format(name, pattern, cues, long_token=True)


# Cues precise enough that ordinary words ("passed", "keyboard", "design") do not set the costly rules running.
_KEY_CUES = (
    "token", "secret", "_key", "-key", ".key", "key=", "key:", "key =", "key :", "privatekey", 'key"', "key'",
    "apikey", "auth", "credential", "cookie", "dsn", "sig=", "signature", "licen", "certificate", "_pat",
)  # fmt: skip
_PASSWORD_CUES = ("password", "passwd", "passphrase", "_pass", "-pass", "pass=", "pass:", 'pass"', "pwd", "psk")

FORMATS: tuple[Format, ...] = (
    # --- credential files and blocks --------------------------------------------------------------------------
    Format(
        "private-key",
        r"-----BEGIN OpenVPN Static key V1-----[\s\S]*?(?:-----END OpenVPN Static key V1-----|$)",
        ("openvpn static key",),
    ),
    Format("private-key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{20,}", ("age-secret-key",)),
    Format("private-key", r"Private-Lines:\s*\d+\s*\n((?:[A-Za-z0-9+/=]{8,}\n?)+)", ("private-lines",)),
    Format("private-key", r"Private-MAC:\s*([0-9a-f]{16,})", ("private-mac",)),
    # a 64-byte keypair as numbers (Solana's id.json)
    Format("private-key", r"\[(?:\s*\d{1,3}\s*,){63}\s*\d{1,3}\s*\]", ("solana", "keypair", "id.json")),
    Format("private-key", r"\b[5KL][1-9A-HJ-NP-Za-km-z]{50,51}\b", (), long_token=True),  # a Bitcoin WIF key
    Format(
        "password-hash",
        r"\$(?:apr1|1|5|6|y|7)\$[./A-Za-z0-9$]{2,}\$[./A-Za-z0-9]{16,}",
        ("$apr1$", "$1$", "$5$", "$6$", "$y$", "$7$"),
    ),
    Format("password-hash", r"\$2[abxy]\$\d\d\$[./A-Za-z0-9]{53}", ("$2",)),
    Format("netrc", r"\bmachine\s+\S+(?:\s+login\s+\S+)?\s+password\s+(\S+)", ("machine",)),
    Format(
        "pgpass", r"(?<![\w.:-])[\w.*-]+:(?:5432|\*):[\w*-]+:[\w.@*-]+:(\S{4,})", (":5432:", ":*:"), 0, password_value
    ),
    Format(
        "config-password",
        r"<(?P<tag>password|passphrase|secret|token|apiKey|api_key|clientSecret)>(?P<secret>[^<\n]{4,})</(?P=tag)>",
        ("<pass", "<secret", "<token", "<api", "<client"),
        re.IGNORECASE,
    ),
    Format("config-password", r"key=\"ClearTextPassword\"\s+value=\"([^\"]+)\"", ("cleartextpassword",)),
    Format("config-password", r"\brequirepass\s+(\S+)", ("requirepass",)),
    Format("config-password", r"\bIDENTIFIED\s+BY\s+'([^']+)'", ("identified",), re.IGNORECASE),
    Format("config-password", r"\bPASSWORD\s+'([^']+)'", ("password",), re.IGNORECASE),
    Format("irc-password", r"\bPASS\s+oauth:(\S+)", ("oauth:",)),
    Format("vault-unseal-key", r"\bUnseal Key(?: \d+)?:\s*(\S+)", ("unseal key",)),
    Format("kafka-credentials", r"LoginModule\s+required\s+username=\"([^\"]+)\"", ("loginmodule",)),
    # --- credentials named in an assignment: NAME=VALUE, "name": "value", name: value ---------------------------
    Format("secret-assignment", _assignment(_PASSWORD_WORDS), _PASSWORD_CUES, re.IGNORECASE, password_value),
    Format("secret-assignment", _assignment(_KEY_WORDS), _KEY_CUES, re.IGNORECASE, token_value),
    Format("secret-assignment", _call_pair(_PASSWORD_WORDS), _PASSWORD_CUES, re.IGNORECASE, password_value),
    Format("secret-assignment", _call_pair(_KEY_WORDS), _KEY_CUES, re.IGNORECASE, token_value),
    Format("config-password", _element(_PASSWORD_WORDS), _PASSWORD_CUES, re.IGNORECASE, password_value),
    Format("config-password", _element(_KEY_WORDS), _KEY_CUES, re.IGNORECASE, token_value),
    # Gradle and other DSLs: storePassword "value", password 'value'
    Format(
        "secret-assignment",
        rf"(?<![\w.-])\w*{_PASSWORD_WORDS}\w*\s+(?:\"([^\"\n]{{4,}})\"|'([^'\n]{{4,}})')",
        _PASSWORD_CUES,
        re.IGNORECASE,
        password_value,
    ),
    # --- headers ----------------------------------------------------------------------------------------------
    Format(
        "authorization-header",
        r"\bAuthorization:\s*(?!Bearer\b|Basic\b)[A-Za-z][\w-]*\s+(?:token=)?([^\s\"',;]{8,})",
        ("authorization",),
        re.IGNORECASE,
    ),
    # In an Authorization header every scheme's credential is one, however short ("Bearer abc123").
    Format(
        "authorization-header",
        r"\bAuthorization\\?[\"']?\s*:\s*\\?[\"']?(?:Bearer|Basic|Token|Digest|Negotiate|NTLM|ApiKey)\s+"
        r"(?!\$|<|\{\{|%|\[redacted)([^\s\"',;\\]{3,})",
        ("authorization",),
        re.IGNORECASE,
    ),
    Format(
        "service-header",
        r"\bX-[\w-]*?(?:token|key|secret|auth|signature|password)[\w-]*\\?[\"']?\s*:\s*\\?[\"']?([^\s\"',;\\]+)",
        ("x-",),
        re.IGNORECASE,
        token_value,
    ),
    Format("cookie", r"(?<![\w-])(?:set-)?cookie:[ \t]*([^\r\n]+)", ("cookie",), re.IGNORECASE),
    Format(
        "service-header",
        r"\b(?:fastly-key|x-honeycomb-team|x-jfrog-art-api|x-insert-key)\s*[:=]\s*(\S+)",
        ("fastly-key", "honeycomb", "jfrog", "insert-key"),
        re.IGNORECASE,
    ),  # fmt: skip
    # --- URLs -------------------------------------------------------------------------------------------------
    Format(
        "url-parameter",
        r"[?&;][\w.-]*?(?:token|key|sig|signature|secret|passw(?:or)?d|pwd|auth|credential)[\w.-]*=([^&\s#\"'<>]+)",
        ("token", "key", "sig", "secret", "passw", "pwd", "auth", "credential"),
        re.IGNORECASE,
        token_value,
    ),
    Format(
        "url-credentials",
        r"\b[a-z][a-z0-9+.-]*://([A-Za-z0-9_-]{16,})(?=(?::[^\s@/]*)?@)",  # a key as the user part: Sentry, Shopify
        ("://",),
        re.I,
        token_value,
    ),
    Format("telegram-bot", r"(?<!\d)\d{8,10}:AA[\w-]{30,}", (":aa",)),
    # --- command lines ----------------------------------------------------------------------------------------
    Format(
        "secret-flag",
        r"(?<![\w-])--[\w-]*(?:token|key|secret|passw(?:or)?d|pass|pwd|auth|credential)(?![\w-]*(?:-stdin|-file|-env|"
        r"-cmd|-command|-helper|-path|-url|-id)\b)[\w-]*[ =]+[\"']?([^\s\"'`<>|&;]+)",
        ("--",),
        re.IGNORECASE,
        token_value,
    ),
    Format("secret-flag", r"\bsshpass\s+-p\s*(\S+)", ("sshpass",)),
    # A value decoded on the spot is hidden on purpose: echo <base64> | base64 -d
    Format(
        "encoded-secret",
        r"\b(?:echo|printf)\s+(?:-[ne]+\s+)?[\"']?([A-Za-z0-9+/_-]{8,}={0,2})[\"']?\s*\|\s*base64\s+(?:-d|--decode|-D)\b",
        ("base64",),
    ),
    Format("secret-flag", r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n;|&]*?\s-p(\S+)", ("mysql", "mariadb")),
    Format("secret-flag", r"\b(?:mongosh|mongo|mongodump|mongorestore)\b[^\n;|&]*?\s-p\s+(\S+)", ("mongo",)),
    Format("secret-flag", r"\bsqlcmd\b[^\n;|&]*?\s-P\s+(\S+)", ("sqlcmd",)),
    Format("secret-flag", r"\bredis-cli\b[^\n;|&]*?\s-a\s+(\S+)", ("redis-cli",)),
    Format(
        "secret-flag",
        r"\b(?:az\s+login|(?:docker|podman|helm|buildah|skopeo|oras)\s+(?:registry\s+)?login)\b[^\n;|&]*?\s-p\s+"
        r"[\"']?([^\s\"']+)",
        ("login",),
    ),
    Format("secret-flag", r"\bcodecov\b[^\n;|&]*?\s-t\s+(\S+)", ("codecov",)),
    Format("secret-flag", r"\bprefect\s+cloud\s+login\b[^\n;|&]*?\s-k\s+(\S+)", ("prefect",)),
    Format("secret-flag", r"-pass(?:out|in)\s+pass:(\S+)", ("pass:",)),
    Format("secret-flag", r"\bsmbclient\b[^\n;|&]*?\s-U\s+[^\s%]+%(\S+)", ("smbclient",)),
    Format("secret-flag", r"(?<![\w-])-auth\s+[^\s:]+:(\S+)", ("-auth",)),
    Format(
        "secret-argument",
        r"\b(?:cargo\s+login|snyk\s+auth|ngrok\s+(?:config\s+add-authtoken|authtoken)|"
        r"poetry\s+config\s+http-basic\.\S+\s+\S+|"
        r"bitcoin-cli\s+importprivkey|vault\s+(?:login|token\s+lookup))\s+([^\s\"']+)",
        ("cargo", "snyk", "ngrok", "poetry", "bitcoin", "vault"),
    ),
    Format("secret-argument", r"\bb2\s+(?:account\s+authorize|authorize-account)\s+(\S+\s+\S+)", ("b2",)),
    # user:secret after -u / --user, also with an e-mail or token/ path as the user (curl, jenkins, zendesk)
    Format(
        "user-credentials",
        r"(?<![\w-])(?:-u|--user)(?:\s+|=)[\"']?[^\s:\"']+:([^\s\"'@]{6,})",
        ("-u",),
    ),
    # --- vendor prefixes (the token is recognisable on its own) -----------------------------------------------
    _prefixed("vault-token", r"\bhv[sbr]\.[A-Za-z0-9_-]{20,}", "hvs.", "hvb.", "hvr."),
    _prefixed("pulumi-token", r"\bpul-[0-9a-f]{40}\b", "pul-"),
    _prefixed("firebase-server-key", r"\bAAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{50,}", "apa91b"),
    _prefixed("digitalocean-token", r"\bdo[opr]_v1_[0-9a-f]{64}", "_v1_"),
    _prefixed("linear-key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{20,}", "lin_"),
    _prefixed("shopify-token", r"\bshp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}", "shp"),
    _prefixed("twilio-key", r"\b(?:SK|AC)[0-9a-f]{32}\b"),
    _prefixed("mailgun-key", r"\bkey-[0-9a-f]{32}\b", "key-"),
    _prefixed("terraform-token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{20,}", "atlasv1"),
    _prefixed(
        "gitlab-token",
        r"\bgl(?:rt|dt|ft|ptt|cbt|oas|imt|agent|soat|ffct)-[A-Za-z0-9_-]{20,}",
        *(f"gl{kind}-" for kind in ("rt", "dt", "ft", "ptt", "cbt", "oas", "imt", "agent", "soat", "ffct")),
    ),
    _prefixed("gitlab-token", r"\bGR1348941[A-Za-z0-9_-]{20,}", "gr1348941"),
    _prefixed("atlassian-token", r"\bATATT3[A-Za-z0-9_=-]{20,}", "atatt3"),
    _prefixed("notion-token", r"\b(?:ntn_[A-Za-z0-9]{20,}|secret_[A-Za-z0-9]{43})", "ntn_", "secret_"),
    _prefixed("airtable-token", r"\bpat[A-Za-z0-9]{14}\.[0-9a-f]{64}"),
    _prefixed("figma-token", r"\bfigd_[A-Za-z0-9_-]{20,}", "figd_"),
    _prefixed("postman-key", r"\bPMAK-[0-9a-f]{24}-[0-9a-f]{34}", "pmak-"),
    _prefixed("heroku-key", r"\bHRKU-[A-Za-z0-9_-]{20,}", "hrku-"),
    _prefixed("netlify-token", r"\bnfp_[A-Za-z0-9]{20,}", "nfp_"),
    _prefixed("flyio-token", r"\bFlyV1\s+fm\d_[A-Za-z0-9+/=_,-]{20,}", "flyv1"),
    _prefixed("supabase-key", r"\bsb_secret_[A-Za-z0-9_-]{20,}", "sb_secret_"),
    _prefixed("cloudflare-key", r"\bv1\.0-[0-9a-f]{24}-[0-9a-f]{20,}", "v1.0-"),
    _prefixed("newrelic-key", r"\bNR(?:AK|II|JS|RA)-[A-Za-z0-9_-]{20,}|\b[0-9a-f]{36}NRAL\b", "nrak-", "nrii-", "nral"),
    _prefixed("sentry-token", r"\bsntr[ysu]_[A-Za-z0-9_=+/-]{20,}", "sntr"),
    _prefixed("grafana-token", r"\bgl(?:c|sa)_[A-Za-z0-9_=+/-]{20,}", "glc_", "glsa_"),
    _prefixed("honeycomb-key", r"\bhcai?k_[a-z0-9]{20,}", "hca"),
    _prefixed("dynatrace-token", r"\bdt0[a-z]\d{2}\.[A-Z0-9]{24}\.[A-Z0-9]{64}", "dt0"),
    _prefixed("google-oauth", r"\b(?:ya29\.[A-Za-z0-9_-]{20,}|GOCSPX-[A-Za-z0-9_-]{20,})", "ya29.", "gocspx-"),
    _prefixed("circleci-token", r"\bCCIPAT_[A-Za-z0-9_]{20,}", "ccipat_"),
    _prefixed("buildkite-token", r"\bbkua_[0-9a-f]{40}", "bkua_"),
    _prefixed("sonar-token", r"\bsq[pua]_[0-9a-f]{40}", "sqp_", "squ_", "sqa_"),
    _prefixed("docker-token", r"\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}", "dckr_"),
    _prefixed("artifactory-key", r"\bAKCp[A-Za-z0-9]{20,}", "akcp"),
    _prefixed("crates-token", r"\bcio[A-Za-z0-9]{32}\b", "cio"),
    _prefixed("clojars-token", r"\bCLOJARS_[0-9a-f]{60}", "clojars_"),
    _prefixed("shippo-token", r"\bshippo_(?:live|test)_[0-9a-f]{40}", "shippo_"),
    _prefixed("easypost-key", r"\bEZ[AT]K[A-Za-z0-9]{20,}", "ezak", "eztk"),
    _prefixed("hubspot-token", r"\bpat-(?:na|eu)\d-[0-9a-f-]{36}", "pat-"),
    Format(  # a UUID behind its prefix: no long run of letters and digits, so it is cued like a short secret
        "launchdarkly-key",
        r"\b(?:sdk|api|mob)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        ("sdk-", "api-", "mob-"),
    ),  # noqa: E501
    _prefixed(
        "ai-provider-key",
        r"\b(?:gsk_|r8_|pplx-|xai-|fw_|pcsk_)[A-Za-z0-9_-]{20,}",
        "gsk_",
        "r8_",
        "pplx-",
        "xai-",
        "fw_",
        "pcsk_",
    ),  # noqa: E501
    _prefixed("tailscale-key", r"\btskey-[a-z]+-[A-Za-z0-9]{10,}-[A-Za-z0-9]{20,}", "tskey-"),
    _prefixed("databricks-token", r"\bdapi[0-9a-f]{32}(?:-\d)?", "dapi"),
    _prefixed("planetscale-token", r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{20,}", "pscale_"),
    _prefixed("prefect-key", r"\bpnu_[A-Za-z0-9]{36}", "pnu_"),
    _prefixed("typeform-token", r"\btfp_[A-Za-z0-9_.=-]{20,}", "tfp_"),
    _prefixed("trello-token", r"\bATTA[0-9a-f]{64}", "atta"),
    _prefixed("razorpay-key", r"\brzp_(?:live|test)_[A-Za-z0-9]{14}", "rzp_"),
    _prefixed("onepassword-token", r"\bops_eyJ[A-Za-z0-9_=-]{20,}", "ops_"),
    _prefixed("doppler-token", r"\bdp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{20,}", "dp."),
    _prefixed("contentful-token", r"\bCFPAT-[A-Za-z0-9_-]{20,}", "cfpat-"),
    _prefixed(
        "cloud-access-key",
        r"\b(?:LTAI[A-Za-z0-9]{12,30}|AKID[A-Za-z0-9]{13,40}|DO00[A-Z0-9]{16}|SCW[A-Z0-9]{17})\b",
        "ltai",
        "akid",
        "do00",
        "scw",
    ),  # noqa: E501
    _prefixed("backblaze-key", r"\bK\d{3}[A-Za-z0-9]{27}\b"),
    _prefixed("nuget-key", r"\boy2[a-z0-9]{43}\b", "oy2"),
    _prefixed("rubygems-key", r"\brubygems_[0-9a-f]{48}", "rubygems_"),
    _prefixed("square-token", r"\b(?:sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}|EAAA[A-Za-z0-9_-]{60,})", "sq0", "eaaa"),
    _prefixed("salesforce-token", r"\b00D[A-Za-z0-9]{12,15}![A-Za-z0-9_.]{20,}", "00d"),
    _prefixed("dropbox-token", r"\bsl\.[A-Za-z0-9_-]{20,}", "sl."),
    _prefixed("mapbox-token", r"\bsk\.eyJ[A-Za-z0-9_.-]{20,}", "sk.eyj"),
    _prefixed("discord-token", r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}"),
    _prefixed("webhook-url", r"\bhttps://[\w.-]*webhook\.office\.com/webhookb2/\S+", "webhook.office.com"),
    _prefixed("webhook-url", r"\bhttps://[\w.-]+\.logic\.azure\.com[:\d]*/workflows/\S+", "logic.azure.com"),
    # --- random-looking quoted strings (the entropy idea of detect-secrets, limited to quoted literals) ---------
    Format("random-string", r"[\"']([A-Za-z0-9+/=_.~-]{20,200})[\"']", (), 0, random_string, long_token=True),
)
