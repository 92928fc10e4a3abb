"""The rules that find secrets: one named record for each shape a provider documents or people paste.

A rule names its kind (``[REDACTED:<kind>]``), the keywords one of which a match contains (in
lower case: the rule runs only on a text that holds one), whether its pattern reads the text as
written or lower-cased, and a handler that says which part of a match is the secret.

Python's ``re`` backtracks, so every rule is written to run in linear time: where it can, it
begins with a literal (which ``re`` finds with a fast scan) and checks after it that the literal
starts a token, so a long run of characters holds one place to start, not one per character;
every repetition is bounded unless it ends the pattern (then a match takes the whole run and the
search goes on after it), and repeated groups are short and cannot share their text two ways.
Patterns are text here; ``keeper.redact`` compiles a rule the first time a text holds one of its
keywords.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable

    Handler = Callable[["re.Match[str]", str], "list[tuple[int, int]]"]


class Rule:
    """One kind of secret: its name, the keywords that let it run, its pattern and its handler.

    ``cased``: the pattern reads the text as written; else the lower-cased text (offsets are the same).
    """

    __slots__ = ("cased", "handler", "keywords", "kind", "pattern")

    def __init__(
        self, kind: str, keywords: tuple[str, ...], pattern: str, handler: Handler, cased: bool = True
    ) -> None:
        self.kind, self.keywords, self.pattern, self.handler, self.cased = kind, keywords, pattern, handler, cased


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
_TOKEN = "[A-Za-z0-9_-]"
_GITLAB = ("glpat-", "gldt-", "glrt-", "glcbt-", "glptt-", "glft-", "glsoat-", "gloas-", "glimt-", "glagent-")

RULES: tuple[Rule, ...] = (
    Rule(
        "private-key",
        ("private key",),
        r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----(?s:.*?)"
        r"(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
        _whole,
    ),
    Rule(
        "private-key",
        ("private-lines",),
        r"Private-Lines: [0-9]{1,4}\r?\n"
        r"(?P<v>[A-Za-z0-9+/=]{1,128}(?=\r?\n|\Z)(?:\r?\n[A-Za-z0-9+/=]{1,128}(?=\r?\n|\Z)){0,512})",
        _value,
    ),
    Rule("anthropic-key", ("sk-ant-",), _tok("sk-ant-") + f"{_TOKEN}{{20,}}", _whole),
    Rule(
        "openai-key",
        ("sk-",),
        _tok("sk-") + f"(?:(?:proj|svcacct|admin|None)-{_TOKEN}{{20,}}|[A-Za-z0-9]{{32,}})",
        _whole,
    ),
    Rule(
        "aws-access-key",
        ("akia", "asia", "abia", "acca", "a3t"),
        _tok("(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])") + f"[A-Z0-9]{{16}}{_END}",
        _whole,
    ),
    Rule(
        "github-token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        _tok("gh[pousr]_") + "[A-Za-z0-9]{30,}|" + _tok("github_pat_") + "[A-Za-z0-9_]{22,}",
        _whole,
    ),
    Rule(
        "gitlab-token",
        (*_GITLAB, "gr1348941"),
        _tok(*_GITLAB) + f"{_TOKEN}{{20,}}|" + _tok("GR1348941") + f"{_TOKEN}{{20,}}",
        _whole,
    ),
    Rule(
        "slack-token",
        ("xox", "xapp-"),
        _tok("xox[abposre]-") + "[A-Za-z0-9-]{10,}|" + _tok("xapp-") + "[0-9]-[A-Za-z0-9-]{10,}",
        _whole,
    ),
    Rule(
        "slack-webhook",
        ("hooks.slack.com",),
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_+-]{20,}",
        _whole,
    ),
    Rule("discord-webhook", ("discord",), rf"discord(?:app)?\.com/api/webhooks/[0-9]{{5,30}}/{_TOKEN}{{20,}}", _whole),
    Rule(
        "discord-token",
        ("discord",),
        _tok("[MNO]") + rf"{_TOKEN}{{23,27}}\.{_TOKEN}{{6,7}}\.{_TOKEN}{{27,40}}{_END}",
        _whole,
    ),
    Rule("telegram-token", (":aa",), rf"[0-9](?<![A-Za-z0-9_:\]][0-9])[0-9]{{5,11}}:AA{_TOKEN}{{30,}}", _whole),
    Rule("stripe-key", ("_live_", "_test_", "_prod_"), _tok("[spr]k_(?:live|test|prod)_") + "[A-Za-z0-9]{16,}", _whole),
    Rule("stripe-webhook-secret", ("whsec_",), _tok("whsec_") + "[A-Za-z0-9]{24,}", _whole),
    Rule("twilio-key", ("sk",), _tok("SK") + f"[0-9a-fA-F]{{32}}{_END}", _whole),
    Rule("sendgrid-key", ("sg.",), _tok(r"SG\.") + rf"{_TOKEN}{{16,32}}\.{_TOKEN}{{16,}}", _whole),
    Rule("mailgun-key", ("key-",), _tok("key-") + f"[0-9a-f]{{32}}{_END}", _whole),
    Rule("mailchimp-key", ("-us",), _tok("[0-9a-f]") + f"[0-9a-f]{{31}}-us[0-9]{{1,2}}{_END}", _whole),
    Rule("npm-token", ("npm_",), _tok("npm_") + "[A-Za-z0-9]{16,}", _whole),
    Rule(  # every PyPI and TestPyPI token is a macaroon starting "AgE"; cut short, it is still one
        "pypi-token",
        ("pypi-",),
        _tok("pypi-") + f"(?:AgE{_TOKEN}{{8,}}|{_TOKEN}{{50,}})",
        _whole,
    ),
    Rule("huggingface-token", ("hf_", "api_org_"), _tok("hf_", "api_org_") + "[A-Za-z0-9]{30,}", _whole),
    Rule("google-api-key", ("aiza",), _tok("AIza") + f"{_TOKEN}{{35}}{_END}", _whole),
    Rule("google-oauth-token", ("ya29.",), _tok(r"ya29\.") + f"{_TOKEN}{{20,}}", _whole),
    Rule("google-client-secret", ("gocspx-",), _tok("GOCSPX-") + f"{_TOKEN}{{20,}}", _whole),
    Rule(
        "azure-storage-key",
        ("accountkey", "sharedaccesskey"),
        r"(?:account|sharedaccess)key[ \t]{0,4}=[ \t]{0,4}(?P<v>[^;\s\"'<>\[\]]{8,})",
        _value,
        cased=False,
    ),
    Rule(
        "azure-sas",
        ("sharedaccesssignature",),
        r"sharedaccesssignature[ \t]{0,4}=[ \t]{0,4}(?P<v>[^;\s\"'<>\[\]]{8,})",
        _value,
        cased=False,
    ),
    Rule("azure-sas", ("sig=",), r"sig=(?<=[?&]sig=)(?P<v>[a-z0-9%+/=]{16,})", _value, cased=False),
    Rule(
        "azure-client-secret",
        ("q~",),
        r"(?<![A-Za-z0-9_~.\]-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.\[-])",
        _whole,
    ),
    Rule("heroku-key", ("hrku-",), _tok("HRKU-") + f"{_TOKEN}{{40,}}", _whole),
    Rule("digitalocean-token", ("_v1_",), _tok("do[por]_v1_") + "[a-f0-9]{64}", _whole),
    Rule(
        "shopify-token",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        _tok("shp(?:at|ca|pa|ss)_") + "[a-fA-F0-9]{32}",
        _whole,
    ),
    Rule(
        "atlassian-token",
        ("atatt3", "atctt3", "atbb"),
        _tok("ATATT3", "ATCTT3") + "[A-Za-z0-9_=-]{50,}|" + _tok("ATBB") + "[A-Za-z0-9]{32,}",
        _whole,
    ),
    Rule("databricks-token", ("dapi",), _tok("dapi") + f"[a-f0-9]{{32}}(?:-[0-9])?{_END}", _whole),
    Rule("vault-token", ("hvs.", "hvb.", "hvr."), _tok(r"hv[sbr]\.") + f"{_TOKEN}{{24,}}", _whole),
    Rule("doppler-token", ("dp.",), _tok(r"dp\.") + r"(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", _whole),
    Rule("linear-key", ("lin_api_",), _tok("lin_api_") + "[A-Za-z0-9]{40,}", _whole),
    Rule(
        "notion-token",
        ("ntn_", "secret_"),
        _tok("ntn_") + "[0-9]{11}[A-Za-z0-9]{35,}|" + _tok("secret_") + f"[A-Za-z0-9]{{43}}{_END}",
        _whole,
    ),
    Rule("postman-key", ("pmak-",), _tok("PMAK-") + "[a-f0-9]{24}-[a-f0-9]{34}", _whole),
    Rule("grafana-token", ("glc_", "glsa_"), _tok("glc_", "glsa_") + "[A-Za-z0-9+/_]{32,}", _whole),
    Rule("sentry-token", ("sntrys_", "sntryu_"), _tok("sntry[su]_") + "[A-Za-z0-9+/=_]{40,}", _whole),
    Rule("tailscale-key", ("tskey-",), _tok("tskey-") + "[A-Za-z0-9-]{20,}", _whole),
    Rule("supabase-token", ("sbp_", "sb_secret_"), _tok("sbp_", "sb_secret_") + f"{_TOKEN}{{30,}}", _whole),
    Rule("docker-token", ("dckr_pat_",), _tok("dckr_pat_") + f"{_TOKEN}{{12,}}", _whole),
    Rule("age-key", ("age-secret-key-1",), _tok("AGE-SECRET-KEY-1") + "[0-9A-Z]{50,}", _whole),
    Rule("rubygems-key", ("rubygems_",), _tok("rubygems_") + "[a-f0-9]{16,}", _whole),
    Rule("groq-key", ("gsk_",), _tok("gsk_") + "[A-Za-z0-9]{40,}", _whole),
    Rule("replicate-token", ("r8_",), _tok("r8_") + "[A-Za-z0-9]{30,}", _whole),
    Rule("xai-key", ("xai-",), _tok("xai-") + "[A-Za-z0-9]{60,}", _whole),
    Rule(  # "-" is glue here: a run of eyJ-eyJ-… without dots holds one start, not one per prefix
        "jwt",
        ("eyj",),
        _tok("eyJ", glue=_RUN_GLUE) + rf"{_TOKEN}{{8,}}\.eyJ{_TOKEN}{{8,}}\.{_TOKEN}{{8,}}",
        _whole,
    ),
    Rule(
        "auth-header",
        ("authorization",),
        _ltok("authorization") + r"[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?"
        r"(?:(?P<scheme>bearer|basic|token|digest|negotiate|ntlm|bot|apikey|sso-key)[ \t]{1,4})?"
        r"(?P<v>[^\s\"'<>\[\]{},;$][^\s\"'<>\[\]{},;]{3,})",
        _authorization,
        cased=False,
    ),
    Rule(
        "auth-header",
        ("bearer",),
        _ltok("bearer") + r"[ \t]{1,4}(?P<v>[a-z0-9._~+/-]{20,}=*)",
        _generated,
        cased=False,
    ),
    Rule("cookie", ("cookie",), _ltok("cookie") + r"[\"']?[ \t]{0,4}:[ \t]{0,4}(?P<v>[^\r\n]+)", _cookie, cased=False),
    Rule("url-password", ("://",), r"://[^\s:/?#@\"'<>\[\]]{0,256}:(?P<v>[^\s/?#\"'<>\[\]]{1,256})@", _value),
    Rule(
        "cli-password",
        ("--",),
        r"--(?<![a-z0-9_\]-]--)(?!no-)(?:[a-z0-9]{1,20}-){0,3}"
        "(?:password|passwd|pass|passphrase|token|secret|api-?key|access-key|secret-key|client-secret)"
        f"(?:=|{_GAP})(?!-)" + _VALUE,
        _value,
        cased=False,
    ),
    Rule(
        "cli-password",
        ("mysql", "mariadb", "sshpass", "mongo", "login"),
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
    Rule("cli-password", ("redis-cli",), _after(_tok("redis-cli"), "-a") + _OPTION_VALUE, _value),
    Rule(
        "cli-password",
        ("curl",),
        _after(_tok("curl"), "(?:-[uU]|--user|--proxy-user)")
        + r"(?:=|[ \t]{1,8})?[\"']?[^\s:\"'|;&]{0,256}:(?P<v>[^\s\"'|;&]+)",
        _value,
    ),
    Rule(
        "cli-password",
        ("htpasswd",),
        _tok("htpasswd") + rf"(?P<o>(?:{_GAP}-[a-zA-Z]{{1,8}}){{1,4}})"
        rf"(?P<a>(?:{_GAP}[^\s|;&-][^\s|;&]{{0,255}}){{2,3}})",
        _htpasswd,
    ),
    Rule("cli-password", ("pass:",), rf"-pass(?:in|out|word)?{_GAP}pass:(?P<v>[^\s\"'|;&]+)", _value),
    Rule(
        "cli-password",
        ("pass",),
        rf"-(?<![A-Za-z0-9_\]-]-)(?:src|dest)?(?:store|key)pass(?:word)?{_GAP}(?!-)" + _VALUE,
        _value,
    ),
    Rule(
        "secret",
        ("pass", "pw", "secret", "token", "key", "cred", "auth"),
        f"(?:{_KEYWORD}){_NAME_TAIL}{_ASSIGN}{_VALUE}",
        _assignment,
        cased=False,
    ),
    Rule(
        "secret",
        ("pass", "pwd", "auth", "creds"),
        "(?:"
        + "|".join(f"{w}(?<=[a-z0-9]{w})" for w in ("Pass", "Pwd", "Auth", "Creds"))
        + f")[0-9]{{0,6}}{_ASSIGN}{_VALUE}",
        _assignment,
    ),
    Rule(  # in words: "the staging db password is hunter2", "pw for prod was 'x'", "password set to y"
        "secret",
        ("pass", "pw"),
        r"(?<![a-z0-9])(?:pass(?:word|wd|phrase|code)?|pw)s?"
        r"(?:[ \t]+(?:for|of|on|to)(?:[ \t]+[^\s]{1,40}){1,3}?)?"
        r"(?:(?:[ \t]+(?:is|was|has[ \t]+been|got))?[ \t]+(?:set|changed|reset|updated)[ \t]+to"
        r"|[ \t]+(?:is|was|are|were|remains|becomes)(?:[ \t]+(?:now|still|just))?:?)[ \t]+" + SPOKEN_VALUE,
        _spoken,
        cased=False,
    ),
    Rule(  # "log in with password hunter2", "use pw Tr0ub4dor": only a value that looks generated
        "secret",
        ("pass", "pw"),
        r"(?<![a-z0-9])(?:use|using|with|enter|type|try)[ \t]+(?:the[ \t]+|a[ \t]+)?"
        r"(?P<how>pass(?:word|wd|phrase|code)?|pw)[ \t]+" + SPOKEN_VALUE,
        _spoken,
        cased=False,
    ),
    Rule(  # .netrc: "machine host login user password secret" (or "default login …"), on one line or several
        "secret",
        ("machine", "default"),
        r"(?<![A-Za-z0-9_])(?:machine[ \t]+[^\s]{1,256}|default)"
        r"(?:\s{1,64}(?:account|port)[ \t]+[^\s]{1,256}){0,2}\s{1,64}login[ \t]+[^\s]{1,256}"
        r"(?:\s{1,64}(?:account|port)[ \t]+[^\s]{1,256}){0,2}\s{1,64}password[ \t]+" + SPOKEN_VALUE,
        _spoken,
    ),
)
