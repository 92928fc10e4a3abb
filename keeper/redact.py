"""Secrets never reach disk: every text Keeper writes passes through ``redact`` first.

A secret becomes ``[REDACTED:<kind>]`` and the sentence around it stays, so the memory still reads
well. The rules (``keeper.secret_rules``) follow the shapes providers document (prefixes, lengths)
and the places people paste secrets (``.env`` lines, config files, auth headers, URLs, command
lines); git SHAs, UUIDs, content hashes, placeholders and phrases like "password reset flow"
survive. A rule runs only when one of its keywords occurs in the text, and is compiled the first
time that happens, so a text with nothing secret-looking costs a ``lower()`` and a few substring
tests. All rules read the same text; their matches, and those of the user's own patterns
(``keeper.user_patterns``: checked and time-bounded), are merged and replaced once.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Iterable, Iterator, Sequence

MARKER = "[REDACTED:{}]"
CUSTOM = "custom"
# Every rule's keywords hold one of these (a test checks it), the commonest first: a text with none
# of them needs no rule, and then the rules (``keeper.secret_rules``, ~0.5 ms to import) never load.
# Automatic recall redacts every note it shows; a prompt's hook must not pay for rules it cannot use.
SCREEN = (
    *("--", "sk", "key", "pass", "token", "auth", "secret", "pw", "cred", "login", "default", "://", "curl"),
    *("cookie", "bearer", "machine", "mongo", "mysql", "mariadb", "redis-cli", "private-lines", "sig="),
    *("sharedaccesssignature", "hooks.slack.com", "discord", "-us", ":aa", "q~", "eyj", "xox", "ya29."),
    *("_live_", "_prod_", "_test_", "_v1_", "a3t", "abia", "acca", "aiza", "akia", "asia", "api_org_"),
    *("atatt3", "atbb", "atctt3", "dapi", "dckr_pat_", "dp.", "gho_", "ghp_", "ghr_", "ghs_", "ghu_"),
    *("github_pat_", "glagent-", "glc_", "glcbt-", "gldt-", "glft-", "glimt-", "gloas-", "glpat-", "glptt-"),
    *("glrt-", "glsa_", "glsoat-", "gocspx-", "gr1348941", "hf_", "hrku-", "hvb.", "hvr.", "hvs.", "lin_api_"),
    *("npm_", "ntn_", "pmak-", "pypi-", "r8_", "rubygems_", "sbp_", "sg.", "shpat_", "shpca_", "shppa_"),
    *("shpss_", "sntrys_", "sntryu_", "whsec_", "xai-", "xapp-"),
)


def unsafe(pattern: str) -> str | None:
    """Why a user pattern could backtrack without bound, in words; None when it cannot (see
    ``keeper.user_patterns``, loaded only where there are user patterns: most texts need none)."""
    from keeper import user_patterns

    return user_patterns.unsafe(pattern)


_BY_KEYWORD: dict[str, list[int]] = {}  # made at the first text that may hold a secret
_compiled: dict[int, re.Pattern[str]] = {}


def _by_keyword() -> dict[str, list[int]]:
    """Keyword -> the rules it lets run, so a text is searched once for each distinct keyword."""
    if not _BY_KEYWORD:
        from keeper.secret_rules import RULES

        for index, rule in enumerate(RULES):
            for keyword in rule.keywords:
                _BY_KEYWORD.setdefault(keyword, []).append(index)
    return _BY_KEYWORD


def _rule(index: int) -> re.Pattern[str]:
    """A rule's pattern, compiled the first time a text holds one of its keywords."""
    pattern = _compiled.get(index)
    if pattern is None:
        import re

        from keeper.secret_rules import RULES

        pattern = _compiled[index] = re.compile(RULES[index].pattern)
    return pattern


class _Markers:
    """Where earlier redaction left markers: they are never redacted again, so redacting twice changes nothing."""

    def __init__(self, text: str) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        at = text.find("[REDACTED:")
        while at >= 0:
            end = text.find("]", at + 10, at + 60)
            if end > at + 10 and all(c.isalnum() or c == "-" for c in text[at + 10 : end]):
                self.starts.append(at)
                self.ends.append(end + 1)
                at = text.find("[REDACTED:", end + 1)
            else:
                at = text.find("[REDACTED:", at + 1)

    def end(self, pos: int) -> int:
        """Where the marker around ``pos`` ends; 0 when ``pos`` is in none."""
        from bisect import bisect_right

        i = bisect_right(self.ends, pos)
        return self.ends[i] if i < len(self.starts) and self.starts[i] <= pos else 0

    def matches(self, pattern: re.Pattern[str], subject: str) -> Iterator[re.Match[str]]:
        """``pattern.finditer(subject)``, but a match never starts inside a marker (it would read the
        marker's kind as a word, and take text from the matches after it): the search resumes past it."""
        pos = 0
        while True:
            m = pattern.search(subject, pos)
            if m is None:
                return
            skip = self.end(m.start())
            if not skip:
                yield m
            pos = skip or max(m.end(), m.start() + 1)

    def cut(self, a: int, b: int) -> bool:
        """Whether span a..b is a marker or cuts into one (a span that swallows whole markers is fine)."""
        from bisect import bisect_left, bisect_right

        i = bisect_right(self.ends, a)  # the first marker ending after a
        if i == len(self.starts) or self.starts[i] >= b:
            return False
        j = bisect_left(self.starts, b) - 1  # the last marker starting before b
        return self.starts[i] < a or self.ends[j] > b or (a, b) == (self.starts[i], self.ends[i])


def redact_values(value: object, extra_patterns: Iterable[str] = ()) -> object:
    """A JSON value with every string in it (at any depth) redacted, for records Keeper writes as JSON."""
    if isinstance(value, str):
        return redact(value, extra_patterns)
    if isinstance(value, (list, tuple)):  # a tuple as JSON writes it: a list
        return [redact_values(v, extra_patterns) for v in value]
    if isinstance(value, dict):
        return {k: redact_values(v, extra_patterns) for k, v in value.items()}
    return value


def _rule_spans(text: str, low: str, markers: _Markers | None) -> list[tuple[int, int, int, str]]:
    """``(start, rule, end, kind)`` of what the rules whose keywords ``low`` holds find in ``text``."""
    from keeper.secret_rules import RULES

    spans: list[tuple[int, int, int, str]] = []
    for index in sorted({i for keyword, rules in _by_keyword().items() if keyword in low for i in rules}):
        rule = RULES[index]
        subject = text if rule.cased else low
        for m in _rule(index).finditer(subject) if markers is None else markers.matches(_rule(index), subject):
            spans += [(a, index, b, rule.kind) for a, b in rule.handler(m, text) if b > a]
    return spans


def redact(text: str, extra_patterns: Iterable[str] = ()) -> str:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``."""
    low = text.lower()
    if len(low) != len(text):  # "İ", alone in Unicode, lower-cases to two characters; offsets must stay aligned
        low = text.replace("\u0130", "I").lower()
    markers = _Markers(text) if "[REDACTED:" in text else None
    spans: list[tuple[int, int, int, str]] = []  # start, rule, end, kind
    if any(word in low for word in SCREEN):  # else no rule can match, and the rules stay unloaded
        spans = _rule_spans(text, low, markers)
    if extra_patterns:
        from keeper import user_patterns
        from keeper.secret_rules import RULES

        extra = user_patterns.compiled(extra_patterns)
        if extra:
            spans += [(a, len(RULES), b, CUSTOM) for a, b in user_patterns.spans(text, extra)]
    if markers is not None:
        spans = [s for s in spans if not markers.cut(s[0], s[2])]
    if not spans:
        return text
    spans.sort()
    merged: list[tuple[int, int, str]] = []
    for a, _, b, kind in spans:  # overlapping spans become one, named by the first (then most specific) rule
        if merged and a < merged[-1][1]:
            first, end, named = merged[-1]
            merged[-1] = (first, max(b, end), named)
        else:
            merged.append((a, b, kind))
    out: list[str] = []
    done = 0
    for a, b, kind in merged:
        out += (text[done:a], MARKER.format(kind))
        done = b
    out.append(text[done:])
    return "".join(out)


def for_context(text: str, limit: int, patterns: Sequence[str] = ()) -> str:
    """Text for Claude's context or the user's screen: redacted with the built-in rules and
    ``patterns``, the user's own (recall also reads files Keeper did not write, such as hand edits
    and Claude Code's own memory, and a pattern may be newer than a save), and cut to ``limit``."""
    out = redact(text, patterns)
    return out if len(out) <= limit else out[: limit - 1] + "…"
