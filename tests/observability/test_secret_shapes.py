"""Secrets recognised by their shape become `[redacted]`; ordinary text is left alone."""

from __future__ import annotations

import json

import pytest

from app.observability.redaction import SECRET_SHAPES, redact_secret_shapes

SLACK_BOT = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2bN4bb5vQc2Z3h0nH0t5yRkzQw7E\n"
    "q9iQq3o4z6m0Yqk1mDxv1P3nJjT1o4Y2cC3f1qZk0z2X3v9fLQ==\n"
    "-----END RSA PRIVATE KEY-----"
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
