"""Secrets are redacted before anything reaches disk; look-alikes that matter survive."""

from __future__ import annotations

import pytest

from keeper.redact import redact

# Built from pieces so the file itself holds no scannable secret.
LEAKS = [
    ("anthropic-key", "export key " + "sk-ant-api03-" + "Xy7" * 12 + "AA"),
    ("openai-key", "OPENAI is " + "sk-proj-" + "abcDEF123456" * 3),
    ("openai-key", "old style " + "sk-" + "Q" * 48),
    ("aws-access-key", "aws id " + "AKIA" + "IOSFODNN7EXAMPLE"),
    ("secret", "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("github-token", "push with " + "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a" + " please"),
    ("github-token", "fine-grained " + "github_pat_" + "11ABCDEFG0" + "x" * 50),
    ("gitlab-token", "gitlab " + "glpat-" + "xYz12345678901234567"),
    ("slack-token", "bot " + "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
    ("slack-webhook", "post to " + "https://hooks.slack.com/services/" + "T000/B000/XXXXXXXXXXXXXXXX"),
    ("stripe-key", "charge with " + "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"),
    ("google-api-key", "maps " + "AIza" + "SyA-1234567890abcdefghijklmnopqrstu"),
    (
        "jwt",
        "bearer "
        + "eyJhbGciOiJIUzI1NiJ9"
        + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0"
        + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    (
        "private-key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n-----END RSA PRIVATE KEY-----",
    ),
    ("private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ (truncated paste"),
    ("url-password", "connect to postgres://admin:" + "S3cure!pass" + "@db.internal:5432/app"),
    ("secret", "DB_PASSWORD=" + "correct-horse-battery"),
    ("secret", 'config: api_key: "' + "9f8e7d6c5b4a" + '"'),
    ("secret", "export GITHUB_TOKEN=" + "abcdef123456"),
    ("secret", "client_secret = '" + "zzTopSecret99" + "'"),
    ("secret", "curl 'https://api.example.com/v1?token=" + "abc123def456" + "&x=1'"),
]


@pytest.mark.parametrize(("kind", "text"), LEAKS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(LEAKS)])
def test_every_kind_of_leak_is_redacted_and_the_sentence_stays(kind: str, text: str) -> None:
    out = redact(text)
    assert f"[REDACTED:{kind}]" in out
    assert out[:3] == text[:3] or out.startswith("[REDACTED")  # the words around it stay


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a fixed it",
        "request id 123e4567-e89b-12d3-a456-426614174000",
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "![diagram](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk)",
        "Built the password reset flow and the token refresh endpoint",
        "password: None",
        "token = get_token()",
        "secret=${VAULT_SECRET}",
        "Use the AuthKey struct for tokens",
        "skip the sk- prefix check for test keys",
    ],
)
def test_look_alikes_survive(text: str) -> None:
    assert redact(text) == text


def test_extra_patterns_from_config() -> None:
    assert redact("ticket ACME-INTERNAL-7781 leaked", [r"ACME-INTERNAL-\d+"]) == "ticket [REDACTED:custom] leaked"
