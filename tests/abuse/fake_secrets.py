"""Real-format FAKE secrets, generated from a seed: every one has the shape of a live credential and none is real.

Each fake carries the text an agent or a user would paste (`text`) and the random parts that must never reach the
disk or a page (`parts`): a leak of any 14-character run of a part counts, so half a secret is still a leak.
"""

from __future__ import annotations

import base64
import random
import string
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

ALNUM = string.ascii_letters + string.digits
BASE64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
DIGITS = string.digits
BASE32 = string.ascii_uppercase + "234567"
LOWER_BASE32 = string.ascii_lowercase + "234567"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
CRYPT = "./" + ALNUM  # crypt(3) hashes and salts
AZURE_SECRET = URLSAFE + ".~"  # Entra ID client secrets
OCI_TOKEN = ALNUM + "()<>{}[];:.+#-_"  # Oracle Cloud auth tokens
DJANGO = string.ascii_lowercase + string.digits + "!@#$%^&*(-_=+)"  # django's get_random_secret_key
SALESFORCE = ALNUM + "._"
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


Maker = Callable[[random.Random], tuple[str, tuple[str, ...]]]
Spec = int | tuple[int, str] | Callable[[random.Random], str]


@dataclass(frozen=True, slots=True)
class _Noise:
    """A short random stretch of the text that is not searched for (a checksum, a salt, an id). It stays shorter
    than WINDOW: a longer one could, drawn by Hypothesis as "0000...", match another fake's part after redaction, so
    longer ids are written out fixed in the template instead."""

    spec: Spec


def _gen(rng: random.Random, spec: Spec) -> str:
    if isinstance(spec, int):
        return _r(rng, spec)
    if isinstance(spec, tuple):
        return _r(rng, *spec)
    return spec(rng)


def _fmt(template: str, *specs: Spec | _Noise) -> Maker:
    """A secret whose random values fill the `{}` (or `{0}`, `{1}`...) of template in order; every value is a part
    but the _Noise ones. A spec is a length (of ALNUM), a (length, alphabet) pair or a function of the rng."""

    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        values, parts = [], []
        for spec in specs:
            value = _gen(rng, spec.spec if isinstance(spec, _Noise) else spec)
            values.append(value)
            if not isinstance(spec, _Noise):
                parts.append(value)
        return template.format(*values), tuple(parts)

    return make


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _password(n: int, alphabet: str, *required: str) -> Callable[[random.Random], str]:
    """n characters of alphabet with each required character somewhere inside (never first nor last)."""

    def make(rng: random.Random) -> str:
        chars = [rng.choice(alphabet) for _ in range(n)]
        for position, char in zip(rng.sample(range(1, n - 1), len(required)), required, strict=True):
            chars[position] = char
        return "".join(chars)

    return make


def _encoded(*pieces: tuple[str, bool], urlsafe: bool = False, pad: bool = True) -> tuple[str, tuple[str, ...]]:
    """Base64 of the joined pieces, and for each secret piece (flagged True) the stretch of the encoding that only
    its own bytes make: the encoding of fixed text around it is fixed too, so it is no part."""
    raw, spans = b"", []
    for piece, secret in pieces:
        data = piece.encode()
        if secret:
            spans.append((len(raw), len(raw) + len(data)))
        raw += data
    encoded = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(raw).decode()
    encoded = encoded if pad else encoded.rstrip("=")
    return encoded, tuple(encoded[-(-start // 3) * 4 : end // 3 * 4] for start, end in spans)


def _signed(
    rng: random.Random, header: str, *claims: tuple[str, bool], signature: int = 43
) -> tuple[str, tuple[str, ...]]:
    """A JWT: header and claims in base64url, the secret claims and the signature as parts."""
    head = base64.urlsafe_b64encode(header.encode()).decode().rstrip("=")
    payload, parts = _encoded(*claims, urlsafe=True, pad=False)
    sig = _r(rng, signature, URLSAFE)
    return f"{head}.{payload}.{sig}", (*parts, sig)


def _pem_lines(rng: random.Random, first_fixed: str, widths: tuple[int, ...]) -> tuple[list[str], tuple[str, ...]]:
    """The body lines of a PEM key whose first line opens with the fixed ASN.1 start of its kind."""
    parts = tuple(_r(rng, n, BASE64) for n in widths)
    return [first_fixed + parts[0], *parts[1:]], parts


def _pem_b64(label: str, first_fixed: str) -> Callable[[random.Random], tuple[str, tuple[str, ...]]]:
    """A PEM block as kubeconfig holds it: base64 of the whole PEM text."""

    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        body = f"{_r(rng, 64 - len(first_fixed), BASE64)}\n{_r(rng, 64, BASE64)}\n{_r(rng, 40, BASE64)}"
        return _encoded(
            (f"-----BEGIN {label}-----\n{first_fixed}", False), (body, True), (f"\n-----END {label}-----\n", False)
        )

    return make


def _supabase_service_role(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    token, parts = _signed(
        rng,
        '{"alg":"HS256","typ":"JWT"}',
        ('{"iss":"supabase","ref":"', False),
        (_r(rng, 20, string.ascii_lowercase), True),
        ('","role":"service_role","iat":1712345678,"exp":2027921678}', False),
    )
    return f"SUPABASE_SERVICE_ROLE_KEY={token}", parts


def _kubeconfig_token(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    token, parts = _signed(
        rng,
        '{"alg":"RS256","kid":"k8s-2024"}',
        (
            '{"aud":["https://kubernetes.default.svc"],"exp":1767225600,"sub":"system:serviceaccount:ci:deployer","uid":"',
            False,
        ),
        (_uuid(rng), True),
        ('"}', False),
        signature=342,
    )
    return f"users:\n- name: deployer\n  user:\n    token: {token}", parts


def _mapbox(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    claims, parts = _encoded(
        ('{"u":"acme-maps","a":"', False), (_r(rng, 25, LOWER_ALNUM), True), ('"}', False), urlsafe=True, pad=False
    )
    signature = _r(rng, 22, URLSAFE)
    return f"export MAPBOX_DOWNLOADS_TOKEN=sk.{claims}.{signature}", (*parts, signature)


def _onepassword(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    secret_key = "-".join(_r(rng, n, UPPER_ALNUM) for n in (6, 5, 5, 5, 5, 6))
    claims, parts = _encoded(
        (
            '{"signInAddress":"my.1password.com","userAuth":{"method":"SRPg-4096","alg":"PBES2g-HS256",'
            '"iterations":650000,"salt":"',
            False,
        ),
        (_r(rng, 22, URLSAFE), True),
        ('"},"email":"', False),
        ("ci-deploy-7k2", False),
        ('@1passwordserviceaccounts.com","srpX":"', False),
        (_r(rng, 64, HEX), True),
        ('","muk":{"alg":"A256GCM","ext":true,"k":"', False),
        (_r(rng, 43, URLSAFE), True),
        ('","kty":"oct","kid":"mp"},"secretKey":"A3-', False),
        (secret_key, True),
        ('","deviceUuid":"', False),
        ("q3w7xyk2mbbnhe4dzfuc5ojlra", False),
        ('"}', False),
        urlsafe=True,
        pad=False,
    )
    return f"export OP_SERVICE_ACCOUNT_TOKEN=ops_{claims}", parts


def _sentry_org_token(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    claims = (
        base64.b64encode(
            b'{"iat":1714000000.0,"url":"https://sentry.io","region_url":"https://us.sentry.io","org":"acme"}'
        )
        .decode()
        .rstrip("=")
    )
    secret = _r(rng, 43)
    return f"SENTRY_AUTH_TOKEN=sntrys_{claims}_{secret}", (secret,)


def _grafana_cloud(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    claims, parts = _encoded(
        ('{"o":"834512","n":"stack-719204-hm-read","k":"', False),
        (_r(rng, 24), True),
        ('","m":{"r":"prod-us-east-0"}}', False),
    )
    return f"export GRAFANA_CLOUD_ACCESS_POLICY_TOKEN=glc_{claims}", parts


def _intercom(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    token, parts = _encoded(("tok:", False), (_uuid(rng), True), (":1:0", False))
    return f"INTERCOM_ACCESS_TOKEN={token}", parts


def _elastic_api_key(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    key, parts = _encoded((_r(rng, 20, URLSAFE), True), (":", False), (_r(rng, 22, URLSAFE), True))
    return f'curl -H "Authorization: ApiKey {key}" https://es.acme.dev:9243/_cluster/health', parts


def _basic_header(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    credentials, parts = _encoded(("deploy:", False), (_r(rng, 20), True))
    return f"Authorization: Basic {credentials}", parts


def _k8s_secret(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    password, parts = _encoded((_r(rng, 18), True))
    token, more = _encoded((_r(rng, 30, URLSAFE), True))
    text = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n  username: YWRtaW4=\n"
        f"  password: {password}\n  api-token: {token}"
    )
    return text, (*parts, *more)


def _kubeconfig_key_data(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    data, parts = _pem_b64("RSA PRIVATE KEY", "MIIEowIBAAKCAQEA")(rng)
    return f"    client-certificate-data: LS0tLS1CRUdJTi...\n    client-key-data: {data}", parts


def _kubeconfig_certificate_data(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    data, parts = _pem_b64("CERTIFICATE", "MIIDITCCAgmgAwIBAgI")(rng)
    return f"- name: admin\n  user:\n    client-certificate-data: {data}", parts


def _gcp_service_account(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    key_id = _r(rng, 40, HEX)
    lines, parts = _pem_lines(rng, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", (32, 64, 64))
    body = "\\n".join(lines)
    text = (
        f'{{"type": "service_account", "project_id": "acme-prod", "private_key_id": "{key_id}", '
        f'"private_key": "-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----\\n", '
        '"client_email": "ci@acme-prod.iam.gserviceaccount.com"}'
    )
    return text, (key_id, *parts)


def _coinbase_cdp(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    lines, parts = _pem_lines(rng, "MHcCAQEEI", (55, 64, 36))
    body = "\\n".join(lines)
    text = (
        '{"name": "organizations/6f1c2a7e-93b4-4d58-a0e2-5b8d71c4f903/apiKeys/0d9e4b62-1a7f-4c35-8e21-c6f0a93b7d14", '
        f'"privateKey": "-----BEGIN EC PRIVATE KEY-----\\n{body}\\n-----END EC PRIVATE KEY-----\\n"}}'
    )
    return text, parts


def _ssh_key_json(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    lines, parts = _pem_lines(rng, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB", (18, 70, 70, 70))
    body = "\\n".join(lines)
    return (
        f'{{"deploy_key": "-----BEGIN OPENSSH PRIVATE KEY-----\\n{body}\\n-----END OPENSSH PRIVATE KEY-----\\n"}}',
        parts,
    )


def _putty(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    private = _r(rng, 43, BASE64)
    text = (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy@ci\nPublic-Lines: 2\n"
        "AAAAC3NzaC1lZDI1NTE5AAAAIK7Jm2vQ9xT4bYfL1pWc8sE3dRn6uZ0hGiA5oNkV\nyXtM\n"
        f"Private-Lines: 1\nAAAAI{private}\n"
        "Private-MAC: 3f9a0c7e51b24d86e0a7c3f19b5d28e4a6c0f7139e2b5d8a4c61f0e9b7a3d25c"
    )
    return text, (private,)


def _akamai_edgerc(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    secret = _r(rng, 43, BASE64)
    halves = tuple(_r(rng, 16, LOWER_ALNUM) for _ in range(4))
    host = "akab-7hq2xw5kzl3m4fjd-rc6tyb2vnp5ue7sa.luna.akamaiapis.net"
    text = (
        f"[default]\nclient_secret = {secret}=\nhost = {host}\n"
        f"access_token = akab-{halves[0]}-{halves[1]}\nclient_token = akab-{halves[2]}-{halves[3]}"
    )
    return text, (secret, *halves)


def _openvpn_static(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    lines = tuple(_r(rng, 32, HEX) for _ in range(4))
    body = "\n".join(lines)
    return f"-----BEGIN OpenVPN Static key V1-----\n{body}\n-----END OpenVPN Static key V1-----", lines


def _solana_keypair(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    numbers = ",".join(str(rng.randrange(1, 256)) for _ in range(64))
    return f"cat ~/.config/solana/id.json\n[{numbers}]", (numbers,)


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
    # --- assignment and paste forms that leaked in real use ------------------------------------------------------
    "github-token-env": _fmt("export GITHUB_TOKEN=ghs_{}", 36),
    "github-token-env-opaque": _fmt("env:\n  GITHUB_TOKEN={}\n  GH_REPO=acme/app", (40, HEX)),
    "gh-token-env": _fmt("GH_TOKEN=gho_{} gh pr list --state open", 36),
    "gh-token-env-opaque": _fmt("env GH_TOKEN={} gh release create v1.2.0", (40, HEX)),
    "npm-token-env": _fmt("NPM_TOKEN=npm_{}", 36),
    "npm-token-env-uuid": _fmt("export NPM_TOKEN={}", _uuid),
    "hf-token-env": _fmt("HF_TOKEN=hf_{} python train.py", 34),
    "hf-token-env-opaque": _fmt("HF_TOKEN={}", 37),
    "huggingface-hub-token-env": _fmt("export HUGGING_FACE_HUB_TOKEN=hf_{}", 34),
    "password-short": _fmt("password={}", (12, LOWER_ALNUM)),
    "db-pass-special": _fmt("DB_PASS={}", _password(16, ALNUM + "!#*", "$", "(")),
    "mysql-pwd-dollar": _fmt("MYSQL_PWD={} mysqldump app > app.sql", _password(14, ALNUM + "!%", "$")),
    "password-paren": _fmt("admin_password={} ./install.sh", _password(15, ALNUM + "!#", "(", ")")),
    "vault-service-token": _fmt("export VAULT_TOKEN=hvs.{}", 24),
    "vault-service-token-long": _fmt(
        'curl -H "X-Vault-Token: hvs.CAESI{}" https://vault.acme.dev/v1/kv/data/app', (90, URLSAFE)
    ),
    "vault-batch-token": _fmt("vault token lookup hvb.AAAAAQ{}", (130, URLSAFE)),
    "vault-init-output": _fmt("Unseal Key 1: {}=\n\nInitial Root Token: hvs.{}", (43, BASE64), 24),
    "digitalocean-pat": _fmt("doctl auth init --access-token dop_v1_{}", (64, HEX)),
    "digitalocean-oauth": _fmt("DIGITALOCEAN_TOKEN=doo_v1_{}", (64, HEX)),
    "linear-api": _fmt('curl -H "Authorization: lin_api_{}" https://api.linear.app/graphql', 40),
    "shopify-access-token": _fmt("X-Shopify-Access-Token: shpat_{}", (32, HEX)),
    "shopify-custom-app": _fmt("SHOPIFY_ACCESS_TOKEN=shpca_{}", (32, HEX)),
    "shopify-private-app": _fmt(
        "https://{}:shppa_{}@acme-store.myshopify.com/admin/api/2024-07/orders.json", (32, HEX), (32, HEX)
    ),
    "shopify-shared-secret": _fmt('client_secret = "shpss_{}"', (32, HEX)),
    "twilio-account": _fmt("TWILIO_ACCOUNT_SID=AC{}\nTWILIO_AUTH_TOKEN={}", (32, HEX), (32, HEX)),
    "twilio-api-key": _fmt('client = Client("SK{}", "{}", "AC5e1b9c07d4a82f36b0c7e19d4a6f2b38")', (32, HEX), 32),
    "twilio-curl": _fmt(
        "curl -X POST https://api.twilio.com/2010-04-01/Accounts/AC{0}/Messages.json -u AC{0}:{1}", (32, HEX), (32, HEX)
    ),
    "mailgun": _fmt("curl -s --user 'api:key-{}' https://api.mailgun.net/v3/mg.acme.dev/messages", (32, HEX)),
    "mailgun-v2": _fmt("MAILGUN_API_KEY={}-1f0c3e2d-9b4a7c85", (32, HEX)),
    "terraform-cloud-json": _fmt('{{"credentials": {{"app.terraform.io": {{"token": "{}.atlasv1.{}"}}}}}}', 14, 67),
    "terraform-cloud-hcl": _fmt('credentials "app.terraform.io" {{\n  token = "{}.atlasv1.{}"\n}}', 14, 67),
    "azure-sas-url": _fmt(
        "https://acmeprod.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=co&sp=rl"
        "&se=2026-01-01T00:00:00Z&st=2025-01-01T00:00:00Z&spr=https&sig={}%3D",
        43,
    ),
    "url-query-token": _fmt("https://downloads.acme.dev/artifacts/build-1842.tar.gz?token={}", 32),
    "url-query-api-key": _fmt("https://api.acme.dev/v2/forecast?q=Paris&api_key={}&units=metric", (32, HEX)),
    "url-query-access-token": _fmt(
        "https://graph.facebook.com/v19.0/me/accounts?fields=id,name&access_token=EAAG{}", 160
    ),
    "header-private-token": _fmt(
        'curl --header "PRIVATE-TOKEN: {}" https://gitlab.acme.dev/api/v4/projects', (20, URLSAFE)
    ),
    "header-x-api-key": _fmt("X-API-Key: {}", 40),
    "header-cookie-session": _fmt("Cookie: session={}; csrftoken={}; theme=dark", (32, LOWER_ALNUM), 32),
    "header-set-cookie": _fmt("Set-Cookie: __Host-session={}; Path=/; Secure; HttpOnly; SameSite=Lax", (48, URLSAFE)),
    "kubeconfig-client-key-data": _kubeconfig_key_data,
    "kubeconfig-client-certificate-data": _kubeconfig_certificate_data,
    "kubeconfig-user-token": _kubeconfig_token,
    "sshpass": _fmt("sshpass -p {} ssh deploy@10.0.4.12 uptime", (16, ALNUM + "@#%_-.+")),
    "mysql-inline-password": _fmt("mysql -u root -p{} -h 127.0.0.1 app", 16),
    "pgpassword-env": _fmt("PGPASSWORD={} psql -h db.internal -U app -d app", 20),
    "git-clone-token": _fmt("git clone https://deploy-bot:{}@github.com/acme/infra.git", (40, HEX)),
    "git-clone-x-access-token": _fmt("git clone https://x-access-token:ghs_{}@github.com/acme/app.git", 36),
    # --- vendor formats -------------------------------------------------------------------------------------------
    "github-installation": _fmt('{{"token": "ghs_{}", "expires_at": "2025-06-01T12:00:00Z"}}', 36),
    "github-refresh": _fmt("refresh_token=ghr_{}&refresh_token_expires_in=15897600&scope=", 76),
    "github-user-to-server": _fmt("Authorization: token ghu_{}", 36),
    "github-runner-registration": _fmt(
        "./config.sh --url https://github.com/acme/app --token A{} --unattended", (28, UPPER_ALNUM)
    ),
    "gitlab-runner": _fmt("gitlab-runner register --url https://gitlab.com --token glrt-{}", (20, URLSAFE)),
    "gitlab-runner-registration": _fmt(
        "gitlab-runner register --registration-token GR1348941{} --executor docker", (20, URLSAFE)
    ),
    "gitlab-deploy": _fmt("git clone https://gitlab+deploy-token-4412:gldt-{}@gitlab.com/acme/app.git", (20, URLSAFE)),
    "gitlab-feed": _fmt("https://gitlab.com/acme.atom?feed_token=glft-{}", (20, URLSAFE)),
    "gitlab-pipeline-trigger": _fmt(
        "curl -X POST --fail -F token=glptt-{} -F ref=main https://gitlab.com/api/v4/projects/42/trigger/pipeline",
        (40, HEX),
    ),
    "gitlab-oauth-secret": _fmt("GITLAB_OAUTH_APP_SECRET=gloas-{}", (64, HEX)),
    "bitbucket-app-password": _fmt("BITBUCKET_APP_PASSWORD=ATBB{}", 32),
    "atlassian-api-token": _fmt(
        "curl -u jdoe@acme.com:ATATT3xFfGF0{}={} https://acme.atlassian.net/rest/api/3/myself",
        (170, URLSAFE),
        _Noise((8, HEX.upper())),
    ),
    "jira-api-token": _fmt("JIRA_API_TOKEN={}", 24),
    "asana-pat": _fmt("ASANA_PAT=2/1204312345678901/1207654321098765:{}", (32, HEX)),
    "notion-integration": _fmt("NOTION_TOKEN=secret_{}", 43),
    "notion-ntn": _fmt('const notion = new Client({{ auth: "ntn_{}" }})', 46),
    "airtable-pat": _fmt("AIRTABLE_API_KEY=pat{}.{}", 14, (64, HEX)),
    "figma-pat": _fmt("curl -H 'X-FIGMA-TOKEN: figd_{}' https://api.figma.com/v1/me", (40, URLSAFE)),
    "postman-api-key": _fmt("postman login --with-api-key PMAK-{}-{}", (24, HEX), (34, HEX)),
    "heroku-api-key": _fmt("HEROKU_API_KEY={}", _uuid),
    "heroku-api-key-v2": _fmt("Token:       HRKU-AA{}\nUser:        jdoe@acme.com", (58, URLSAFE)),
    "netlify-pat": _fmt("netlify deploy --prod --auth nfp_{}", 36),
    "vercel-token": _fmt("vercel deploy --prod --token {}", 24),
    "flyio-token": _fmt('FLY_API_TOKEN="FlyV1 fm2_{},fm2_{}"', (180, BASE64), (120, BASE64)),
    "render-api-key": _fmt("RENDER_API_KEY=rnd_{}", 32),
    "railway-token": _fmt("RAILWAY_TOKEN={} railway up --detach", _uuid),
    "supabase-service-role": _supabase_service_role,
    "supabase-secret": _fmt("SUPABASE_SECRET_KEY=sb_secret_{}", (31, URLSAFE)),
    "supabase-pat": _fmt("supabase login --token sbp_{}", (40, HEX)),
    "firebase-fcm-server-key": _fmt("Authorization: key=AAAA{}:APA91b{}", _Noise((7, URLSAFE)), (134, URLSAFE)),
    "firebase-ci-token": _fmt('firebase deploy --only hosting --token "1//0{}"', (100, URLSAFE)),
    "google-oauth-access-token": _fmt("$ gcloud auth print-access-token\nya29.a0{}", (150, URLSAFE)),
    "cloudflare-api-token": _fmt("CLOUDFLARE_API_TOKEN={}", (40, URLSAFE)),
    "cloudflare-global-key": _fmt(
        'curl -H "X-Auth-Email: ops@acme.com" -H "X-Auth-Key: {}" https://api.cloudflare.com/client/v4/zones',
        (37, HEX),
    ),
    "cloudflare-origin-ca": _fmt("X-Auth-User-Service-Key: v1.0-{}-{}", (24, HEX), (146, HEX)),
    "fastly-api-token": _fmt('curl -H "Fastly-Key: {}" https://api.fastly.com/service', (32, URLSAFE)),
    "akamai-edgerc": _akamai_edgerc,
    "datadog-api-key": _fmt("DD_API_KEY={}", (32, HEX)),
    "datadog-app-key": _fmt(
        'curl -H "DD-API-KEY: {}" -H "DD-APPLICATION-KEY: {}" https://api.datadoghq.com/api/v1/validate',
        (32, HEX),
        (40, HEX),
    ),
    "newrelic-user-key": _fmt("NEW_RELIC_API_KEY=NRAK-{}", (27, UPPER_ALNUM)),
    "newrelic-insert-key": _fmt("X-Insert-Key: NRII-{}", (32, URLSAFE)),
    "newrelic-license-key": _fmt("common:\n  license_key: {}NRAL\n  app_name: api", (36, HEX)),
    "sentry-dsn": _fmt(
        "SENTRY_DSN=https://{}@o{}.ingest.sentry.io/{}", (32, HEX), _Noise((6, DIGITS)), _Noise((7, DIGITS))
    ),
    "sentry-org-token": _sentry_org_token,
    "sentry-user-token": _fmt("sentry-cli --auth-token sntryu_{} releases list", (64, HEX)),
    "pagerduty-api-key": _fmt(
        'curl -H "Authorization: Token token={}" https://api.pagerduty.com/incidents', (20, URLSAFE + "+")
    ),
    "pagerduty-routing-key": _fmt('{{"routing_key": "{}", "event_action": "trigger"}}', (32, HEX)),
    "opsgenie-api-key": _fmt("Authorization: GenieKey {}", _uuid),
    "grafana-cloud-token": _grafana_cloud,
    "grafana-service-account": _fmt('provider "grafana" {{\n  auth = "glsa_{}_{}"\n}}', 32, _Noise((8, HEX))),
    "honeycomb-ingest-key": _fmt('OTEL_EXPORTER_OTLP_HEADERS="x-honeycomb-team=hcaik_{}"', (58, LOWER_ALNUM)),
    "honeycomb-config-key": _fmt("X-Honeycomb-Team: {}", 22),
    "splunk-hec": _fmt(
        'curl -k https://splunk.acme.dev:8088/services/collector -H "Authorization: Splunk {}" -d @event.json', _uuid
    ),
    "elastic-api-key": _elastic_api_key,
    "algolia-admin-key": _fmt('const client = algoliasearch("{}", "{}")', _Noise((10, UPPER_ALNUM)), (32, HEX)),
    "mapbox-secret": _mapbox,
    "twitch-oauth": _fmt("PASS oauth:{}\nNICK acmebot", (30, LOWER_ALNUM)),
    "discord-bot": _fmt('client.run("MT{}.G{}.{}")', 24, _Noise((5, URLSAFE)), (38, URLSAFE)),
    "telegram-bot": _fmt(
        'curl "https://api.telegram.org/bot{}:AA{}/sendMessage?chat_id=42&text=done"',
        _Noise((10, DIGITS)),
        (33, URLSAFE),
    ),
    "slack-config-token": _fmt("xoxe.xoxp-1-{}", (150, ALNUM + "-")),
    "slack-refresh-token": _fmt("SLACK_REFRESH=xoxe-1-{}", (140, ALNUM + "-")),
    "slack-app-token": _fmt("SLACK_APP_TOKEN=xapp-1-A{}-5274195038261-{}", _Noise((10, UPPER_ALNUM)), (64, HEX)),
    "teams-webhook": _fmt(
        "https://acme.webhook.office.com/webhookb2/3c9e5f12-7a4b-4e08-b1d6-92f0c47a5e3b"
        "@8b2d6a41-0f3c-4d97-a5e8-1c7b39f06d24/IncomingWebhook/{}/e4a17c05-9d3b-4f62-8a0e-6b51d2f9c738/V2{}",
        (32, HEX),
        (43, URLSAFE),
    ),
    "power-automate-webhook": _fmt(
        "https://prod-27.westeurope.logic.azure.com:443/workflows/9f2c4e71b0a34d8e96c15b7a2e0f3d48/triggers/manual"
        "/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={}",
        (43, URLSAFE),
    ),
    "google-chat-webhook": _fmt(
        "https://chat.googleapis.com/v1/spaces/AAAA{}/messages?key=AIzaSy{}&token={}%3D",
        _Noise((7, URLSAFE)),
        (33, URLSAFE),
        (43, URLSAFE),
    ),
    "zoom-jwt-secret": _fmt("ZOOM_API_KEY=Xk3PqR7vT2mW9bN4cZ1hYd\nZOOM_API_SECRET={}", 36),
    "okta-api-token": _fmt('curl -H "Authorization: SSWS 00{}" https://acme.okta.com/api/v1/users', (40, URLSAFE)),
    "auth0-client-secret": _fmt("AUTH0_CLIENT_SECRET={}", (64, URLSAFE)),
    "azure-ad-client-secret": _fmt("AZURE_CLIENT_SECRET={}8Q~{}", _Noise(3), (34, AZURE_SECRET)),
    "azure-sp-login": _fmt(
        "az login --service-principal -u 1b7e4c92-5a0d-4f38-9e61-c2d8a7f05b34 -p {}8Q~{}"
        " --tenant 7d3a9e05-2c6f-4b81-a4d7-0e9f51b6c283",
        _Noise(3),
        (34, AZURE_SECRET),
    ),
    "azure-devops-pat": _fmt("AZURE_DEVOPS_EXT_PAT={}", (52, LOWER_BASE32)),
    "azure-openai-key": _fmt(
        'curl "https://acme.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-06-01" '
        '-H "api-key: {}"',
        (32, HEX),
    ),
    "gcp-service-account-json": _gcp_service_account,
    "gcp-oauth-client-secret": _fmt(
        '{{"installed": {{"client_id": "482915736024-k7q2m9vx4c1b8n3d6f0h5j2p7s9t4w1r.apps.googleusercontent.com", '
        '"client_secret": "GOCSPX-{}"}}}}',
        (28, URLSAFE),
    ),
    "alibaba-access-key": _fmt("ALIBABA_CLOUD_ACCESS_KEY_ID=LTAI{}\nALIBABA_CLOUD_ACCESS_KEY_SECRET={}", 20, 30),
    "tencent-secret": _fmt("TENCENTCLOUD_SECRET_ID=AKID{}\nTENCENTCLOUD_SECRET_KEY={}", 32, 32),
    "ibm-cloud-api-key": _fmt("ibmcloud login --apikey {} -r us-south", (44, URLSAFE)),
    "oracle-auth-token": _fmt(
        "docker login fra.ocir.io -u 'acme/oracleidentitycloudservice/jdoe@acme.com' -p '{}'", (20, OCI_TOKEN)
    ),
    "digitalocean-spaces": _fmt(
        "SPACES_ACCESS_KEY_ID=DO00{}\nSPACES_SECRET_ACCESS_KEY={}", (16, UPPER_ALNUM), (43, BASE64)
    ),
    "linode-cli-config": _fmt("[DEFAULT]\ndefault-user = acme\n\n[acme]\ntoken = {}\nregion = eu-central", (64, HEX)),
    "vultr-api-key": _fmt("VULTR_API_KEY={}", (36, UPPER_ALNUM)),
    "hetzner-token": _fmt("HCLOUD_TOKEN={} hcloud server list", 64),
    "scaleway-keys": _fmt("SCW_ACCESS_KEY=SCW{}\nSCW_SECRET_KEY={}", (17, UPPER_ALNUM), _uuid),
    "backblaze-b2": _fmt("b2 account authorize 005{} K005{}", (22, HEX), 27),
    "wasabi-credentials": _fmt(
        "[wasabi]\naws_access_key_id = {}\naws_secret_access_key = {}", (20, UPPER_ALNUM), (40, BASE64)
    ),
    "cloudinary-url": _fmt("CLOUDINARY_URL=cloudinary://739184526301847:{}@acme", (27, URLSAFE)),
    "contentful-cma": _fmt("contentful login --management-token CFPAT-{}", (43, URLSAFE)),
    "doppler-personal": _fmt("DOPPLER_TOKEN=dp.pt.{}", 43),
    "doppler-service": _fmt("doppler run --token dp.st.prd.{} -- ./start.sh", 40),
    "onepassword-service-account": _onepassword,
    "pulumi-token": _fmt("PULUMI_ACCESS_TOKEN=pul-{}", (40, HEX)),
    "circleci-pat": _fmt('curl -H "Circle-Token: CCIPAT_{}_{}" https://circleci.com/api/v2/me', 22, (40, HEX)),
    "travis-token": _fmt(
        'curl -H "Travis-API-Version: 3" -H "Authorization: token {}" https://api.travis-ci.com/user', (22, URLSAFE)
    ),
    "buildkite-api": _fmt("BUILDKITE_API_TOKEN=bkua_{}", (40, HEX)),
    "buildkite-agent": _fmt('# buildkite-agent.cfg\ntoken="{}"\nname="%hostname-%spawn"', (50, LOWER_ALNUM)),
    "codecov-token": _fmt("codecov upload-process -t {} -f coverage.xml", _uuid),
    "sonarqube-project": _fmt("mvn verify sonar:sonar -Dsonar.token=sqp_{}", (40, HEX)),
    "sonarqube-user": _fmt("SONAR_TOKEN=squ_{}", (40, HEX)),
    "sonarqube-global": _fmt("sonar.host.url=https://sonar.acme.dev\nsonar.login=sqa_{}", (40, HEX)),
    "snyk-token": _fmt("snyk auth {}", _uuid),
    "docker-hub-pat": _fmt('echo "dckr_pat_{}" | docker login -u acme --password-stdin', (27, URLSAFE)),
    "artifactory-api-key": _fmt(
        'curl -H "X-JFrog-Art-Api: AKCp{}" https://acme.jfrog.io/artifactory/api/repositories', 69
    ),
    "jfrog-reference-token": _fmt("jf config add acme --url https://acme.jfrog.io --access-token cmVmdGtuOjAxOj{}", 50),
    "nuget-api-key": _fmt(
        "dotnet nuget push Acme.Core.1.2.0.nupkg --api-key oy2{} --source https://api.nuget.org/v3/index.json",
        (43, LOWER_ALNUM),
    ),
    "rubygems-api-key": _fmt("---\n:rubygems_api_key: rubygems_{}", (48, HEX)),
    "crates-io-token": _fmt("cargo login cio{}", 32),
    "clojars-token": _fmt(
        '{{:auth {{:repository-auth {{#"clojars" {{:username "jdoe" :password "CLOJARS_{}"}}}}}}}}', (60, HEX)
    ),
    "pypirc": _fmt(
        "[distutils]\nindex-servers = pypi\n\n[pypi]\n  username = __token__\n  password = pypi-AgEIcHlwaS5vcmc{}",
        (150, URLSAFE),
    ),
    "composer-auth-json": _fmt(
        '{{"github-oauth": {{"github.com": "ghp_{}"}}, '
        '"http-basic": {{"repo.packagist.com": {{"username": "token", "password": "{}"}}}}}}',
        36,
        (40, HEX),
    ),
    "stripe-test-long": _fmt('stripe.api_key = "sk_test_51{}"', 97),
    "square-access-token": _fmt("SQUARE_ACCESS_TOKEN=EAAA{}", (60, URLSAFE)),
    "square-oauth-token": _fmt(
        'curl -H "Authorization: Bearer sq0atp-{}" https://connect.squareup.com/v2/locations', (22, URLSAFE)
    ),
    "square-oauth-secret": _fmt("square_application_secret: sq0csp-{}", (43, URLSAFE)),
    "braintree-access-token": _fmt(
        "gateway = braintree.BraintreeGateway(access_token='access_token$production${}${}')",
        (16, LOWER_ALNUM),
        (32, HEX),
    ),
    "paypal-client-secret": _fmt("PAYPAL_MODE=live\nPAYPAL_CLIENT_SECRET=E{}", (79, URLSAFE)),
    "adyen-api-key": _fmt("ADYEN_API_KEY=AQE{}==-{}=-{}", (100, BASE64), (43, BASE64), (16, ALNUM)),
    "plaid-secret": _fmt("PLAID_CLIENT_ID=5f2c9a71e04b3d86c1a7e925\nPLAID_SECRET={}", (30, HEX)),
    "plaid-access-token": _fmt(
        '{{"access_token": "access-production-{}", "item_id": "eVBnVMp7zdTJLkRNr33Rs6zr7KNJqBFL9DrE6"}}', _uuid
    ),
    "coinbase-cdp-key": _coinbase_cdp,
    "shippo-token": _fmt("Authorization: ShippoToken shippo_live_{}", (40, HEX)),
    "easypost-key": _fmt("client = EasyPost::Client.new(api_key: 'EZAK{}')", 54),
    "sendgrid-env": lambda rng: _two("export SENDGRID_API_KEY=SG.{}.{}", rng, (22, 43)),
    "sendgrid-smtp-url": lambda rng: _two("smtp://apikey:SG.{}.{}@smtp.sendgrid.net:587", rng, (22, 43)),
    "mailchimp-key": _fmt("curl --url 'https://us20.api.mailchimp.com/3.0/' --user 'anystring:{}-us20'", (32, HEX)),
    "postmark-server-token": _fmt("X-Postmark-Server-Token: {}", _uuid),
    "sparkpost-key": _fmt('curl -H "Authorization: {}" https://api.sparkpost.com/api/v1/transmissions', (40, HEX)),
    "mandrill-key": _fmt("MANDRILL_API_KEY=md-{}", (22, URLSAFE)),
    "intercom-token": _intercom,
    "zendesk-token": _fmt("curl https://acme.zendesk.com/api/v2/tickets.json -u jdoe@acme.com/token:{}", 40),
    "hubspot-pat": _fmt('const hubspotClient = new hubspot.Client({{ accessToken: "pat-na1-{}" }})', _uuid),
    "salesforce-access-token": _fmt(
        "Access Token     00D{}!{}\nInstance Url     https://acme.my.salesforce.com", 12, (96, SALESFORCE)
    ),
    "segment-write-key": _fmt('analytics.write_key = "{}"', 32),
    "sourcegraph-token": _fmt("SRC_ACCESS_TOKEN=sgp_5f3e8c1a9b7d2e40_{}", (40, HEX)),
    "mixpanel-service-account": _fmt(
        'curl -u "ci-export.a1b2c3.mp-service-account:{}" https://mixpanel.com/api/app/me', 32
    ),
    "amplitude-secret": _fmt("AMPLITUDE_API_KEY=0c7a3e9f51d24b86a0e7c3195f2d8b4a\nAMPLITUDE_SECRET_KEY={}", (32, HEX)),
    "launchdarkly-sdk-key": _fmt("LD_SDK_KEY=sdk-{}", _uuid),
    "launchdarkly-api-key": _fmt(
        'curl -H "Authorization: api-{}" https://app.launchdarkly.com/api/v2/flags/default', _uuid
    ),
    "optimizely-token": _fmt("OPTIMIZELY_API_TOKEN=2:{}", (43, URLSAFE)),
    "openai-admin": _fmt("OPENAI_ADMIN_KEY=sk-admin-{}", (100, URLSAFE)),
    "openai-service-account": _fmt("sk-svcacct-{}", (130, URLSAFE)),
    "groq": _fmt('client = Groq(api_key="gsk_{}")', 52),
    "mistral": _fmt("MISTRAL_API_KEY={}", 32),
    "cohere": _fmt('co = cohere.Client("{}")', 40),
    "replicate": _fmt("export REPLICATE_API_TOKEN=r8_{}", 37),
    "perplexity": _fmt("PPLX_API_KEY=pplx-{}", 48),
    "xai": _fmt("XAI_API_KEY=xai-{}", 80),
    "deepseek": _fmt("DEEPSEEK_API_KEY=sk-{}", (32, HEX)),
    "together": _fmt("TOGETHER_API_KEY=tgp_v1_{}", (43, URLSAFE)),
    "fireworks": _fmt("FIREWORKS_API_KEY=fw_{}", 24),
    "pinecone": _fmt('pc = Pinecone(api_key="pcsk_{}_{}")', _Noise(5), 64),
    "weaviate": _fmt(
        'client = weaviate.connect_to_weaviate_cloud(cluster_url=URL, auth_credentials=Auth.api_key("{}"))', 40
    ),
    "age-secret-key": _fmt(
        "# created: 2024-05-01T10:00:00Z\n# public key: age1x7k3m9p2q5w8r4t6y0u3e7n2v5c8z4l6j9h3g7f2d5s8a4k7mhqrw\n"
        "AGE-SECRET-KEY-1{}",
        (58, BECH32.upper()),
    ),
    "ssh-key-escaped-json": _ssh_key_json,
    "putty-private-key": _putty,
    "htpasswd-apr1": _fmt("admin:$apr1${}${}", _Noise((8, CRYPT)), (22, CRYPT)),
    "htpasswd-bcrypt": _fmt("deploy:$2y$05${}", (53, CRYPT)),
    "shadow-sha512": _fmt("root:$6$Zq8.vN3xR7kLw2Ty${}:19876:0:99999:7:::", (86, CRYPT)),
    "netrc-multiline": _fmt("machine api.heroku.com\n  login jdoe@acme.com\n  password {}", _uuid),
    "netrc-oneline": _fmt("machine github.com login octocat password {}", (40, HEX)),
    "pgpass": _fmt("db.internal:5432:app:app_user:{}", 20),
    "keystore-properties": _fmt("keystore.path=/etc/app/keystore.jks\nkeystore.password={}\nkey.password={}", 16, 16),
    "jvm-truststore-flag": _fmt("java -Djavax.net.ssl.trustStorePassword={} -jar app.jar", 16),
    "spring-datasource-password": _fmt("spring.datasource.username=app\nspring.datasource.password={}", 20),
    "jdbc-url-password": _fmt("spring.datasource.url=jdbc:postgresql://db:5432/app?user=app&password={}", 20),
    "rails-secret-key-base": _fmt("production:\n  secret_key_base: {}", (128, HEX)),
    "rails-master-key": _fmt("RAILS_MASTER_KEY={}", (32, HEX)),
    "django-secret-key": _fmt("SECRET_KEY = 'django-insecure-{}'", (50, DJANGO)),
    "laravel-app-key": _fmt("APP_KEY=base64:{}=", (43, BASE64)),
    "jwt-secret-env": _fmt("JWT_SECRET={}", (64, HEX)),
    "pip-index-url": _fmt("pip install --index-url https://deploy:{}@pypi.acme.dev/simple acme-core", 24),
    "env-secret-suffix": _fmt("NEXTAUTH_SECRET={}", (43, BASE64)),
    "env-private-key-suffix": _fmt("WALLET_PRIVATE_KEY=0x{}", (64, HEX)),
    "totp-seed": _fmt("otpauth://totp/Acme:jdoe@acme.com?secret={}&issuer=Acme", (32, BASE32)),
    # --- more pastes: configs, command lines, key files ----------------------------------------------------------
    "aws-credentials-file": _fmt(
        "[default]\naws_access_key_id = AKIA{}\naws_secret_access_key = {}", (16, BASE32), (40, BASE64)
    ),
    "aws-session-token-env": _fmt("export AWS_SESSION_TOKEN=IQoJb3JpZ2luX2VjE{}", (280, BASE64)),
    "basic-auth-header": _basic_header,
    "header-x-auth-token": _fmt("X-Auth-Token: {}", (32, HEX)),
    "k8s-secret-manifest": _k8s_secret,
    "ngrok-authtoken": _fmt("ngrok config add-authtoken 2{}_{}", 26, 22),
    "tailscale-auth-key": _fmt("tailscale up --authkey tskey-auth-k{}CNTRL-{}", _Noise(10), 33),
    "dynatrace-token": _fmt("Authorization: Api-Token dt0c01.{}.{}", (24, UPPER_ALNUM), (64, UPPER_ALNUM)),
    "databricks-cfg": _fmt(
        "[DEFAULT]\nhost = https://adb-1234567890.12.azuredatabricks.net\ntoken = dapi{}", (32, HEX)
    ),
    "planetscale-token": _fmt("PLANETSCALE_SERVICE_TOKEN=pscale_tkn_{}", (43, URLSAFE)),
    "planetscale-password-url": _fmt(
        "mysql://app:pscale_pw_{}@aws.connect.psdb.cloud/app?sslaccept=strict", (43, URLSAFE)
    ),
    "prefect-api-key": _fmt("prefect cloud login -k pnu_{}", 36),
    "typeform-token": _fmt("TYPEFORM_TOKEN=tfp_{}_{}", (44, URLSAFE), (14, URLSAFE)),
    "jenkins-api-token": _fmt(
        "java -jar jenkins-cli.jar -s https://ci.acme.dev/ -auth admin:11{} build deploy", (32, HEX)
    ),
    "harness-pat": _fmt("harness login --api-key pat.kmpySmUISimoRrJL6NL73w.6741f2a0c9b83e5d17a4f0c2.{}", 20),
    "octopus-api-key": _fmt("X-Octopus-ApiKey: API-{}", (26, UPPER_ALNUM)),
    "resend-api-key": _fmt('resend.api_key = "re_{}_{}"', _Noise(8), 24),
    "upstash-rest-token": _fmt('UPSTASH_REDIS_REST_TOKEN="A{}"', (70, URLSAFE)),
    "pusher-secret": _fmt(
        'pusher = Pusher(app_id="{}", key="7c2e9a41f0b35d8e6a17", secret="{}", cluster="eu")',
        _Noise((7, DIGITS)),
        (20, HEX),
    ),
    "brevo-api-key": _fmt("api-key: xkeysib-{}-{}", (64, HEX), (16, ALNUM)),
    "dropbox-token": _fmt('dbx = dropbox.Dropbox("sl.{}")', (140, URLSAFE)),
    "twitter-api-secret": _fmt(
        'auth = tweepy.OAuth1UserHandler(\n    consumer_key="{}",\n    consumer_secret="{}",\n)', 25, 50
    ),
    "vonage-secret": _fmt('client = Vonage(Auth(api_key="{}", api_secret="{}"))', _Noise((8, HEX)), 16),
    "messagebird-key": _fmt("Authorization: AccessKey {}", 25),
    "clickup-token": _fmt("Authorization: pk_{}_{}", _Noise((8, DIGITS)), (32, UPPER_ALNUM)),
    "trello-token": _fmt(
        "https://api.trello.com/1/members/me/boards?key={}&token=ATTA{}{}", (32, HEX), (64, HEX), _Noise((8, HEX))
    ),
    "flutterwave-secret": _fmt("FLW_SECRET_KEY=FLWSECK-{}-X", (32, HEX)),
    "razorpay-keys": _fmt('client = razorpay.Client(auth=("rzp_live_{}", "{}"))', 14, 24),
    "duffel-token": _fmt("DUFFEL_ACCESS_TOKEN=duffel_live_{}", (43, URLSAFE)),
    "consul-token": _fmt("CONSUL_HTTP_TOKEN={}", _uuid),
    "docker-run-env-password": _fmt("docker run -d -e POSTGRES_PASSWORD={} -p 5432:5432 postgres:16", 20),
    "helm-set-password": _fmt("helm upgrade --install api ./chart --set db.password={} --set image.tag=1.4.2", 20),
    "terraform-var-password": _fmt('terraform apply -var="db_password={}" -auto-approve', 20),
    "git-credentials-file": _fmt("https://jdoe:{}@github.com", 40),
    "wget-http-password": _fmt("wget --http-user=admin --http-password={} https://files.acme.dev/backup.tar.gz", 20),
    "redis-cli-auth": _fmt("redis-cli -h cache.internal -a {} --no-auth-warning INFO", 24),
    "mongosh-password": _fmt("mongosh --host db.internal -u admin -p {} --authenticationDatabase admin", 20),
    "psql-conninfo": _fmt('psql "host=db.internal port=5432 dbname=app user=app password={} sslmode=require"', 20),
    "sqlcmd-password": _fmt('sqlcmd -S tcp:db.internal,1433 -U sa -P {} -Q "SELECT 1"', 20),
    "openssl-passout": _fmt("openssl pkcs12 -export -in cert.pem -inkey key.pem -out bundle.p12 -passout pass:{}", 16),
    "smbclient-password": _fmt("smbclient //fs01/backups -U acme/svc_backup%{}", 16),
    "gpg-passphrase": _fmt("gpg --batch --pinentry-mode loopback --passphrase {} --decrypt secrets.gpg", 20),
    "npmrc-authtoken": _fmt("//registry.npmjs.org/:_authToken={}", _uuid),
    "yarnrc-token": _fmt('npmRegistries:\n  "https://npm.pkg.github.com":\n    npmAuthToken: "{}"', (40, HEX)),
    "poetry-pypi-token": _fmt("POETRY_PYPI_TOKEN_PYPI=pypi-AgEIcHlwaS5vcmc{}", (120, URLSAFE)),
    "poetry-http-basic": _fmt("poetry config http-basic.acme deploy {}", 24),
    "maven-settings": _fmt(
        "<server>\n  <id>acme-releases</id>\n  <username>deploy</username>\n  <password>{}</password>\n</server>", 20
    ),
    "nuget-config": _fmt(
        '<packageSourceCredentials>\n  <acme>\n    <add key="Username" value="deploy" />\n'
        '    <add key="ClearTextPassword" value="{}" />\n  </acme>\n</packageSourceCredentials>',
        40,
    ),
    "gradle-signing": _fmt(
        'signingConfigs {{\n    release {{\n        storePassword "{}"\n        keyPassword "{}"\n    }}\n}}', 16, 16
    ),
    "ansible-inventory-pass": _fmt(
        "web1 ansible_host=10.0.0.5 ansible_user=deploy ansible_ssh_pass={} ansible_become_pass={}", 16, 16
    ),
    "redis-conf-requirepass": _fmt("bind 0.0.0.0\nrequirepass {}\nmaxmemory 2gb", 24),
    "mysql-identified-by": _fmt("CREATE USER 'app'@'%' IDENTIFIED BY '{}';", 20),
    "postgres-alter-user": _fmt("ALTER USER app WITH PASSWORD '{}';", 20),
    "mongo-create-user": _fmt('db.createUser({{user: "app", pwd: "{}", roles: ["readWrite"]}})', 20),
    "kafka-jaas": _fmt(
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="{}" password="{}";',
        (16, UPPER_ALNUM),
        (64, BASE64),
    ),
    "snowsql-pwd": _fmt("SNOWSQL_PWD={} snowsql -a acme-xy12345 -u etl", 20),
    "jupyter-token-url": _fmt("    http://127.0.0.1:8888/lab?token={}", (48, HEX)),
    "wpa-supplicant-psk": _fmt('network={{\n    ssid="AcmeCorp"\n    psk="{}"\n}}', 16),
    "wireguard-private-key": _fmt("[Interface]\nPrivateKey = {}=\nAddress = 10.8.0.2/32\nDNS = 1.1.1.1", (43, BASE64)),
    "openvpn-static-key": _openvpn_static,
    "bitcoin-wif": _fmt('bitcoin-cli importprivkey L{} "cold-storage" false', (51, BASE58)),
    "solana-keypair": _solana_keypair,
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
    """Hypothesis: a fake secret of any kind, its characters drawn by a seeded generator.

    Not `st.randoms()`: hypothesis shrinks its choices to the first of each alphabet, and a vendor never issues
    `aaaaaaaaaaaaaaaa` (redaction leaves such placeholders alone on purpose); the kind and the seed still vary.
    """
    return st.builds(make_secret, st.sampled_from(KINDS), st.integers(0, 2**32 - 1).map(random.Random))


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
