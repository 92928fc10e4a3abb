"""What a memory item claims about the code, read from its text mechanically, and where each held when saved.

An item's text names repository paths (``src/app.py``, also as ``src/app.py:42``,
``tests/test_api.py::test_login`` or ``docs/guide.md#install``), identifiers (backticked, or
code-shaped: ``parse_order``, ``rowsFromFile``, ``run()``, ``--load-extension``) and constants or
config keys with their value (``TTL = 30``, `` `save_every: 10` ``). No model and no git: words,
and the files themselves. At save time ``observe`` notes where each claim held: the path existed;
the files (among the session's changed ones and the ones the item names) that define the identifier
(``defined``: judged again by its definition, an import under its name is none) or, when none
defines it, hold it (judged by presence, as are backticked hyphenated names: a workflow job, a
subcommand, a package); the file that gave the constant that value. ``keeper.store.stale`` judges them again.

A claim is a small dict, kept on the item's provenance event::

    {"kind": "path", "name": "src/app.py", "in": ["src/app.py"]}
    {"kind": "name", "name": "restkey", "in": ["sqlite_utils/utils.py"], "defined": True}
    {"kind": "value", "name": "TTL", "value": "30", "in": ["src/cache.py"]}

An empty ``in`` is a claim that did not hold when it was saved (a folder a decision says to
create, a word no file held): it is never judged. Every path, from a text or from a record, is
confined to the project (``confined``) before anything looks at it. Standard library only.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    Add = Callable[[str, str, str], None]

KINDS = ("path", "name", "value")  # what a claim may be about
MAX_CLAIMS = 8  # claims kept for one item
MAX_IN = 3  # files noted for one claim
MAX_NAME = 120  # characters of a claimed path, identifier or value
MAX_BYTES = 1 << 20  # a larger file is not read: its claims are unknown, never "gone"
MAX_OBSERVED = 40  # files one save reads to see where an item's claims hold
LINES_KEPT = 24  # fingerprinted lines of one file a session wrote
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_EDGE = "`'\"()[]{}<>,;!?*"
_DEFINERS = ("def", "class", "function", "const", "let", "var", "fn", "func", "type", "struct", "enum", "interface")


def confined(root: str, rel: object) -> str | None:
    """``rel`` (``/``-separated, from a text or a record) as a path inside ``root``, or None when it
    could lead anywhere else: absolute, a drive or UNC name (``C:``, ``\\\\host\\share``), ``..``, a
    control character. Looked at as text only, before any stat."""
    if not isinstance(rel, str) or not rel or len(rel) > 300 or not rel.isprintable():
        return None
    if "\\" in rel or rel[0] in "/~" or ":" in rel.split("/", 1)[0]:
        return None
    rel = rel.rstrip("/")
    probe = f"/{rel}/"
    if "//" in probe or "/./" in probe or "/../" in probe:
        return None
    return f"{root.rstrip(os.sep)}{os.sep}{rel if os.sep == '/' else rel.replace('/', os.sep)}"


def inside(root: str, full: str) -> bool:
    """Whether ``full``, its links followed, is still inside ``root`` (a link may point out)."""
    real, top = os.path.realpath(full), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def present(full: str) -> bool:
    """Whether a path is there, itself (a link is not followed out of the project)."""
    try:
        os.lstat(full)
    except (OSError, ValueError):
        return False
    return True


def opened(full: str) -> tuple[int, int, bytes | None] | None:
    """``(size, mtime_ns, bytes)`` of a regular file, its bytes None when it is larger than
    ``MAX_BYTES`` or cannot be read as one (a link, a FIFO, a folder: never followed, never waited
    on); None when nothing is there."""
    import stat

    if not _NOFOLLOW and os.path.islink(full):
        return (-1, -1, None)
    try:
        fd = os.open(full, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError):
        return (-1, -1, None)
    with os.fdopen(fd, "rb") as fh:
        found = os.fstat(fh.fileno())
        if not stat.S_ISREG(found.st_mode) or found.st_size > MAX_BYTES:
            return (found.st_size, found.st_mtime_ns, None)
        try:
            data = fh.read(MAX_BYTES + 1)
        except OSError:
            return (found.st_size, found.st_mtime_ns, None)
    return (found.st_size, found.st_mtime_ns, data if len(data) <= MAX_BYTES else None)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def read(root: str, rel: object) -> bytes | None:
    """A regular file of the project, whole, when it is confined and at most ``MAX_BYTES``; else None."""
    full = confined(root, rel)
    if full is None or not inside(root, os.path.dirname(full)):
        return None
    found = opened(full)
    return found[2] if found is not None else None


def digest(data: bytes) -> str:
    """A file's content as the kept verdicts compare it."""
    from keeper.store.identity import sha256_hex

    return sha256_hex(data)[:32]


def listing(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except (OSError, ValueError):
        return []


def decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


# -- what a text claims -------------------------------------------------------------------------


def _is_ident(word: str) -> bool:
    return bool(word) and (word[0].isalpha() or word[0] == "_") and all(ch in _WORD for ch in word)


def _is_flag(word: str) -> bool:
    body = word.lstrip("-")
    shaped = len(body) >= 2 and body[0].isalpha() and all(ch in _WORD or ch == "-" for ch in body)
    return word.startswith("--") and shaped


def _is_hyphenated(word: str) -> bool:
    """``readthedocs-preview``, ``session-start``: a job, command or package name, read only when
    backticked (prose has hyphenated words too)."""
    parts = word.split("-")
    return len(parts) > 1 and word[:1].isalpha() and all(p and all(ch in _WORD for ch in p) for p in parts)


def _code_shaped(word: str) -> bool:
    """``parse_order``, ``rowsFromFile``, ``--load-extension``: not a word of prose."""
    if _is_flag(word):
        return True
    if not _is_ident(word) or len(word) < 3:
        return False
    inner = word.strip("_")
    camel = any(a.islower() and b.isupper() for a, b in zip(word, word[1:]))
    return ("_" in inner and any(ch.isalpha() for ch in inner)) or camel


def _file_shaped(word: str) -> bool:
    """``README.md``, ``app.py``: a stem and a short extension that starts with a letter."""
    stem, dot, ext = word.rpartition(".")
    named = dot and len(stem.rsplit("/", 1)[-1]) >= 2 and any(c.isalnum() for c in stem)  # not ``e.g``
    return bool(named) and 1 <= len(ext) <= 6 and ext[0].isalpha() and ext.isalnum()


def _path_of(word: str) -> tuple[str, str]:
    """A path word without its place (``:42``, ``:42:7``, ``#install``, ``::test_login``), and the
    name after ``::`` when there is one; ``src\\app.py`` and ``./src/app.py`` are ``src/app.py``
    (``confined`` still refuses what could lead out: a drive, ``..``)."""
    word = word.replace("\\", "/")
    while word.startswith("./"):
        word = word[2:]
    word, _, anchor = word.partition("::")
    word = word.split("#", 1)[0]
    head, colon, tail = word.rpartition(":")
    while colon and tail.lstrip("L").isdigit():
        word = head
        head, colon, tail = word.rpartition(":")
    return word.rstrip("/"), anchor.split("(", 1)[0] if _is_ident(anchor.split("(", 1)[0]) else ""


def _is_path(word: str) -> bool:
    if "://" in word or word.startswith(("/", "~", "$", "-", "\\", "@")) or ".." in word.split("/"):
        return False
    if any(ch.isspace() or ch in "=*?<>|\"'" for ch in word) or not any(ch.isalnum() for ch in word):
        return False
    return "/" in word or _file_shaped(word)


def normal_value(value: str) -> str:
    """A value as compared: no quotes, spaces, trailing comment or separator (a formatter's changes)."""
    for mark in (" #", " //"):
        value = value.split(mark, 1)[0]
    value = value.strip().rstrip(",;").strip()
    return "".join(value.replace("'", "").replace('"', "").replace("`", "").split())[:MAX_NAME]


def _constant(left: str, right: str, fenced: bool) -> tuple[str, str] | None:
    left = left.split(":", 1)[0].strip()  # ``TTL: int = 30``
    name = left.split()[-1] if left else ""
    value = normal_value(right.strip().split()[0].rstrip(".,;)") if right.strip() else "")
    if not (_is_ident(name) and value) or len(name) > MAX_NAME:
        return None
    return (name, value) if fenced or name.isupper() or "_" in name.strip("_") else None


def _spans(text: str) -> tuple[list[str], str]:
    """The backticked spans of a text, and the text without them."""
    pieces = text.split("`")
    fenced = [p for p in pieces[1::2] if p.strip()] if len(pieces) > 2 else []
    rest = " ".join(pieces[0::2]) if len(pieces) > 2 else text
    return fenced, rest


def _fenced(span: str, add: Add) -> None:
    span = span.strip()
    for sep in (" = ", "=", ": "):
        if sep in span:
            left, _, right = span.partition(sep)
            found = _constant(left, right, True)
            if found:
                add("value", *found)
                return
    words = span.split()
    if len(words) == 1:
        word = words[0].rstrip("()").rstrip(".,;:")
        if _is_path(word):
            path, anchor = _path_of(word)
            add("path", path, "")
            if anchor:
                add("name", anchor, "")
        elif _is_flag(word) or _is_hyphenated(word):
            add("name", word, "")
        elif _is_ident(word.rsplit(".", 1)[-1]):
            add("name", word.rsplit(".", 1)[-1], "")
        return
    for word in words:
        word = word.strip(_EDGE).rstrip("()").rstrip(".,;:")
        if _code_shaped(word) or _is_hyphenated(word):
            add("name", word, "")


def _bare(text: str, add: Add) -> None:
    words = text.split()
    for index, raw in enumerate(words):
        if raw == "=" and 0 < index < len(words) - 1:
            found = _constant(words[index - 1].strip(_EDGE), words[index + 1], False)
            if found:
                add("value", *found)
            continue
        word = raw.strip(_EDGE).rstrip(".,;:")
        if "=" in word and not word.startswith("-"):
            left, _, right = word.partition("=")
            found = _constant(left, right, False)
            if found:
                add("value", *found)
            continue
        if _is_path(word):
            path, anchor = _path_of(word)
            add("path", path, "")
            if anchor:
                add("name", anchor, "")
        elif _code_shaped(word[:-2] if word.endswith("()") else word):
            add("name", word[:-2] if word.endswith("()") else word, "")


def extract(text: str) -> list[tuple[str, str, str]]:
    """``(kind, name, value)`` of what a text claims about the code, in order, each once, at most
    ``MAX_CLAIMS``: ``path`` (a repository path), ``name`` (an identifier or flag), ``value`` (a
    constant or config key and its value)."""
    found: list[tuple[str, str, str]] = []

    def add(kind: str, name: str, value: str) -> None:
        claim = (kind, name[:MAX_NAME], value)
        names = {(k, n) for k, n, _ in found}
        if name and (kind, claim[1]) not in names and not (kind == "name" and ("value", claim[1]) in names):
            found.append(claim)

    fenced, rest = _spans(text)
    for span in fenced:
        _fenced(span, add)
    _bare(rest, add)
    return found[:MAX_CLAIMS]


# -- where a claim holds ------------------------------------------------------------------------


def occurs(name: str, text: str) -> list[int]:
    """Where ``name`` stands whole in ``text`` (not inside a longer identifier)."""
    edge = _WORD | {"-"} if "-" in name else _WORD
    found: list[int] = []
    start = text.find(name)
    while start >= 0 and len(found) < 1000:
        end = start + len(name)
        if (start == 0 or text[start - 1] not in edge) and (end >= len(text) or text[end] not in edge):
            found.append(start)
        start = text.find(name, end)
    return found


def _line_around(text: str, at: int, size: int) -> tuple[str, str]:
    """The part of ``at``'s line before it, and after ``size`` characters from it."""
    begin = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[begin:at], text[at + size : end if end >= 0 else len(text)]


def defines(name: str, text: str) -> bool:
    """Whether ``text`` defines ``name`` rather than only using it: ``def name``, ``class name``,
    ``name = …`` (a parameter's default too), ``name: …`` at a line's start, a quoted ``"--flag"``."""
    for at in occurs(name, text):
        before, after = _line_around(text, at, len(name))
        words = before.split()
        if words and words[-1] in _DEFINERS:
            return True
        rest = after.lstrip()
        if rest.startswith("=") and not rest.startswith("=="):
            return True
        if not before.strip() and rest.startswith(":"):
            return True
        if name.startswith("-") and before[-1:] in ("'", '"'):
            return True
    return False


def values(name: str, text: str) -> list[str]:
    """The values ``text`` gives ``name`` at a line's start (``NAME = 30``, ``NAME: int = 30``,
    ``name: 30``, ``const NAME = 30``, ``NAME=30``), normalised (``normal_value``)."""
    found: list[str] = []
    for at in occurs(name, text):
        before, after = _line_around(text, at, len(name))
        if len(before.split()) > 3 or any(ch in before for ch in "=([{,.\"'"):
            continue
        rest = after.lstrip()
        if rest.startswith(":") and "=" in rest and "==" not in rest:
            rest = rest[rest.index("=") :]
        if rest[:1] in (":", "=") and rest[:2] != "==":
            value = normal_value(rest[1:])
            if value:
                found.append(value)
    return found


def observe(
    text: str, root: str, files: Iterable[str], cache: dict[str, str | None] | None = None
) -> list[dict[str, Any]]:
    """The claims of an item's text with where each held now, at its save (``files``: the session's
    changed files, relative to ``root``; ``cache``: the files read for the save's other items); read
    bounded, confined to ``root``."""
    claims = extract(text)
    if not claims:
        return []
    cache = {} if cache is None else cache

    def content(rel: str) -> str | None:
        if rel not in cache and len(cache) < MAX_OBSERVED * 4:
            data = read(root, rel)
            cache[rel] = decode(data) if data is not None else None
        return cache.get(rel)

    session = [f for f in files if isinstance(f, str)][:MAX_OBSERVED]
    named: list[str] = []
    found: list[dict[str, Any]] = []
    for kind, name, _ in claims:
        if kind != "path":
            continue
        spot = _where_path(root, name, session)
        found.append({"kind": "path", "name": name, "in": [spot] if spot else []})
        named += [spot] if spot and os.path.isfile(os.path.join(root, spot)) else []
    candidates = list(dict.fromkeys([*named, *session]))
    for kind, name, value in claims:
        if kind == "name":
            texts = [(rel, t) for rel in candidates if (t := content(rel)) is not None and occurs(name, t)]
            defining = [rel for rel, t in texts if defines(name, t)] if _is_ident(name) else []
            where = (defining or [rel for rel, _ in texts])[:MAX_IN]
            found.append({"kind": "name", "name": name, "in": where, **({"defined": True} if defining else {})})
        elif kind == "value":
            where = [rel for rel in candidates if (t := content(rel)) is not None and value in values(name, t)]
            found.append({"kind": "value", "name": name, "value": value, "in": where[:1]})
    return found


def _where_path(root: str, name: str, session: list[str]) -> str:
    """Where a named path is in the project: itself, or a changed file of that name (``utils.py``
    for ``pkg/utils.py``); '' when it is nowhere (yet)."""
    full = confined(root, name)
    if full is not None and os.path.exists(full):
        return name
    if "/" not in name:
        return next((f for f in session if f.rsplit("/", 1)[-1] == name), "")
    return ""


# -- the lines a session wrote ------------------------------------------------------------------


def line_key(line: str) -> str:
    """A line as a fingerprint compares it: without spaces, quotes as one kind, no trailing comma;
    '' for a line too short or plain to tell anything (a brace, ``pass``, ``return``)."""
    flat = "".join(line.split()).replace("'", '"').rstrip(",;")
    return flat if len(flat) >= 8 and any(ch.isalnum() for ch in flat) else ""


def line_hash(key: str) -> str:
    from keeper.store.identity import sha256_hex

    return sha256_hex(key.encode("utf-8", "surrogatepass"))[:10]


def fingerprint(text: str, limit: int = LINES_KEPT) -> list[str]:
    """Hashes of at most ``limit`` distinct non-trivial lines of ``text`` (what a session wrote),
    spread evenly over it: a whole file written is told by its body, not only its imports."""
    keys = list(dict.fromkeys(k for k in (line_key(line) for line in text.splitlines()[:5000]) if k))
    picked = keys if len(keys) <= limit else [keys[i * len(keys) // limit] for i in range(limit)]
    return [line_hash(k) for k in picked]


def line_hashes(text: str) -> set[str]:
    """The hashes of every non-trivial line of a file as it is now."""
    return {line_hash(k) for k in (line_key(line) for line in text.splitlines()) if k}


JOINED_LINES = 12  # lines a formatter may split one written line over (a call, a signature, a literal)
JOINED_CHARS = 2000  # characters of such a run, joined
_OPENS = ("(", "[", "{", ":", "=")  # how the first line of a line split by a formatter ends


def joined_hashes(text: str) -> set[str]:
    """The hashes of runs of up to ``JOINED_LINES`` lines of a file read as one line, each run from
    a line that opens a bracket or a block: a line a formatter split over several (ruff or black
    exploding a call, adding the trailing comma before its closing bracket, putting a one-line
    ``if x: y`` on two) is still the line the session wrote."""
    flat = ["".join(line.split()).replace("'", '"') for line in text.splitlines()[:5000]]
    found: set[str] = set()
    for start, first in enumerate(flat):
        if not first.endswith(_OPENS):
            continue
        run = first
        for more in flat[start + 1 : start + JOINED_LINES]:
            run += more
            if len(run) > JOINED_CHARS:
                break
            key = run.replace(",)", ")").replace(",]", "]").replace(",}", "}").rstrip(",;")
            found.add(line_hash(key))
    return found
