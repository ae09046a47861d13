"""Secrets recognised by their shape become `[redacted]`; ordinary text is left alone.

One case (at least) per shape in `SECRET_SHAPES`, and ordinary text of the kinds that
look closest to secrets: hashes, ids, prose about passwords and tokens, and code.
"""

from __future__ import annotations

import json

import pytest

from app.observability.redaction import redact_secret_shapes
from app.observability.secret_shapes import SECRET_SHAPES

SLACK_BOT = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2bN4bb5vQc2Z3h0nH0t5yRkzQw7E\n"
    "q9iQq3o4z6m0Yqk1mDxv1P3nJjT1o4Y2cC3f1qZk0z2X3v9fLQ==\n"
    "-----END RSA PRIVATE KEY-----"
)
GITHUB_PAT = "ghp_" + "A1b2C3d4" * 4 + "E5f6"
GITHUB_FINE_GRAINED = "github_pat_11ABCDEFG0123456789_" + "aBcD0123" * 7
STRIPE_LIVE = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
AZURE_ACCOUNT_KEY = (
    "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw=="
)
SERVICE_ACCOUNT = json.dumps(
    {
        "type": "service_account",
        "private_key_id": "0123456789abcdef",
        "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n"
        "BKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n",
        "client_email": "orion@project.iam.gserviceaccount.com",
    }
)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (f"my token is {SLACK_BOT}, use it", "my token is [redacted], use it"),
        ("user token xoxp-1111111111-2222222222-333333333333-abcdef", "user token [redacted]"),
        ("rotated xoxe.xoxp-1-Mi0yLTExMTExMTExMTEtMjIyMg", "rotated [redacted]"),
        ("app token xapp-1-A0123456789-1234567890123-abcdef0123", "app token [redacted]"),
        ("ANTHROPIC_API_KEY=sk-ant-api03-AbCdEf0123456789_-AbCdEf", "ANTHROPIC_API_KEY=[redacted]"),
        ("openai: sk-proj-abcDEF123ghiJKL456mnoPQR789stu", "openai: [redacted]"),
        ("legacy sk-abcdefghijklmnopqrstuvwx0123456789ABCDEFGHIJKLMN", "legacy [redacted]"),
        ("key AKIAIOSFODNN7EXAMPLE in us-east-1", "key [redacted] in us-east-1"),
        ("temporary ASIAY34FZKBOKMUTVV7A", "temporary [redacted]"),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = [redacted]",
        ),
        ("maps key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "maps key [redacted]"),
        (
            "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0",
            "Bearer [redacted]",
        ),
        (f"the deploy key:\n{PEM}\nkeep it safe", "the deploy key:\n[redacted]\nkeep it safe"),
        (
            "cut off: -----BEGIN OPENSSH PRIVATE KEY-----\n"
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
            "and then the person went on talking.",
            "cut off: [redacted]\nand then the person went on talking.",
        ),
        ("password: hunter2", "password: [redacted]"),
        ("The password: hunter2. Then more.", "The password: [redacted]. Then more."),
        ("Password=hunter2 for the staging db", "Password=[redacted] for the staging db"),
        ('DB_PASSWORD="correct horse" next', 'DB_PASSWORD="[redacted]" next'),
        ("**Password:** hunter2", "**Password:** [redacted]"),
        ("passphrase=opensesame", "passphrase=[redacted]"),
        # github_token, github_fine_grained_token
        (f"export GH_TOKEN={GITHUB_PAT}", "export GH_TOKEN=[redacted]"),
        (f"oauth {GITHUB_PAT.replace('ghp_', 'gho_')} here", "oauth [redacted] here"),
        (f"app token {GITHUB_PAT.replace('ghp_', 'ghs_')}.", "app token [redacted]."),
        (f"fine-grained: {GITHUB_FINE_GRAINED}", "fine-grained: [redacted]"),
        # gitlab_token
        ("glpat-AbCdEfGhIj0123456789 is mine", "[redacted] is mine"),
        ("deploy gldt-AbCdEfGhIj0123456789xyz", "deploy [redacted]"),
        ("routable glpat-AbCdEfGhIj0123456789.01.1a2b3c4d5 ok", "routable [redacted] ok"),
        # stripe_key
        (f"STRIPE_KEY={STRIPE_LIVE}", "STRIPE_KEY=[redacted]"),
        ("restricted rk_live_51H8abcDEFghiJKLmnoPQR", "restricted [redacted]"),
        ("test mode sk_test_51H8abcDEFghiJKLmnoPQR", "test mode [redacted]"),
        ("webhook whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "webhook [redacted]"),
        # slack_webhook_url
        (
            "post to https://hooks.slack.com/services/T0001ABCD/B0002EFGH/XyZ123abcDEF456ghiJKL789",
            "post to https://hooks.slack.com/services/[redacted]",
        ),
        (
            "https://hooks.slack.com/workflows/T0001ABCD/A0003/4567/AbCdEf0123456789",
            "https://hooks.slack.com/workflows/[redacted]",
        ),
        # url_password
        (
            "DATABASE_URL=postgres://orion:s3cr3t-pw@db.internal:5432/orion",
            "DATABASE_URL=postgres://orion:[redacted]@db.internal:5432/orion",
        ),
        (
            "clone https://bob:p@ss:w0rd@git.example.com/x",
            "clone https://bob:[redacted]@git.example.com/x",
        ),
        ("redis://:hunter2@cache:6379/0", "redis://:[redacted]@cache:6379/0"),
        # bearer_token
        (
            "Authorization: Bearer 8f3a2b1c9d7e6f5a4b3c2d1e",
            "Authorization: Bearer [redacted]",
        ),
        (
            "curl -H 'authorization: bearer ya29.a0AfH6SMBx-3kq_Zt9'",
            "curl -H 'authorization: bearer [redacted]'",
        ),
        # basic_auth
        ("Authorization: Basic b3Jpb246aHVudGVyMi1zdGFnaW5n", "Authorization: Basic [redacted]"),
        # gcp_api_key (Google API keys)
        ("GOOGLE_API_KEY=AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "GOOGLE_API_KEY=[redacted]"),
        # azure_account_key
        (
            f"DefaultEndpointsProtocol=https;AccountName=orion;AccountKey={AZURE_ACCOUNT_KEY};"
            "EndpointSuffix=core.windows.net",
            "DefaultEndpointsProtocol=https;AccountName=orion;AccountKey=[redacted];"
            "EndpointSuffix=core.windows.net",
        ),
        (
            "Endpoint=sb://orion.servicebus.windows.net/;SharedAccessKeyName=Root;"
            "SharedAccessKey=k9Ae1UPD8ILPZIo2LaLaSwMfKQ9r8GKYqrTwj+Y=",
            "Endpoint=sb://orion.servicebus.windows.net/;SharedAccessKeyName=Root;"
            "SharedAccessKey=[redacted]",
        ),
        # azure_sas_signature
        (
            "https://orion.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r"
            "&se=2026-12-01T00:00:00Z&sig=a1B2c3D4e5F6g7H8i9J0kLmN%2BoPqRsTuV%2FwXyZ%3D&spr=https",
            "https://orion.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r"
            "&se=2026-12-01T00:00:00Z&sig=[redacted]&spr=https",
        ),
        # password, credential: labelled values
        ("MYSQL_PWD=hunter2 mysql -u root", "MYSQL_PWD=[redacted] mysql -u root"),
        ("pwd: Tr0ub4dor&3", "pwd: [redacted]"),
        ("api_key: 9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d", "api_key: [redacted]"),
        ("X-Api-Key: 0123abcd4567efgh", "X-Api-Key: [redacted]"),
        ('{"apiKey": "live-4f9a2c"}', '{"apiKey": "[redacted]"}'),
        ("secret: correct-horse-battery-staple", "secret: [redacted]"),
        ("client_secret=GOCSPX-1a2b3c4d5e6f", "client_secret=[redacted]"),
        ("SECRET_KEY = 'django-insecure-9x!z'", "SECRET_KEY = '[redacted]'"),
        ("access_token=ya29.a0AfH6SMBx&expires_in=3599", "access_token=[redacted]"),
        ("refresh-token: 1//0gAbCdEf", "refresh-token: [redacted]"),
        ('password := "go-lang-secret"', 'password := "[redacted]"'),
        # private_key: split across lines, odd white space
        (
            "key:\n-----BEGIN RSA PRIVATE\nKEY-----\r\n  MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM\r\n"
            "  q9iQq3o4z6m0Yqk1mDxv1P3nJjT1\r\n-----END RSA PRIVATE KEY-----\r\nthanks",
            "key:\n[redacted]\r\nthanks",
        ),
        (
            "----- BEGIN  PRIVATE KEY ----- MIIEvQIBADANBgkqhkiG9w0BAQEFAASC "
            "BKcwggSjAgEAAoIBAQC7 ----- END  PRIVATE KEY ----- and more",
            "[redacted] and more",
        ),
        (
            "pasted on one line: -----BEGIN OPENSSH PRIVATE KEY----- "
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ AAAAAAAAAAEAAAAzAAAAC3NzaC1lZDI1 (cut)",
            "pasted on one line: [redacted] (cut)",
        ),
    ],
)
def test_each_kind_of_secret_is_redacted(text: str, kept: str) -> None:
    assert redact_secret_shapes(text) == kept


@pytest.mark.parametrize(
    "text",
    [
        "We discussed the password reset flow and the passwords policy.",
        "The password policy: 12 characters at least.",
        "Passwords: none stored here.",
        "password:\nthe next line is not a value",
        "A bot token starts with xoxb- and an app token with xapp-.",
        "Our task-abcdefghijklmnopqrstuvwxyz0123 and risk-free desk-booking-system-v2 plans.",
        "The sk-learn-style-library-name-here is just a name.",
        "AKIA is how AWS access key ids start; ASIA for temporary ones.",
        "A JWT looks like eyJ... dot eyJ... dot signature.",
        "Café ☕, naïve 🙂, a Q3 budget of $20,000 and ticket PAY-1234.",
        "",
        # hashes and ids
        "Fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (short: 9fceb02).",
        "Request 123e4567-e89b-12d3-a456-426614174000, trace 4bf92f3577b34da6a3ce929d0e0e4736",
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        # prose about secrets, with no value
        "Please reset my password, I forgot it again.",
        "What makes a good password? Length, mostly.",
        "The secret to good soup is time: let it simmer.",
        "Bearer tokens expire after an hour; Basic authentication is deprecated.",
        "Use the API key from the vault, and rotate your tokens: see the runbook.",
        "A GitHub token starts with ghp_ and a GitLab one with glpat-.",
        "Stripe keys look like sk_live_... and webhooks post to hooks.slack.com/services/...",
        "Lunch at the glass house, then ghost-writing the sig=1 report.",
        # URLs without passwords
        "See https://example.com:8443/path?q=1&sig=abc and ssh://git@github.com:22/org/repo.git",
        "https://github.com/org/repo/blob/main/app.py#L10 and http://[::1]:8080/healthz",
        # code
        "def login(user: str, password: str) -> bool:\n    return check(user, password)",
        'password = os.environ["DB_PASSWORD"]\napi_key = settings.api_key',
        "conn = connect(user=user, password=password, secret=secret)",
        "const secret = process.env.SECRET;\nlet pwd = getPwd();",
        'headers = {"Authorization": f"Bearer {token}"}\nurl = f"postgres://{user}:{password}@{host}/db"',
        'print("password: %s" % masked)\nlog(f"api_key={api_key}")',
        "password: Optional[str] = None\nsecret_key: SecretStr",
        "if not password: raise ValueError('password required')",
        # labels and prefixes without a secret after them
        "The token: expired yesterday, so the job failed; tokens: none left.",
        "hf_hub_download(repo_id) and npm_config_cache, SG. Lee's npm_ prefix notes.",
        "Vault tokens start with hvs. and Shopify ones with shpat_; Atlassian with ATATT.",
        "パスワードを忘れました。密码是什么？비밀번호를 잊어버렸어요.",
        "Das Passwort ist zu kurz; le mot de passe expire; la contraseña caducó.",
        # sentences about a password, a PIN or a card that hold none
        "My password is expired and the password length is 12 characters.",
        "The password for the demo account is the usual one; mon mot de passe est oublié.",
        "The output of pwd is /home/sam, and the PIN codes are four digits long.",
        "Pin the 3 messages, spin up the pinned board; xoxo, Sam. xoxo-love-you-all",
        "Order 4111 1111 1111 1112 and epoch 1712345678123, ts 1712345678.123456.",
        "IBAN-less invoice 2024-0001-0002; call +33 6 12 34 56 78 or 555-0100.",
        "My seed phrase is safe in the drawer; a key-value store; login with your password.",
        "curl -u sam https://api.example.com and docker login --password-stdin",
        "DB_PASSWORD=$DB_PASSWORD, password: ${SECRET}, pass=$(cat pw.txt), pw: $dbPassword",
        "WIFI: the office one; the mnemonic device helps.",
    ],
)
def test_ordinary_text_comes_back_unchanged(text: str) -> None:
    assert redact_secret_shapes(text) is text


def test_json_stays_json_and_keeps_everything_else() -> None:
    preferences = json.dumps({"name": "Sam", "password": 'hu"nter2', "token": SLACK_BOT})
    scrubbed = json.loads(redact_secret_shapes(preferences))
    assert scrubbed == {"name": "Sam", "password": "[redacted]", "token": "[redacted]"}

    key_file = json.loads(redact_secret_shapes(SERVICE_ACCOUNT))
    assert key_file["private_key"] == "[redacted]\n"
    assert key_file["client_email"] == "orion@project.iam.gserviceaccount.com"


def test_redacting_twice_changes_nothing_more() -> None:
    text = f"password: hunter2 and {SLACK_BOT} and\n{PEM}"
    once = redact_secret_shapes(text)
    assert "hunter2" not in once and SLACK_BOT not in once and "MIIE" not in once
    assert redact_secret_shapes(once) == once


def test_key_headers_without_keys_are_each_redacted() -> None:
    # Each header looks for its END only up to the next `-----`, so a file of nothing but
    # headers is scanned once, not once per header.
    text = "-----BEGIN PRIVATE KEY-----" * 4_000
    assert redact_secret_shapes(text) == "[redacted]" * 4_000


def test_every_shape_has_a_name_of_its_own() -> None:
    names = [shape.name for shape in SECRET_SHAPES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # A zero-width space, a word joiner and a soft hyphen inside tokens.
        (
            "my token is xoxb-12\u200b34-5678901234-AbCdEfGhIj, thanks",
            "my token is [redacted], thanks",
        ),
        (f"gh\u2060p_{GITHUB_PAT[4:20]}\u00ad{GITHUB_PAT[20:]} ok", "[redacted] ok"),
        (f"{STRIPE_LIVE[:10]}\ufeff{STRIPE_LIVE[10:]}", "[redacted]"),
        # Between every character of it.
        ("key: " + "\u200b".join(STRIPE_LIVE) + " end", "key: [redacted] end"),
        # In a label: the label stays as written, the value goes.
        ("pass\u200bword: hunter2", "pass\u200bword: [redacted]"),
        ("password: hun\u200cter2!", "password: [redacted]!"),
    ],
)
def test_tokens_interleaved_with_invisible_characters_are_redacted_whole(
    text: str, kept: str
) -> None:
    assert redact_secret_shapes(text) == kept


def test_invisible_characters_alone_change_nothing() -> None:
    text = "zero\u200bwidth\u200d joiners and a soft\u00adhyphen, no secret"
    assert redact_secret_shapes(text) is text


# Every anchor, and the characters that could make a pattern backtrack after it: runs of
# white space, key characters, separators, quotes, invisible characters.
_FILLERS = (
    " ",
    "\t",
    "\n",
    "\u3000",
    "a",
    "A0",
    "-",
    "_",
    ".",
    "=",
    ":",
    "/",
    "@",
    '"',
    "*",
    "\u200b",
    "%",
)
_ADVERSARIAL = [
    (anchor + filler * 40_000)[:40_000]
    for anchor in (
        *sorted({a for shape in SECRET_SHAPES for a in shape.anchors}),
        *("-----BEGIN RSA PRIVATE KEY-----", "password: ", "https://u:", "Bearer ", "Basic "),
    )
    for filler in _FILLERS
] + [
    ("-" * 40_000),
    ("password:" + " " * 39_991),
    ('password="' * 4_000),
    ("-----BEGIN PRIVATE KEY-----\n" + "A" * 15 + "\n") * 900,
    ("https://a:" + "b" * 39_990),
    ("://" * 13_333),
    ("Basic " + "QUJD" * 9_998),
    ("[" * 20_000 + "]" * 20_000),
    # Anchors glued by separators (secrets may follow one), ending where a pattern fails.
    ("password=" * 4_444 + "("),
    ("eyJ-" * 10_000),
    ("eyJaaaaaaaa_" * 3_333),
    ("sk-" * 13_333),
    ("token=token=" * 3_333 + "("),
    ("xoxb-" * 8_000 + "("),
]


@pytest.mark.parametrize("text", _ADVERSARIAL, ids=lambda text: repr(text[:24]))
def test_forty_thousand_adversarial_characters_are_scrubbed_once_and_for_all(text: str) -> None:
    """Each of these takes milliseconds (bench/secret_shapes.py measures them); a pattern
    that backtracked would take minutes here. Whatever comes out is scrubbed for good."""
    once = redact_secret_shapes(text)
    # Nothing redacted, `once` is `text` (the same object): a second pass would be this one
    # again, seconds of the suite's CPU over these 2,000 texts for an assertion already made.
    if once is not text:
        assert redact_secret_shapes(once) == once


def test_a_text_of_several_windows_is_redacted_across_their_edges() -> None:
    """A long text (a search index) is searched a window at a time: a secret across the
    edge of two windows is found whole, as in a short text."""
    from app.observability.secret_shapes import _WINDOW

    secrets = [f"my token is {SLACK_BOT}", "password: hunter2-ok", PEM]
    # The first secret starts 40 characters before the first window's edge.
    parts = ["x " * (_WINDOW // 2 - 20)]
    for n in range(8):
        parts += [secrets[n % 3], " " + "y " * (_WINDOW // 3)]
    text = "".join(parts)

    scrubbed = redact_secret_shapes(text)

    assert len(text) > 4 * _WINDOW
    assert scrubbed == "".join(redact_secret_shapes(part) for part in parts)
    assert SLACK_BOT not in scrubbed and "hunter2" not in scrubbed and "MIIE" not in scrubbed
