"""Secrets never reach disk: every text Keeper writes passes through ``redact`` first.

A secret becomes ``[REDACTED:<kind>]`` and the sentence around it stays, so the memory still reads
well. Rules follow the shapes providers document (prefixes, lengths) and the places people paste
secrets (``.env`` lines, config files, auth headers, URLs, command lines); git SHAs, UUIDs, content
hashes, placeholders and phrases like "password reset flow" survive.

Python's ``re`` backtracks, so every rule is written to run in linear time: where it can, it
begins with a literal (which ``re`` finds with a fast scan) and checks after it that the literal
starts a token, so a long run of characters holds one place to start, not one per character;
every repetition is bounded unless it ends the pattern (then a match takes the whole run and the
search goes on after it), and repeated groups are short and cannot share their text two ways. A
rule runs only when one of its keywords occurs in the text, and is compiled the first time that
happens, so a text with nothing secret-looking costs a ``lower()`` and a few substring tests. All
rules read the same text; their matches are merged and replaced once.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

    Handler = Callable[["re.Match[str]", str], "list[tuple[int, int]]"]

MARKER = "[REDACTED:{}]"
CUSTOM = "custom"
EXTRA_PIECE = 4096  # user patterns run on pieces of at most this many characters (see _extra_spans)

# A character that, right before a token's prefix, makes the prefix part of a longer word (as ``\b``
# would; "]" too, so a token right after a marker stays as it was). A rule whose match can fail after
# an unbounded run (a JWT's third part) also counts "-": a run of its characters then holds one start.
_GLUE = r"[A-Za-z0-9_\]]"
_RUN_GLUE = r"[A-Za-z0-9_\]-]"
_END = r"(?![A-Za-z0-9_\[-])"  # ends a fixed-length token ("[" too: a marker right after it)
_LOW_GLUE = r"[a-z0-9_\]]"  # the same for rules that read the lower-cased text ("-" left out: x-api-key)
_GAP = r"(?:[ \t]|\\\r?\n){1,8}"  # between command-line arguments, line continuations included
_ARG = r"[^\s|;&]{1,2048}"  # one command-line argument (never crosses a pipe or a command separator)
_STOP = r"\s\"'`,;&|<>(){}\[\]"  # what ends an unquoted value
# A value: quoted (the quotes stay), or unquoted up to the first character of _STOP. The unquoted
# form is unbounded and ends the pattern, so a match takes the whole run and is never retried in it;
# it never starts like a placeholder ($VAR, %VAR%, ****, #), which would hide what follows it.
_VALUE = rf"(?:\"(?P<q1>[^\"\n]{{1,4096}})\"|'(?P<q2>[^'\n]{{1,4096}})'|(?![$%*#])(?P<v>[^{_STOP}]+))"
# Secret words in a name, grouped by first letter: ``re`` tries one branch per letter it scans.
# Short words must start a part of the name (db_pass, not compass, bypass or oauth). After the
# first word a name may go on only with more of them, words like these and numbers, so
# ``token_url``, ``password_min_length``, ``tokenizer`` and ``max_tokens`` are no secrets.
_KEYWORD = (
    r"a(?:pi|ccess|ccount|pp)[_.-]?key|auth(?<![a-z]auth)(?:[_.-]?key)?"
    r"|c(?:lient[_.-]?key|redentials?|reds(?<![a-z]creds))|encryption[_.-]?key|master[_.-]?key"
    r"|p(?:ass(?:word|wd|phrase)|ass(?<![a-z]pass)|rivate[_.-]?key|wd(?<![a-z]pwd)|w(?<![a-z]pw))"
    r"|s(?:ecret(?:[_.-]?key)?|shpass|igning[_.-]?key|ervice[_.-]?key|ession[_.-]?key)|token"
)
_NAME_TAIL = (
    rf"(?:[_.-]?(?:{_KEYWORD}|value|hash|b64|base64|enc|encrypted|raw|plain(?:text)?|base|confirm(?:ation)?"
    r"|old|new|prod(?:uction)?|dev|staging|test|local|[0-9]{1,6}(?![0-9]))){0,3}"
)
_ASSIGN = r"[\"'`]?\]?[ \t]{0,4}(?P<sep>:=|=>|==|=|:)[ \t]{0,4}"  # after a name: = : := => ==, quotes, spaces
# A password given in words: quoted, or one run of characters (sentence punctuation after it is dropped).
SPOKEN_VALUE = (
    r"(?:\"(?P<q1>[^\"\n]{1,256})\"|'(?P<q2>[^'\n]{1,256})'|`(?P<q3>[^`\n]{1,256})`"
    r"|(?P<v>[^\s\"'`<>(){}\[\],;]{1,256}))"
)
_OPTION_VALUE = rf"(?:{_GAP})?(?!-){_VALUE}"  # an option's value, glued or not; "-x" is the next option


def _tok(*prefixes: str, glue: str = _GLUE) -> str:
    """Literal prefixes first, so ``re`` scans for them fast, each required to start a token."""
    return "(?:" + "|".join(f"{p}(?<!{glue}{p})" for p in prefixes) + ")"


def _ltok(prefix: str) -> str:
    """``_tok`` for the lower-cased text."""
    return f"{prefix}(?<!{_LOW_GLUE}{prefix})"


def _after(tools: str, option: str) -> str:
    """``option`` given to one of ``tools`` within its next 24 arguments, then the secret.

    An argument is never one of ``tools``: each argument is read for one command only.
    """
    return rf"(?:{tools})(?:{_GAP}(?!{tools}){_ARG}){{0,24}}?{_GAP}{option}"


# -- what to do with a match -----------------------------------------------------------------------

_PLACEHOLDERS = frozenset(
    (  # noqa: SIM905 - a word list reads best as text
        "none null nil true false yes no undefined redacted changeme change_me changeit placeholder example "
        "dummy secret token str string bytes int bool any object optional required empty"
    ).split()
)
_REFERENCES = ("your", "self.", "this.", "os.environ", "os.getenv", "process.env", "env.", "settings.", "config.")
_MASK = frozenset("x*.-_•")


def _placeholder(value: str) -> bool:
    """A value that stands for a secret rather than being one: ``${VAR}``, ``<token>``, ``xxxx``, ``changeme``."""
    v = value.strip().lower()
    if len(v) < 3 or v[0] in "$%<{*[#" or v in _PLACEHOLDERS or v.startswith(_REFERENCES) or "..." in v or "…" in v:
        return True
    chars = set(v)
    return len(chars) == 1 or chars <= _MASK


def _whole(m: re.Match[str], text: str) -> list[tuple[int, int]]:
    """The match is the secret: a provider token, a key block."""
    return [m.span()]


def _value(m: re.Match[str], text: str) -> list[tuple[int, int]]:
    """The pattern's last group is the secret, unless it is a placeholder."""
    a, b = m.span(m.lastindex or 0)
    return [] if _placeholder(text[a:b]) else [(a, b)]


def _assignment(m: re.Match[str], text: str) -> list[tuple[int, int]]:
    """``NAME=value`` (``DB_PASS``, ``api_key``, ``dbPass``), unless the value is a call or an index
    (``get_token()``, ``os.environ[…]``) or the words are prose ("The secret: use env vars")."""
    end = m.end()
    if m.lastgroup == "v" and text[end : end + 1] in ("(", "[", "{"):
        return []
    if m.group("sep") == ":" and m.lastgroup == "v" and _prose(text, m.start(), m.start("sep"), m.start("v"), end):
        return []
    return _value(m, text)


def _prose(text: str, start: int, sep: int, a: int, b: int) -> bool:
    """A plain word named by a plain word after a colon, in a sentence or as a heading ("Token: bucket")."""
    name, value = text[start:sep], text[a:b]
    if not (name.isalpha() and value.isalpha() and value.islower()):
        return False
    line = text[text.rfind("\n", 0, start) + 1 : start]
    return name.istitle() or any(c.isalpha() for c in line)


def _cookie(m: re.Match[str], text: str) -> list[tuple[int, int]]:
    """Every value of a ``Cookie:`` line; the first (the session) of a ``Set-Cookie:`` line."""
    spans = []
    pos = m.start("v")
    only_first = text[max(m.start() - 4, 0) : m.start()].lower() == "set-"
    for pair in m.group("v").split(";"):
        name, eq, value = pair.partition("=")
        if eq and not _placeholder(value):
            a = pos + len(name) + 1 + len(value) - len(value.lstrip())
            spans.append((a, a + len(value.strip())))
        pos += len(pair) + 1
        if only_first:
            break
    return spans


def _generated(m: re.Match[str], text: str) -> list[tuple[int, int]]:
    """A value that must look generated (a digit in it), as words after ``Authorization:`` or ``Bearer`` may not."""
    a, b = m.span("v")
    return _value(m, text) if any(c.isdigit() for c in text[a:b]) else []


def _authorization(m: re.Match[str], text: str) -> list[tuple[int, int]]:
    """``Authorization: <scheme> <secret>``; with no scheme, only a value that looks generated."""
    return _value(m, text) if m.group("scheme") else _generated(m, text)


# Words that, after "the password is", describe the password rather than give it.
_NOT_A_PASSWORD = frozenset(
    (  # noqa: SIM905 - a word list reads best as text
        "a an the not no now still also just only too very so same different wrong right correct incorrect "
        "invalid valid empty blank weak strong long short secure insecure safe unsafe unknown known new old "
        "required optional mandatory needed necessary case sensitive in on at of for to from with by as into "
        "under over inside there here where what which who that this these those it its your my our their his "
        "her one ok okay fine good bad hard easy simple complex random unique temporary permanent "
        "plaintext plain hidden secret private public local remote stale expiring rotated masked visible "
        "never always sometimes usually often probably definitely actually either neither both all any "
        "some none missing set sent kept put lost shown known given written taken forgotten shared read "
        "held built made stored saved encrypted hashed salted changed reset updated expired "
        "managed handled generated checked compared verified validated accepted rejected ignored "
        "and or but if when because then than like about after before until while whatever"
    ).split()
)
_DESCRIBING = ("ed", "ing", "ly", "able", "ible", "ful", "less", "ive", "ous", "ent", "ant", "ion", "ity", "ness")


def _looks_generated(value: str) -> bool:
    """A digit, a symbol or a capital after the first letter: a password rather than a word."""
    return any(c.isdigit() for c in value) or not value.isalpha() or any(c.isupper() for c in value[1:])


def _spoken(m: re.Match[str], text: str) -> list[tuple[int, int]]:
    """ "the staging db password is hunter2": a quoted value, one that looks generated, or a plain
    word that is no word of description ("the password is required", "... is stored in vault")."""
    a, b = m.span(m.lastindex or 0)
    if m.lastgroup == "v":
        while b > a and text[b - 1] in ".,:;!?)":
            b -= 1
    value = text[a:b]
    if b - a < 3 or _placeholder(value) or value.lower() in _NOT_A_PASSWORD:
        return []
    if m.lastgroup != "v" or _looks_generated(value):
        return [(a, b)]
    return [] if "how" in m.re.groupindex or value.lower().endswith(_DESCRIBING) else [(a, b)]


def _htpasswd(m: re.Match[str], text: str) -> list[tuple[int, int]]:
    """``htpasswd -b [file] user password``: with ``-n`` there is no file."""
    import re

    options = m.group("o")
    args = [arg.span() for arg in re.finditer(r"[^\s\\]\S*", m.group("a"))]
    wanted = 1 if "n" in options else 2
    if "b" not in options or len(args) <= wanted:
        return []
    a, b = (m.start("a") + i for i in args[wanted])
    return [] if _placeholder(text[a:b]) else [(a, b)]


# -- the rules -------------------------------------------------------------------------------------

_LOWER, _CASED = False, True
_TOKEN = "[A-Za-z0-9_-]"
_GITLAB = ("glpat-", "gldt-", "glrt-", "glcbt-", "glptt-", "glft-", "glsoat-", "gloas-", "glimt-", "glagent-")

# (kind, keywords (a match contains one, in lower case), reads the original case?, pattern, handler)
_RULES: tuple[tuple[str, tuple[str, ...], bool, str, Handler], ...] = (
    (
        "private-key",
        ("private key",),
        _CASED,
        r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----(?s:.*?)"
        r"(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
        _whole,
    ),
    (
        "private-key",
        ("private-lines",),
        _CASED,
        r"Private-Lines: [0-9]{1,4}\r?\n"
        r"(?P<v>[A-Za-z0-9+/=]{1,128}(?=\r?\n|\Z)(?:\r?\n[A-Za-z0-9+/=]{1,128}(?=\r?\n|\Z)){0,512})",
        _value,
    ),
    ("anthropic-key", ("sk-ant-",), _CASED, _tok("sk-ant-") + f"{_TOKEN}{{20,}}", _whole),
    (
        "openai-key",
        ("sk-",),
        _CASED,
        _tok("sk-") + f"(?:(?:proj|svcacct|admin|None)-{_TOKEN}{{20,}}|[A-Za-z0-9]{{32,}})",
        _whole,
    ),
    (
        "aws-access-key",
        ("akia", "asia", "abia", "acca", "a3t"),
        _CASED,
        _tok("(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])") + f"[A-Z0-9]{{16}}{_END}",
        _whole,
    ),
    (
        "github-token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        _CASED,
        _tok("gh[pousr]_") + "[A-Za-z0-9]{30,}|" + _tok("github_pat_") + "[A-Za-z0-9_]{22,}",
        _whole,
    ),
    (
        "gitlab-token",
        (*_GITLAB, "gr1348941"),
        _CASED,
        _tok(*_GITLAB) + f"{_TOKEN}{{20,}}|" + _tok("GR1348941") + f"{_TOKEN}{{20,}}",
        _whole,
    ),
    (
        "slack-token",
        ("xox", "xapp-"),
        _CASED,
        _tok("xox[abposre]-") + "[A-Za-z0-9-]{10,}|" + _tok("xapp-") + "[0-9]-[A-Za-z0-9-]{10,}",
        _whole,
    ),
    (
        "slack-webhook",
        ("hooks.slack.com",),
        _CASED,
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_+-]{20,}",
        _whole,
    ),
    (
        "discord-webhook",
        ("discord",),
        _CASED,
        rf"discord(?:app)?\.com/api/webhooks/[0-9]{{5,30}}/{_TOKEN}{{20,}}",
        _whole,
    ),
    (
        "discord-token",
        ("discord",),
        _CASED,
        _tok("[MNO]") + rf"{_TOKEN}{{23,27}}\.{_TOKEN}{{6,7}}\.{_TOKEN}{{27,40}}{_END}",
        _whole,
    ),
    (
        "telegram-token",
        (":aa",),
        _CASED,
        rf"[0-9](?<![A-Za-z0-9_:\]][0-9])[0-9]{{5,11}}:AA{_TOKEN}{{30,}}",
        _whole,
    ),
    (
        "stripe-key",
        ("_live_", "_test_", "_prod_"),
        _CASED,
        _tok("[spr]k_(?:live|test|prod)_") + "[A-Za-z0-9]{16,}",
        _whole,
    ),
    ("stripe-webhook-secret", ("whsec_",), _CASED, _tok("whsec_") + "[A-Za-z0-9]{24,}", _whole),
    ("twilio-key", ("sk",), _CASED, _tok("SK") + f"[0-9a-fA-F]{{32}}{_END}", _whole),
    (
        "sendgrid-key",
        ("sg.",),
        _CASED,
        _tok(r"SG\.") + rf"{_TOKEN}{{16,32}}\.{_TOKEN}{{16,}}",
        _whole,
    ),
    ("mailgun-key", ("key-",), _CASED, _tok("key-") + f"[0-9a-f]{{32}}{_END}", _whole),
    (
        "mailchimp-key",
        ("-us",),
        _CASED,
        _tok("[0-9a-f]") + f"[0-9a-f]{{31}}-us[0-9]{{1,2}}{_END}",
        _whole,
    ),
    ("npm-token", ("npm_",), _CASED, _tok("npm_") + "[A-Za-z0-9]{16,}", _whole),
    (  # every PyPI and TestPyPI token is a macaroon starting "AgE"; cut short, it is still one
        "pypi-token",
        ("pypi-",),
        _CASED,
        _tok("pypi-") + f"(?:AgE{_TOKEN}{{8,}}|{_TOKEN}{{50,}})",
        _whole,
    ),
    ("huggingface-token", ("hf_", "api_org_"), _CASED, _tok("hf_", "api_org_") + "[A-Za-z0-9]{30,}", _whole),
    ("google-api-key", ("aiza",), _CASED, _tok("AIza") + f"{_TOKEN}{{35}}{_END}", _whole),
    ("google-oauth-token", ("ya29.",), _CASED, _tok(r"ya29\.") + f"{_TOKEN}{{20,}}", _whole),
    ("google-client-secret", ("gocspx-",), _CASED, _tok("GOCSPX-") + f"{_TOKEN}{{20,}}", _whole),
    (
        "azure-storage-key",
        ("accountkey", "sharedaccesskey"),
        _LOWER,
        r"(?:account|sharedaccess)key[ \t]{0,4}=[ \t]{0,4}(?P<v>[^;\s\"'<>\[\]]{8,})",
        _value,
    ),
    (
        "azure-sas",
        ("sharedaccesssignature",),
        _LOWER,
        r"sharedaccesssignature[ \t]{0,4}=[ \t]{0,4}(?P<v>[^;\s\"'<>\[\]]{8,})",
        _value,
    ),
    ("azure-sas", ("sig=",), _LOWER, r"sig=(?<=[?&]sig=)(?P<v>[a-z0-9%+/=]{16,})", _value),
    (
        "azure-client-secret",
        ("q~",),
        _CASED,
        r"(?<![A-Za-z0-9_~.\]-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.\[-])",
        _whole,
    ),
    ("heroku-key", ("hrku-",), _CASED, _tok("HRKU-") + f"{_TOKEN}{{40,}}", _whole),
    ("digitalocean-token", ("_v1_",), _CASED, _tok("do[por]_v1_") + "[a-f0-9]{64}", _whole),
    (
        "shopify-token",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        _CASED,
        _tok("shp(?:at|ca|pa|ss)_") + "[a-fA-F0-9]{32}",
        _whole,
    ),
    (
        "atlassian-token",
        ("atatt3", "atctt3", "atbb"),
        _CASED,
        _tok("ATATT3", "ATCTT3") + "[A-Za-z0-9_=-]{50,}|" + _tok("ATBB") + "[A-Za-z0-9]{32,}",
        _whole,
    ),
    ("databricks-token", ("dapi",), _CASED, _tok("dapi") + f"[a-f0-9]{{32}}(?:-[0-9])?{_END}", _whole),
    ("vault-token", ("hvs.", "hvb.", "hvr."), _CASED, _tok(r"hv[sbr]\.") + f"{_TOKEN}{{24,}}", _whole),
    ("doppler-token", ("dp.",), _CASED, _tok(r"dp\.") + r"(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", _whole),
    ("linear-key", ("lin_api_",), _CASED, _tok("lin_api_") + "[A-Za-z0-9]{40,}", _whole),
    (
        "notion-token",
        ("ntn_", "secret_"),
        _CASED,
        _tok("ntn_") + "[0-9]{11}[A-Za-z0-9]{35,}|" + _tok("secret_") + f"[A-Za-z0-9]{{43}}{_END}",
        _whole,
    ),
    ("postman-key", ("pmak-",), _CASED, _tok("PMAK-") + "[a-f0-9]{24}-[a-f0-9]{34}", _whole),
    ("grafana-token", ("glc_", "glsa_"), _CASED, _tok("glc_", "glsa_") + "[A-Za-z0-9+/_]{32,}", _whole),
    ("sentry-token", ("sntrys_", "sntryu_"), _CASED, _tok("sntry[su]_") + "[A-Za-z0-9+/=_]{40,}", _whole),
    ("tailscale-key", ("tskey-",), _CASED, _tok("tskey-") + "[A-Za-z0-9-]{20,}", _whole),
    ("supabase-token", ("sbp_", "sb_secret_"), _CASED, _tok("sbp_", "sb_secret_") + f"{_TOKEN}{{30,}}", _whole),
    ("docker-token", ("dckr_pat_",), _CASED, _tok("dckr_pat_") + f"{_TOKEN}{{12,}}", _whole),
    ("age-key", ("age-secret-key-1",), _CASED, _tok("AGE-SECRET-KEY-1") + "[0-9A-Z]{50,}", _whole),
    ("rubygems-key", ("rubygems_",), _CASED, _tok("rubygems_") + "[a-f0-9]{16,}", _whole),
    ("groq-key", ("gsk_",), _CASED, _tok("gsk_") + "[A-Za-z0-9]{40,}", _whole),
    ("replicate-token", ("r8_",), _CASED, _tok("r8_") + "[A-Za-z0-9]{30,}", _whole),
    ("xai-key", ("xai-",), _CASED, _tok("xai-") + "[A-Za-z0-9]{60,}", _whole),
    (  # "-" is glue here: a run of eyJ-eyJ-… without dots holds one start, not one per prefix
        "jwt",
        ("eyj",),
        _CASED,
        _tok("eyJ", glue=_RUN_GLUE) + rf"{_TOKEN}{{8,}}\.eyJ{_TOKEN}{{8,}}\.{_TOKEN}{{8,}}",
        _whole,
    ),
    (
        "auth-header",
        ("authorization",),
        _LOWER,
        _ltok("authorization") + r"[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?"
        r"(?:(?P<scheme>bearer|basic|token|digest|negotiate|ntlm|bot|apikey|sso-key)[ \t]{1,4})?"
        r"(?P<v>[^\s\"'<>\[\]{},;$][^\s\"'<>\[\]{},;]{3,})",
        _authorization,
    ),
    ("auth-header", ("bearer",), _LOWER, _ltok("bearer") + r"[ \t]{1,4}(?P<v>[a-z0-9._~+/-]{20,}=*)", _generated),
    ("cookie", ("cookie",), _LOWER, _ltok("cookie") + r"[\"']?[ \t]{0,4}:[ \t]{0,4}(?P<v>[^\r\n]+)", _cookie),
    (
        "url-password",
        ("://",),
        _CASED,
        r"://[^\s:/?#@\"'<>\[\]]{0,256}:(?P<v>[^\s/?#\"'<>\[\]]{1,256})@",
        _value,
    ),
    (
        "cli-password",
        ("--",),
        _LOWER,
        r"--(?<![a-z0-9_\]-]--)(?!no-)(?:[a-z0-9]{1,20}-){0,3}"
        "(?:password|passwd|pass|passphrase|token|secret|api-?key|access-key|secret-key|client-secret)"
        f"(?:=|{_GAP})(?!-)" + _VALUE,
        _value,
    ),
    (
        "cli-password",
        ("mysql", "mariadb", "sshpass", "mongo", "login"),
        _CASED,
        _after(
            _tok("mysql", "mariadb", "sshpass", "mongo")
            + r"[a-z-]{0,15}|"
            + _tok("docker", "podman", "nerdctl", "buildah", "skopeo", "oras", "az", "helm")
            + r"(?:[ \t]+registry)?[ \t]+login",
            "-p",
        )
        + _OPTION_VALUE,
        _value,
    ),
    ("cli-password", ("redis-cli",), _CASED, _after(_tok("redis-cli"), "-a") + _OPTION_VALUE, _value),
    (
        "cli-password",
        ("curl",),
        _CASED,
        _after(_tok("curl"), "(?:-[uU]|--user|--proxy-user)")
        + r"(?:=|[ \t]{1,8})?[\"']?[^\s:\"'|;&]{0,256}:(?P<v>[^\s\"'|;&]+)",
        _value,
    ),
    (
        "cli-password",
        ("htpasswd",),
        _CASED,
        _tok("htpasswd") + rf"(?P<o>(?:{_GAP}-[a-zA-Z]{{1,8}}){{1,4}})"
        rf"(?P<a>(?:{_GAP}[^\s|;&-][^\s|;&]{{0,255}}){{2,3}})",
        _htpasswd,
    ),
    (
        "cli-password",
        ("pass:",),
        _CASED,
        rf"-pass(?:in|out|word)?{_GAP}pass:(?P<v>[^\s\"'|;&]+)",
        _value,
    ),
    (
        "cli-password",
        ("pass",),
        _CASED,
        rf"-(?<![A-Za-z0-9_\]-]-)(?:src|dest)?(?:store|key)pass(?:word)?{_GAP}(?!-)" + _VALUE,
        _value,
    ),
    (
        "secret",
        ("pass", "pw", "secret", "token", "key", "cred", "auth"),
        _LOWER,
        f"(?:{_KEYWORD}){_NAME_TAIL}{_ASSIGN}{_VALUE}",
        _assignment,
    ),
    (
        "secret",
        ("pass", "pwd", "auth", "creds"),
        _CASED,
        "(?:"
        + "|".join(f"{w}(?<=[a-z0-9]{w})" for w in ("Pass", "Pwd", "Auth", "Creds"))
        + f")[0-9]{{0,6}}{_ASSIGN}{_VALUE}",
        _assignment,
    ),
    (  # in words: "the staging db password is hunter2", "pw for prod was 'x'", "password set to y"
        "secret",
        ("pass", "pw"),
        _LOWER,
        r"(?<![a-z0-9])(?:pass(?:word|wd|phrase|code)?|pw)s?"
        r"(?:[ \t]+(?:for|of|on|to)(?:[ \t]+[^\s]{1,40}){1,3}?)?"
        r"(?:(?:[ \t]+(?:is|was|has[ \t]+been|got))?[ \t]+(?:set|changed|reset|updated)[ \t]+to"
        r"|[ \t]+(?:is|was|are|were|remains|becomes)(?:[ \t]+(?:now|still|just))?:?)[ \t]+" + SPOKEN_VALUE,
        _spoken,
    ),
    (  # "log in with password hunter2", "use pw Tr0ub4dor": only a value that looks generated
        "secret",
        ("pass", "pw"),
        _LOWER,
        r"(?<![a-z0-9])(?:use|using|with|enter|type|try)[ \t]+(?:the[ \t]+|a[ \t]+)?"
        r"(?P<how>pass(?:word|wd|phrase|code)?|pw)[ \t]+" + SPOKEN_VALUE,
        _spoken,
    ),
    (  # .netrc: "machine host login user password secret" (or "default login …"), on one line or several
        "secret",
        ("machine", "default"),
        _CASED,
        r"(?<![A-Za-z0-9_])(?:machine[ \t]+[^\s]{1,256}|default)"
        r"(?:\s{1,64}(?:account|port)[ \t]+[^\s]{1,256}){0,2}\s{1,64}login[ \t]+[^\s]{1,256}"
        r"(?:\s{1,64}(?:account|port)[ \t]+[^\s]{1,256}){0,2}\s{1,64}password[ \t]+" + SPOKEN_VALUE,
        _spoken,
    ),
)


def _index_keywords() -> dict[str, list[int]]:
    """Keyword -> the rules it lets run, so a text is searched once for each distinct keyword."""
    found: dict[str, list[int]] = {}
    for index, rule in enumerate(_RULES):
        for keyword in rule[1]:
            found.setdefault(keyword, []).append(index)
    return found


_BY_KEYWORD = _index_keywords()
_compiled: dict[int, re.Pattern[str]] = {}
_compiled_extra: dict[tuple[str, ...], list[re.Pattern[str]]] = {}


def _rule(index: int) -> re.Pattern[str]:
    """A rule's pattern, compiled the first time a text holds one of its keywords."""
    pattern = _compiled.get(index)
    if pattern is None:
        import re

        pattern = _compiled[index] = re.compile(_RULES[index][3])
    return pattern


def _extra(patterns: Iterable[str]) -> list[re.Pattern[str]]:
    """User patterns from config ``redact_patterns``, compiled once; config.py warned about bad ones,
    and one that does not compile or could backtrack without bound (``unsafe``) is skipped here too."""
    key = tuple(patterns)
    if key not in _compiled_extra:
        import re

        compiled = []
        for pattern in key:
            try:
                if unsafe(pattern) is None:
                    compiled.append(re.compile(pattern))
            except (re.error, RecursionError, OverflowError):
                continue
        _compiled_extra[key] = compiled
    return _compiled_extra[key]


def _extra_spans(text: str, patterns: list[re.Pattern[str]]) -> list[tuple[int, int]]:
    """Matches of user patterns, each run on pieces of at most EXTRA_PIECE characters, cut at line ends,
    within this call's time allowance (see "user patterns" below).

    On short pieces a pattern that is quadratic in its input costs at most EXTRA_PIECE steps a
    character. A match cannot cross a piece boundary (a line end where there is one). A piece the
    allowance leaves unread is one span: redacted whole rather than written unread.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    earned = len(text) * len(patterns) * EXTRA_PER_CHAR  # what any pattern that scans in linear time needs
    allowance = [_budget_left[0] + earned]
    while start < len(text):
        end = min(start + EXTRA_PIECE, len(text))
        if end < len(text):
            cut = text.rfind("\n", start, end)
            end = cut + 1 if cut > start else end
        piece = text[start:end]
        found = _budgeted(
            lambda piece=piece: [m.span() for pattern in patterns for m in pattern.finditer(piece)], allowance
        )
        if found is None:
            spans.append((start, end))
        else:
            spans += [(start + a, start + b) for a, b in found if b > a]
        start = end
    if allowance[0] <= 0:  # ran out: from now on a call gets only what its size earns
        _budget_left[0] = 0.0
    else:  # keep what this call did not spend beyond its earned share
        _budget_left[0] = min(_budget_left[0], allowance[0])
    return spans


# -- user patterns ---------------------------------------------------------------------------------
#
# A repository's ``redact_patterns`` run on every text Keeper writes, and ``re`` backtracks: a
# pattern like ``(\w+\s?)+!`` takes exponential time on an ordinary line of prose. Two defences:
#
# 1. ``unsafe`` reads the pattern's parse tree and refuses, before it ever runs, the shapes that
#    backtrack without bound: a backreference, a repetition inside a lookaround, a variable
#    repetition inside another repetition (``(a+)+``, ``(.*a){12}``), an alternation inside a
#    repetition whose branches can start with the same character or match nothing (``(a|aa)+``),
#    and two long repetitions over shared characters with nothing between that tells them apart
#    (``\s*\s*``, ``.*x.*``). What is left costs at most about a piece's length per starting place.
# 2. What passes runs on pieces of at most EXTRA_PIECE characters cut at line ends and, where the
#    platform has an interval timer and Keeper runs in the main thread (Linux, macOS), within an
#    allowance: EXTRA_PER_CHAR seconds per character and pattern (ample for a linear scan), plus
#    what is left of the process's EXTRA_BUDGET, from which time beyond the size allowance is taken;
#    ``re`` checks for signals while it matches, so the timer stops even a pattern the check let
#    through. A piece left unread is redacted whole, and once a call runs out the process has no
#    budget left beyond the size allowance.

EXTRA_BUDGET = 1.0  # seconds one process may spend in user patterns beyond what its texts' sizes earn
EXTRA_PER_CHAR = 2e-6  # seconds a character earns for each pattern: 2 s a MB, ten times a linear scan's need
_budget_left = [EXTRA_BUDGET]
_LONG = 16  # a repetition that may take more than this many more turns than its least is "long"
_REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
_ZERO_WIDTH = ("AT", "ASSERT", "ASSERT_NOT")


class _OutOfTime(Exception):
    """Raised by the interval timer's signal inside ``re``'s matching loop."""


def _out_of_time(signum: int, frame: object) -> None:
    raise _OutOfTime


def _budgeted(work: Callable[..., list[tuple[int, int]]], allowance: list[float]) -> list[tuple[int, int]] | None:
    """``work()``, or None once ``allowance[0]`` seconds are spent (or run out in it); the time taken is
    taken off ``allowance[0]``."""
    if allowance[0] <= 0:
        return None
    import signal
    import time

    if not hasattr(signal, "setitimer"):  # Windows: the parse-tree check alone bounds the work
        return work()
    try:
        previous = signal.signal(signal.SIGALRM, _out_of_time)
    except ValueError:  # not the main thread: no timer there
        return work()
    began = time.monotonic()
    try:
        signal.setitimer(signal.ITIMER_REAL, allowance[0])
        return work()
    except _OutOfTime:
        allowance[0] = 0.0
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if allowance[0] > 0:
            allowance[0] -= time.monotonic() - began


def _parse(pattern: str) -> Any:
    try:
        from re import _parser as parser  # type: ignore[attr-defined,unused-ignore]  # Python 3.11+
    except ImportError:  # Python 3.9 and 3.10
        import sre_parse as parser  # type: ignore[no-redef,unused-ignore]
    return parser.parse(pattern)


_CATEGORIES = {
    "CATEGORY_DIGIT": frozenset("0123456789"),
    "CATEGORY_SPACE": frozenset(" \t\n\r\f\v"),
    "CATEGORY_WORD": frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"),
}


def _chars(name: str, av: Any) -> frozenset[str] | None:
    """The characters one single-character item can match (None: any, or too many to list)."""
    if name == "LITERAL":
        return frozenset(chr(av))
    if name != "IN":
        return None
    found: set[str] = set()
    for sub, arg in av:
        kind = sub.name
        if kind == "LITERAL":
            found.add(chr(arg))
        elif kind == "RANGE" and arg[1] - arg[0] <= 512:
            found.update(chr(c) for c in range(arg[0], arg[1] + 1))
        elif kind == "CATEGORY" and arg.name in _CATEGORIES:
            found |= _CATEGORIES[arg.name]
        else:  # NEGATE, a wide range, a negated category
            return None
    return frozenset(found)


def _overlap(a: frozenset[str] | None, b: frozenset[str] | None) -> bool:
    return a is None or b is None or bool(a & b)


def _union(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    return None if a is None or b is None else a | b


def _body(name: str, av: Any) -> Any:
    """The sub-sequence of a group-like item, or None."""
    if name in _REPEATS:
        return av[2]
    if name == "SUBPATTERN":
        return av[-1]
    if name == "ATOMIC_GROUP":
        return av
    return None


def _nullable(seq: Any) -> bool:
    """Whether a sequence can match the empty string."""
    for op, av in seq:
        name = op.name
        if name in _ZERO_WIDTH or (name in _REPEATS and av[0] == 0):
            continue
        body = _body(name, av)
        if body is not None and _nullable(body):
            continue
        if name == "BRANCH" and any(_nullable(b) for b in av[1]):
            continue
        return False
    return True


def _first(seq: Any) -> frozenset[str] | None:
    """The characters a sequence can start with."""
    found: frozenset[str] | None = frozenset()
    for op, av in seq:
        name = op.name
        if name in _ZERO_WIDTH:
            continue
        body = _body(name, av)
        if body is not None:
            here = _first(body)
        elif name == "BRANCH":
            here = frozenset()
            for branch in av[1]:
                here = _union(here, _first(branch))
        else:
            here = _chars(name, av)
        found = _union(found, here)
        if not _nullable([(op, av)]):
            break
    return found


def _alphabet(seq: Any) -> frozenset[str] | None:
    """Every character a sequence can match anywhere."""
    found: frozenset[str] | None = frozenset()
    for op, av in seq:
        name = op.name
        body = _body(name, av)
        if body is not None:
            found = _union(found, _alphabet(body))
        elif name == "BRANCH":
            for branch in av[1]:
                found = _union(found, _alphabet(branch))
        elif name not in _ZERO_WIDTH:
            found = _union(found, _chars(name, av))
    return found


def _varies(seq: Any) -> bool:
    """Whether a sequence holds a repetition of variable count, at any depth."""
    for op, av in seq:
        name = op.name
        if name in _REPEATS and av[0] != av[1]:
            return True
        body = _body(name, av) if name not in ("ASSERT", "ASSERT_NOT") else av[1]
        if body is not None and _varies(body):
            return True
        if name == "BRANCH" and any(_varies(b) for b in av[1]):
            return True
    return False


def _flat(seq: Any) -> list[tuple[Any, Any]]:
    """A sequence with its groups opened, so ``(\\w+)\\w+`` reads as two repetitions in a row."""
    items: list[tuple[Any, Any]] = []
    for op, av in seq:
        items += _flat(av[-1]) if op.name == "SUBPATTERN" else [(op, av)]
    return items


def _check(seq: Any, repeated: bool) -> None:
    """Raise ValueError naming a shape of ``seq`` that can backtrack without bound.

    ``repeated``: ``seq`` is inside a repetition that may run more than once.
    """
    is_open = False  # a long repetition came before, and nothing since that it cannot take
    taking: frozenset[str] | None = frozenset()  # what that repetition can take
    for op, av in _flat(seq):
        name = op.name
        if name in ("GROUPREF", "GROUPREF_EXISTS"):
            raise ValueError("it uses a backreference")
        if name in ("ASSERT", "ASSERT_NOT"):
            if _varies(av[1]):
                raise ValueError("it repeats inside a lookaround")
            _check(av[1], repeated)
            continue
        if name == "AT":
            continue
        if name == "ATOMIC_GROUP":
            _check(av, repeated)
            here = _first(av)
        elif name == "BRANCH":
            branches = av[1]
            starts = [_first(b) for b in branches]
            if repeated and (
                any(_nullable(b) for b in branches)
                or any(_overlap(x, y) for i, x in enumerate(starts) for y in starts[i + 1 :])
            ):
                raise ValueError("it repeats an alternation whose branches can match the same text")
            for branch in branches:
                _check(branch, repeated)
            here = _first([(op, av)])
        elif name in _REPEATS:
            low, high, body = av
            if repeated and low != high:
                raise ValueError("it nests a repetition inside a repetition")
            _check(body, repeated or high > 1)
            if high - low > _LONG and name != "POSSESSIVE_REPEAT":
                letters = _alphabet(body)
                if is_open and _overlap(taking, letters):
                    raise ValueError("it has two long repetitions in a row that can match the same text")
                is_open, taking = True, letters
                continue
            here = _first(body)
        else:
            here = _chars(name, av)
        if is_open and not _nullable([(op, av)]) and not _overlap(taking, here):
            is_open = False  # a character the repetition cannot take: the two cannot share text


def unsafe(pattern: str) -> str | None:
    """Why a user pattern could backtrack without bound, in words for a message; None when it cannot.

    The pattern must compile (``re.error`` otherwise). See "user patterns" above for the shapes.
    """
    try:
        _check(_parse(pattern), repeated=False)
    except ValueError as exc:
        return str(exc)
    return None


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


def redact(text: str, extra_patterns: Iterable[str] = ()) -> str:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``."""
    low = text.lower()
    if len(low) != len(text):  # "İ", alone in Unicode, lower-cases to two characters; offsets must stay aligned
        low = text.replace("\u0130", "I").lower()
    markers = _Markers(text) if "[REDACTED:" in text else None
    spans: list[tuple[int, int, int, str]] = []  # start, rule, end, kind
    for index in sorted({i for keyword, rules in _BY_KEYWORD.items() if keyword in low for i in rules}):
        kind, _, cased, _, handler = _RULES[index]
        subject = text if cased else low
        for m in _rule(index).finditer(subject) if markers is None else markers.matches(_rule(index), subject):
            spans += [(a, index, b, kind) for a, b in handler(m, text) if b > a]
    extra = _extra(extra_patterns) if extra_patterns else []
    if extra:
        spans += [(a, len(_RULES), b, CUSTOM) for a, b in _extra_spans(text, extra)]
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
