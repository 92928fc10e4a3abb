"""Secrets never reach disk: every text Keeper writes passes through ``redact`` first.

A match becomes ``[REDACTED:<kind>]`` and the sentence around it stays, so the memory still reads
well. Patterns are anchored on the shapes providers document (prefixes, lengths) so that git
SHAs, UUIDs, content hashes and phrases like "password reset flow" survive.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_RULES: list[tuple[str, re.Pattern[str], int]] = [
    # (kind, pattern, group to replace: 0 = the whole match)
    (
        "private-key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
            re.S,
        ),
        0,
    ),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{16,}"), 0),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?(?!ant-)[A-Za-z0-9_-]{20,}"), 0),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA)[A-Z0-9]{16}\b"), 0),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b"), 0),
    ("gitlab-token", re.compile(r"\bgl(?:pat|dt|rt|cbt|ptt|ft|soat)-[A-Za-z0-9_-]{20,}"), 0),
    ("slack-token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}"), 0),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]+"), 0),
    ("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"), 0),
    ("stripe-webhook-secret", re.compile(r"\bwhsec_[A-Za-z0-9]{24,}"), 0),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), 0),
    ("google-oauth-token", re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}"), 0),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), 0),
    ("url-password", re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@'\"]+:([^\s@/'\"]+)@"), 1),
    (
        "secret",
        re.compile(
            r"(?i)(?<![A-Za-z0-9])(?:export\s+)?[A-Za-z0-9_.-]*"
            r"(?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key"
            r"|credentials?|auth[_-]?key|client[_-]?secret)[A-Za-z0-9_.-]*"
            r"[\"']?\s*(?:=|:)\s*[\"']?((?![\[$<{(]|\[REDACTED)[^\s\"',;(){}\[\]&]{4,})(?=[\s\"',;)}\]&]|$)"
        ),
        1,
    ),
]

_compiled_extra: dict[tuple[str, ...], list[re.Pattern[str]]] = {}


def _extra(patterns: Iterable[str]) -> list[re.Pattern[str]]:
    key = tuple(patterns)
    if key not in _compiled_extra:
        compiled = []
        for pattern in key:
            try:
                compiled.append(re.compile(pattern))
            except re.error:
                continue  # config.py already warned about it
        _compiled_extra[key] = compiled
    return _compiled_extra[key]


def _looks_like_placeholder(value: str) -> bool:
    lowered = value.lower().strip("\"'")
    return lowered in {
        "none",
        "null",
        "true",
        "false",
        "undefined",
        "redacted",
        "xxxx",
        "****",
        "changeme",
    } or (set(lowered) <= {"*", "x", "."})


def redact(text: str, extra_patterns: Iterable[str] = ()) -> str:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``."""
    for kind, pattern, group in _RULES:
        marker = f"[REDACTED:{kind}]"

        def replace(match: re.Match[str], group: int = group, marker: str = marker) -> str:
            if group == 0:
                return marker
            value = match.group(group)
            if _looks_like_placeholder(value):
                return match.group(0)
            start, end = match.span(group)
            whole_start = match.start()
            return match.group(0)[: start - whole_start] + marker + match.group(0)[end - whole_start :]

        text = pattern.sub(replace, text)
    for pattern in _extra(extra_patterns):
        text = pattern.sub("[REDACTED:custom]", text)
    return text
