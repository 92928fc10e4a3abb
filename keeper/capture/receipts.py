"""Use receipts: which of the items Keeper put into a session's context the session went on to use.

The items are those its start-up context showed, and the memory items a recall hit carried
(``/keeper:recall`` and automatic recall, kept by ``hooks.prompts`` in the session's ``recalled``
file; such a receipt says so: ``tool:Bash after auto-recall``).

Deterministic, no model: an item was used when its distinctive tokens (identifiers, paths, file
names, flags, numbers, spans in backticks, proper nouns; never common words) reappear in what the
assistant wrote or in a tool's input after the start. One strong token (an identifier, a path, a
number) in one reply or one tool input is enough; weak ones (a proper noun, an acronym) need two.
A token the user's own prompt held is no evidence (the assistant may be repeating the user), and
Keeper's own save commands are not read as text; a save that restates a shown item is a use of it
instead, once (``restated``), and stays an echo, no new evidence (``evidence``).

Each Stop reads only the transcript's new lines (``transcript.Activity`` passes what was said), so
the work is bounded by what is new; the tokens of the shown items are worked out once a session
and kept in the session's machine-local ``receipts`` file with the ids already receipted. A
receipt is a ``used`` event in the item's provenance, once per item and session; the items a
session began to watch and used are counted in the project's tally too (``store.loads``), which
SessionStart orders by.
"""

from __future__ import annotations

import os

from keeper import jsonio
from keeper.store import loads, markers, provenance

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from keeper.store import paths

USED = provenance.USED
MAX_ITEMS = 200  # shown items watched in one session
MAX_TOKENS = 16  # distinctive tokens watched for one item
MAX_HEARD = 2000  # watched tokens the user's prompts held, kept
MAX_SCAN = 2 << 20  # characters of replies and tool inputs read in one update
MAX_PIECE = 64 << 10  # characters of one reply or tool input read
STRONG, WEAK = 2, 1  # a token's weight; a use needs USE_WEIGHT in one reply or tool input
USE_WEIGHT = 2
VIAS = ("recall", "auto-recall")  # how else than at its start an item reaches a session (``hooks.prompts``)
MAX_RECALLED = 400  # recall hits of one session looked at
_WORD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")
_TO_SPACE = str.maketrans({chr(i): " " for i in range(128) if chr(i) not in _WORD})
_EDGE = "`'\"()[]{}<>,;:!?*.…"
# Words that look distinctive (capitalised, upper case) but say nothing of one item.
COMMON = frozenset(
    (  # noqa: SIM905 - a word list reads best as text
        "always never use uses used using keep keeps prefer avoid must should note only also every each "
        "when then this that these those with without from into after before because since until while "
        "the and but for not all any our their your its api apis url urls cli json yaml http https sql "
        "todo fixme note readme the tests test code file files user users data config docs"
    ).split()
)


def _strip(word: str) -> str:
    return word.strip(_EDGE)


def _weight(word: str, first: bool) -> int:
    """How much a word of an item's text says that a later text drew on the item (0: nothing)."""
    bare = word.lstrip("-")
    low = word.lower()
    if len(bare) < 3 or low in COMMON:
        return 0
    if word.startswith("--") or "/" in word or "_" in bare.strip("_"):
        return STRONG
    stem, dot, ext = word.rpartition(".")
    if dot and len(stem) >= 2 and 1 <= len(ext) <= 6 and ext[0].isalpha() and ext.isalnum():
        return STRONG  # a file name
    if any(c.isdigit() for c in word):
        digits = "".join(c for c in word if c.isdigit())
        year = len(digits) == 4 and digits[:2] in ("19", "20") and word.isdigit()
        return 0 if year or (word.isdigit() and len(word) < 3) else STRONG
    if any(a.islower() and b.isupper() for a, b in zip(word, word[1:])):
        return STRONG  # camelCase
    if not word.isalpha():
        return 0
    if word.isupper() and len(word) >= 3:
        return WEAK  # an acronym
    return WEAK if word[0].isupper() and not first and len(word) >= 4 else 0  # a proper noun


def distinctive(text: str) -> dict[str, int]:
    """An item's distinctive tokens (lower case) and their weights, the strongest first."""
    found: dict[str, int] = {}
    for span in text.split("`")[1::2]:  # code spans: a command, a name
        span = _strip(span.strip()).lower()  # `f()` is the name f, as said anywhere
        if len(span) >= 4 and span not in COMMON:
            found[span] = STRONG
    first = True
    for raw in text.split():
        word = _strip(raw)
        weight = _weight(word, first) if word else 0
        if weight:
            found[word.lower()] = max(found.get(word.lower(), 0), weight)
        first = raw.endswith((".", "!", "?", ":"))
    ranked = sorted(found.items(), key=lambda kv: (-kv[1], -len(kv[0])))
    return dict(ranked[:MAX_TOKENS])


def _present(token: str, text: str, words: set[str]) -> bool:
    """Whether ``token`` stands in ``text`` (lower case; ``words``: its words) as a whole."""
    parts = token.translate(_TO_SPACE).split()
    if not parts or not all(p in words for p in parts):
        return False
    if len(parts) == 1 and parts[0] == token:
        return True
    at = text.find(token)
    while at >= 0:
        before = text[at - 1] if at else " "
        after = text[at + len(token) : at + len(token) + 1] or " "
        if before not in _WORD and after not in _WORD:
            return True
        at = text.find(token, at + 1)
    return False


def _via(value: object) -> str:
    """How a watched item reached the session: "" at its start, else the recall that brought it."""
    return value if value in VIAS else ""


def _tokens(value: object) -> dict[str, int]:
    """Kept tokens and weights as they may be used: texts to whole numbers, at most ``MAX_TOKENS``."""
    found = value.items() if isinstance(value, dict) else ()
    kept = {t: w for t, w in found if isinstance(t, str) and t and type(w) is int}
    return dict(list(kept.items())[:MAX_TOKENS])


class Watch:
    """The shown items a session has not used yet, their tokens, and what it used so far."""

    def __init__(self, path: str, data: dict[str, Any]) -> None:
        self.path = path
        watch = data.get("watch")
        self.watch: dict[str, dict[str, Any]] = {
            shown: {"key": entry["key"], "tokens": _tokens(entry.get("tokens")), "via": _via(entry.get("via"))}
            for shown, entry in (watch.items() if isinstance(watch, dict) else ())
            if isinstance(entry, dict) and isinstance(entry.get("key"), str)
        }  # a damaged file reads as what it still holds, field by field
        recalled = data.get("recalled")
        self.recalled: int = recalled if type(recalled) is int and recalled >= 0 else 0  # recall hits looked at
        heard = data.get("heard")
        self.heard: set[str] = {h for h in heard if isinstance(h, str)} if isinstance(heard, list) else set()
        used = data.get("used")
        self.used: list[str] = [u for u in used if isinstance(u, str)] if isinstance(used, list) else []
        self.found: list[tuple[str, str]] = []  # (item key, where) receipted by this update
        self.fresh: list[str] = []  # keys of the items this update began to watch (``loads``: shown once more)
        self.scanned = 0
        self.changed = False
        self._by_part: dict[str, set[str]] | None = None  # a token's first word -> the tokens

    def _candidates(self, words: set[str]) -> set[str]:
        """The watched tokens whose first word ``words`` holds: one set intersection a text, so a
        text costs the same however many items are watched."""
        if self._by_part is None:
            self._by_part = {}
            for entry in self.watch.values():
                for token in entry["tokens"]:
                    parts = token.translate(_TO_SPACE).split()
                    if parts:
                        self._by_part.setdefault(parts[0], set()).add(token)
        return {t for part in words.intersection(self._by_part) for t in self._by_part[part]}

    def look_for(self, item_key: str, text: str, known: set[str], via: str) -> bool:
        """Watch an item not known yet to this session (``via``: how it came, "" for its start);
        whether it is watched now (an item too plain to judge is only known)."""
        shown_id = provenance.shown_id(item_key)
        if shown_id in known or len(self.watch) >= MAX_ITEMS:
            return False
        known.add(shown_id)
        tokens = distinctive(text)
        if tokens:
            self.watch[shown_id] = {"key": item_key, "tokens": tokens, "via": via}
            self._by_part = None
        return bool(tokens)

    def hear(self, where: str, text: str) -> None:
        """One thing said in the session: a prompt of the user's, a reply, a tool's input."""
        if not self.watch or self.scanned >= MAX_SCAN:
            return
        text = text[:MAX_PIECE].lower().replace("\\", "/")  # a Windows path names the file a claim names
        self.scanned += len(text)
        words = set(text.translate(_TO_SPACE).split())
        present = {t for t in self._candidates(words) if t not in self.heard and _present(t, text, words)}
        if not present:
            return
        if where == "prompt":
            self.heard |= set(sorted(present)[: max(MAX_HEARD - len(self.heard), 0)])
            self.changed = True
            return
        for shown, entry in list(self.watch.items()):
            weight = sum(w for t, w in entry["tokens"].items() if t in present)
            if weight >= USE_WEIGHT:
                del self.watch[shown]
                self.used.append(shown)
                self.found.append((entry["key"], f"{where} after {entry['via']}" if entry["via"] else where))
                self.changed = True

    def save(self) -> None:
        """Keep the state for the session's next update (machine-local, derived)."""
        from keeper.store.fsutil import atomic_write

        data = {"watch": self.watch, "heard": sorted(self.heard), "used": self.used, "recalled": self.recalled}
        try:
            atomic_write(self.path, jsonio.dumps(data))
        except OSError:
            pass


def _state_file(project: paths.Project, session: str) -> str:
    return project.session_file(session, "receipts")


def _shown(project: paths.Project, session: str) -> set[str]:
    try:
        with open(markers.shown_file(project, session), encoding="utf-8") as fh:
            return set(fh.read().split())
    except OSError:
        return set()


def _recalled(project: paths.Project, session: str) -> list[tuple[str, str]]:
    """``(via, text)`` of each recall hit put into the session's context (``hooks.prompts``), in order."""
    try:
        with open(project.session_file(session, "recalled"), encoding="utf-8") as fh:
            lines = fh.read().splitlines()[:MAX_RECALLED]
    except OSError:
        return []
    found: list[tuple[str, str]] = []
    for line in lines:
        try:
            hit = jsonio.loads(line)
        except (ValueError, RecursionError):
            hit = None
        if isinstance(hit, dict) and _via(hit.get("via")) and isinstance(hit.get("text"), str):
            found.append((hit["via"], hit["text"]))
    return found


def carried(text: str, items: dict[str, str]) -> list[str]:
    """The keys of the memory items (``items``: key -> text) a recall hit's ``text`` shows: its bullet
    lines, as memory.md writes them or as a session file's save does (``- Decision: …``)."""
    from keeper.memory.items import key

    found: list[str] = []
    for line in text.splitlines():
        bare = line.strip()
        if bare[:2] not in ("- ", "* "):
            continue
        body = bare[2:]
        for candidate in (body, body.split(": ", 1)[-1]):
            item_key = key(candidate)
            if item_key in items and item_key not in found:
                found.append(item_key)
                break
    return found


def watch(project: paths.Project, session: str) -> Watch | None:
    """What this session's update should look for; None when it showed nothing still unused.

    The items' tokens are worked out from memory.md once, when the shown ids are new (a start, a
    resume, a compaction) or recall brought new hits, and kept beside the session's other state."""
    shown = _shown(project, session)
    recalled = _recalled(project, session)
    if not shown and not recalled:
        return None
    found = _load(project, session, shown, recalled)
    return found if found.watch or found.changed else None


def _load(project: paths.Project, session: str, shown: set[str], recalled: list[tuple[str, str]]) -> Watch:
    """The session's receipts state, with what it was shown or recalled since its last update."""
    path = _state_file(project, session)
    try:
        with open(path, encoding="utf-8") as fh:
            data = jsonio.loads(fh.read())
    except (OSError, ValueError, RecursionError):
        data = {}
    found = Watch(path, data if isinstance(data, dict) else {})
    known = set(found.watch) | set(found.used)
    fresh = recalled[found.recalled :]
    if shown - known or fresh:
        from keeper.store.fsutil import read_text

        listed = provenance.listed(read_text(project.memory) or "")
        for _, item_key, text, _ in listed:
            if provenance.shown_id(item_key) in shown and found.look_for(item_key, text, known, ""):
                found.fresh.append(item_key)
        items = {item_key: text for _, item_key, text, _ in listed}
        for via, hit in fresh:
            for item_key in carried(hit, items):
                found.look_for(item_key, items[item_key], known, via)
        found.recalled = len(recalled)
        found.changed = True
    return found


def restated(project: paths.Project, session: str, items: list[str], at: str, patterns: list[str]) -> None:
    """The items this session's own save restated from what its start showed (``echoed``): a use each,
    once a session, however its tokens read (call under the project's lock). Restating an item says
    the session read it; it stays no new evidence, and a later use in the session adds no receipt."""
    shown = _shown(project, session)
    if not shown or not items:
        return
    found = _load(project, session, shown, _recalled(project, session))
    for item_key in dict.fromkeys(items):
        shown_id = provenance.shown_id(item_key)
        if shown_id in shown and shown_id not in found.used:
            found.watch.pop(shown_id, None)
            found.used.append(shown_id)
            found.found.append((item_key, "save"))
    if found.found:
        record(project, session, found, at, patterns)


def record(project: paths.Project, session: str, found: Watch, at: str, patterns: list[str]) -> None:
    """The receipts of one update into the project's provenance, and the state kept (call under the
    project's lock)."""
    events = [
        {"at": at, "event": USED, "item": item_key, "session": session, "where": where[:64]}
        for item_key, where in found.found
    ]
    provenance.append(project.dir, events, patterns)
    loads.note(project, shown=found.fresh, used=[item_key for item_key, _ in found.found])
    found.save()


def share(project: paths.Project, events: list[provenance.Event], sessions: int = 20) -> dict[str, int]:
    """Of the items Keeper put into the newest ``sessions`` sessions (this machine's), how many the
    session used: ``{"sessions", "injected", "used", "at_start", "recalled"}``. An item counts once a
    session, whether its start showed it (``at_start``) or only a recall hit brought it (``recalled``,
    an item memory.md still holds); bounded: two small files a session and memory.md once."""
    used = {(str(e.session), provenance.shown_id(e.item)) for e in events if e.kind == USED}
    newest = _newest(project, sessions)
    items: dict[str, str] | None = None  # memory.md's items, read once, only when a session recalled
    at_start = recalled = used_count = 0
    for session in newest:
        shown, hits = _shown(project, session), _recalled(project, session)
        brought: set[str] = set()
        if hits:
            if items is None:
                from keeper.store.fsutil import read_text

                items = {k: text for _, k, text, _ in provenance.listed(read_text(project.memory) or "")}
            brought = {provenance.shown_id(k) for _, hit in hits for k in carried(hit, items)} - shown
        at_start += len(shown)
        recalled += len(brought)
        used_count += sum(1 for i in shown | brought if (session, i) in used)
    injected = at_start + recalled
    return {
        "sessions": len(newest),
        "injected": injected,
        "used": used_count,
        "at_start": at_start,
        "recalled": recalled,
    }


def _newest(project: paths.Project, sessions: int) -> list[str]:
    """The ``sessions`` sessions Keeper last put items into (a start's ``shown``, a recall's ``recalled``)."""
    import glob

    changed: dict[str, float] = {}
    for kind in ("shown", "recalled"):
        for name in glob.glob(os.path.join(glob.escape(project.session_state), f"*.{kind}")):
            try:
                mtime = os.path.getmtime(name)
            except OSError:  # removed meanwhile
                continue
            session = os.path.basename(name)[: -len(kind) - 1]
            changed[session] = max(changed.get(session, mtime), mtime)
    return sorted(changed, key=lambda s: (changed[s], s))[-sessions:] if sessions > 0 else []
