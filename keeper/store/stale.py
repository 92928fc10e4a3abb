"""Stale marks by content: whether what each memory item claims about the code still holds.

A save notes each item's claims and where they held (``keeper.store.claims``), and the session's
facts carry a fingerprint of the lines it wrote in each file. At session start each claim is judged
against the files as they are now: a path gone, an identifier gone from where it was and from the
files beside them (where a move would take it, unless the item names the file it was in; one noted
as defined must still be defined there, an import under its name is no definition), a constant
with another value, or, for an item none of whose claims holds, most of the lines the item's
session wrote rewritten (those lines are the whole save's, so they never outweigh a claim of the
item's own that holds). A file that changed elsewhere
is no reason, and no date or modification time takes part in a verdict: a branch switched and
switched back changes nothing.

The most decisive first (a changed value, a vanished identifier, a path gone, rewritten lines).
Only the files claims name are read, each once, confined to the project and bounded
(``MAX_READS``); the verdicts are kept for the next start with what they rest on, compared by
content (``keeper.store.verdicts``). Standard library only: SessionStart runs it.
"""

from __future__ import annotations

import os
import time

from keeper.store import claims, paths, provenance
from keeper.store.fsutil import settled
from keeper.text import inline

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from keeper.markdown import Document
    from keeper.store.provenance import Event
    from keeper.store.verdicts import Kept, Taken

    Claim = dict[str, Any]  # what an item's text claims about the code, as ``provenance.Event.claims`` holds it
    Previous = tuple[dict[str, Any], dict[str, Any], int]  # the last check's inputs, answers and ``looked``
    Row = tuple[str, int]  # why an item may be stale, and how decisive that is
    Judged = tuple[str, str, str, list[str], "Row | None"]  # key, text, section, the inputs it rests on, why
    Verdict = tuple[str, int, str]  # holds | broken | unchecked, how decisive, why

MAX_READS = 400  # files (and folders) one check may look at, whatever the memory's size
MAX_SIBLINGS = 30  # files beside a claim's file searched for an identifier that moved
FEW = 32  # items judged again up to which the record is read for them alone (each costs every line a look)
MIN_LINES = 4  # written lines of a file below which its fingerprint tells nothing
REASON_CHARS = 160
OUTSIDE = "o"  # an input's kind: a path reached through a link out of the project, not looked at
# In ``stale_items``' ``looked``, no file's name: the verdicts hold only until events of the record
# dated ahead of the clock come due (then they count), so nothing worked out from them may be kept.
WAITING = ""
RANKS = {"value": 4, "name": 3, "path": 2, "lines": 1}  # how decisive a broken claim of each kind is
HOLDS: Verdict = ("holds", 0, "holds")


def say(text: str, limit: int = REASON_CHARS) -> str:
    """Text from records made fit for a mark: one line, no control characters, bounded."""
    flat = inline(text)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class Reader:
    """The project's files as the check reads them: confined to the project, each once, at most
    ``limit`` in all. ``inputs`` says what the verdicts rest on and ``answers`` what each file said
    (``keeper.store.verdicts`` keeps both); a file whose size and time are as the last check found
    them, unchanged since it looked (``fsutil.settled``), gives that check's answers (``previous``)
    without being read again."""

    def __init__(self, root: str, limit: int = MAX_READS, previous: Previous | None = None) -> None:
        self.root, self.limit = root, limit
        # rel -> ["e", exists] | ["f", size, mtime_ns, digest] | ["d", digest] | [OUTSIDE]
        self.inputs: dict[str, list[Any]] = {}
        self.answers: dict[str, dict[str, Any]] = {}  # rel -> question -> answer, for a file of the project
        self._before = previous or ({}, {}, 0)
        self._texts: dict[str, str | None] = {}
        self._folders: dict[str, bool] = {}
        self._wrote: dict[str, dict[str, list[str]]] = {}
        self.touched: set[str] = set()  # the inputs the item being judged rests on
        self.waiting = False  # events dated ahead of the clock were left out: the verdicts hold until their time

    def _spend(self) -> bool:
        return len(self.inputs) < self.limit

    def _folder_inside(self, folder: str) -> bool:
        """Whether a folder, its links followed, is the project's (worked out once a folder)."""
        if folder not in self._folders:
            self._folders[folder] = claims.inside(self.root, folder)
        return self._folders[folder]

    def _full(self, rel: str) -> str | None:
        """The path of a project's file to look at, or None: not the project's, or the budget spent.
        One reached through a link out of the project is an input all the same (``OUTSIDE``): the
        link made a folder again, the file is there to judge."""
        full = claims.confined(self.root, rel)
        if full is None or not self._spend():
            return None
        if not self._folder_inside(os.path.dirname(full)):
            self.inputs[rel] = [OUTSIDE]
            return None
        return full

    def carry(self, rels: list[str]) -> None:
        """Take the last check's facts and answers for inputs that are as they were (an item not
        judged again rests on them)."""
        for rel in rels:
            if rel in self._before[0]:
                self.inputs[rel] = self._before[0][rel]
                said = self._before[1].get(rel)
                if isinstance(said, dict):
                    self.answers[rel] = dict(said)

    def exists(self, rel: str) -> bool | None:
        """Whether a path is there; None when it is not the project's or the budget is spent."""
        self.touched.add(rel)
        known = self.inputs.get(rel)
        if known is not None and known[0] != OUTSIDE:
            return bool(known[1]) if known[0] == "e" else known[3] != ""
        full = self._full(rel)
        if full is None:
            return None  # a link out of the project: nothing there is looked at
        found = claims.present(full)
        self.inputs[rel] = ["e", found]
        return found

    def _state(self, rel: str) -> str:
        """``ok`` (a readable file), ``gone`` or ``unknown``; its answers from the last check when
        its size and time are as they were, else its text read now."""
        self.touched.add(rel)
        known = self.inputs.get(rel)
        if known is not None and known[0] == "f":
            return "gone" if known[3] == "" else "unknown" if known[3] == "?" else "ok"
        full = self._full(rel)
        if full is None:
            return "unknown"
        try:
            found = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            self.inputs[rel] = ["f", -1, -1, ""]
            return "gone"
        except (OSError, ValueError):
            return "unknown"
        if self._as_before(rel, [found.st_size, found.st_mtime_ns], found.st_ctime_ns):
            return "ok"
        return self._read(rel, full)

    def _as_before(self, rel: str, stamp: list[int], ctime_ns: int) -> bool:
        """Take the last check's answers for a file whose size and time are as they were and that
        has not changed since that check looked."""
        before, said = self._before[0].get(rel), self._before[1].get(rel)
        if not (isinstance(before, list) and len(before) == 4 and before[0] == "f" and isinstance(said, dict)):
            return False
        if not settled(ctime_ns, self._before[2]):
            return False
        if before[1:3] != stamp or before[3] in ("", "?") or not isinstance(before[3], str):
            return False
        self.inputs[rel], self.answers[rel] = before, dict(said)
        return True

    def _read(self, rel: str, full: str) -> str:
        got = claims.opened(full)
        if got is None:
            self.inputs[rel] = ["f", -1, -1, ""]
            return "gone"
        size, mtime_ns, data = got
        self.inputs[rel] = ["f", size, mtime_ns, claims.digest(data) if data is not None else "?"]
        if data is None:
            return "unknown"
        self._texts[rel] = claims.decode(data)
        self.answers[rel] = {}
        return "ok"

    def ask(self, rel: str, question: str, kind: type, compute: Callable[[str], Any]) -> tuple[str, Any]:
        """``(state, answer)``: what ``compute`` says of a file's text (of type ``kind``), when the
        file is there (``ok``); else ``gone`` or ``unknown`` and None."""
        state = self._state(rel)
        if state != "ok":
            return state, None
        mine = self.answers.setdefault(rel, {})
        if not isinstance(mine.get(question), kind) or isinstance(mine.get(question), bool) != (kind is bool):
            if rel not in self._texts:  # answered last time, but not this question: read it now
                data = claims.read(self.root, rel)
                if data is None or claims.digest(data) != self.inputs[rel][3]:
                    return "unknown", None
                self._texts[rel] = claims.decode(data)
            mine[question] = compute(str(self._texts[rel]))
        return "ok", mine[question]

    def wrote(self, session: str, facts: Event) -> dict[str, list[str]]:
        """A session's written-lines fingerprint by file, worked out once a session."""
        if session not in self._wrote:
            self._wrote[session] = _wrote(facts)
        return self._wrote[session]

    def beside(self, rel: str) -> list[str]:
        """Files in the same folder with the same extension (where a moved identifier would go)."""
        folder, _, name = rel.rpartition("/")
        self.touched.add(folder + "/")
        full = claims.confined(self.root, folder) if folder else self.root
        if full is None or not self._spend():
            return []
        names = claims.listing(full)
        self.inputs[folder + "/"] = ["d", claims.digest("\n".join(names).encode("utf-8", "surrogatepass"))]
        ext = name.rpartition(".")[2]
        same = [n for n in names if n != name and n.rpartition(".")[2] == ext]
        return [f"{folder}/{n}" if folder else n for n in same[:MAX_SIBLINGS]]


def _occurs(reader: Reader, rel: str, name: str, defined: bool = False) -> tuple[str, bool]:
    """Whether ``name`` is in a file: defined there (``defined``: an import under that name is no
    definition), or anywhere in it."""
    if defined:
        state, found = reader.ask(rel, "d:" + name, bool, lambda text: claims.defines(name, text))
    else:
        state, found = reader.ask(rel, "o:" + name, bool, lambda text: bool(claims.occurs(name, text)))
    return state, found is True


def _values(reader: Reader, rel: str, name: str) -> tuple[str, list[str]]:
    state, found = reader.ask(rel, "v:" + name, list, lambda text: claims.values(name, text))
    return state, [v for v in found if isinstance(v, str)] if isinstance(found, list) else []


def _held(claim: Claim) -> list[str]:
    where = claim.get("in")
    return [w for w in where if isinstance(w, str)][: claims.MAX_IN] if isinstance(where, list) else []


def _found_beside(name: str, where: list[str], reader: Reader, want: str = "", defined: bool = False) -> bool:
    """Whether ``name`` (with the value ``want``, when given; defined, when ``defined``) is in a
    file beside where it was."""
    for rel in where:
        for other in reader.beside(rel):
            if want and want in _values(reader, other, name)[1]:
                return True
            if not want and _occurs(reader, other, name, defined)[1]:
                return True
    return False


def _name(name: str, where: list[str], reader: Reader, defined: bool, roams: bool) -> Verdict:
    """A name noted as defined where it was is judged by its definition; one only used there, by
    its presence; found beside where it was, it moved (``roams``: the item names none of its files)."""
    gone = False
    for rel in where:
        state, found = _occurs(reader, rel, name, defined)
        if state == "unknown":
            return ("unchecked", 0, f"{rel} cannot be read")
        if found:
            return HOLDS
        gone = gone or state == "gone"
    if roams and _found_beside(name, where, reader, defined=defined):
        return ("holds", 0, "moved beside where it was")
    tail = f" ({where[0]} is gone)" if gone and len(where) == 1 else ""
    return ("broken", RANKS["name"], f"`{say(name, 60)}` is no longer in {say(where[0], 80)}{tail}")


def _value(name: str, want: str, rel: str, reader: Reader, roams: bool) -> Verdict:
    if "[REDACTED:" in want:
        return ("unchecked", 0, "a secret: never compared, never shown")
    state, found = _values(reader, rel, name)
    if state == "unknown":
        return ("unchecked", 0, f"{rel} cannot be read")
    if want in found:
        return HOLDS
    if found:
        from keeper.redact import redact  # the value a file holds now may be a secret

        why = f"`{say(name, 60)}` is {say(redact(found[0]), 30)} in {say(rel, 80)}, not {say(want, 30)}"
        return ("broken", RANKS["value"], why)
    if roams and _found_beside(name, [rel], reader, want):
        return ("holds", 0, "moved beside where it was")
    return ("broken", RANKS["name"], f"`{say(name, 60)}` is no longer set in {say(rel, 80)}")


def judge(claim: Claim, reader: Reader, named: frozenset[str] = frozenset()) -> Verdict:
    """One claim against the files as they are now (``named``: the files the item's path claims
    name; an identifier or constant the item places in one of them must stay there, so a move
    beside it breaks the claim)."""
    kind, name, where = claim.get("kind"), claim.get("name"), _held(claim)
    if not isinstance(name, str) or not name or len(name) > claims.MAX_NAME:
        return ("unchecked", 0, "not a claim")
    if not where:
        return ("unchecked", 0, "did not hold when saved")
    if kind == "path":
        found = reader.exists(where[0])
        if found is None:
            return ("unchecked", 0, "not looked at")
        return HOLDS if found else ("broken", RANKS["path"], f"{say(where[0], 100)} is gone (moved or deleted)")
    if kind == "name":
        return _name(name, where, reader, claim.get("defined") is True, named.isdisjoint(where))
    want = claim.get("value")
    if kind == "value" and isinstance(want, str) and 0 < len(want) <= claims.MAX_NAME:
        return _value(name, want, where[0], reader, where[0] not in named)
    return ("unchecked", 0, "not a claim")


def _wrote(facts: Event) -> dict[str, list[str]]:
    """A session's written-lines fingerprints (of their shape already: read at the record's boundary)."""
    return {rel: hashes[: claims.LINES_KEPT] for rel, hashes in list(facts.wrote.items())[: claims.MAX_OBSERVED]}


def _kept(hashes: list[str], text: str) -> int:
    """How many of the lines a session wrote (``hashes``) a file still holds; when most seem gone,
    those a formatter split over several lines count too (``claims.joined_hashes``: dearer, so only
    then)."""
    have = claims.line_hashes(text)
    kept = sum(1 for h in hashes if h in have)
    if kept * 2 >= len(hashes):
        return kept
    joined = _JOINED.get(text)
    if joined is None:
        if len(_JOINED) >= 8:
            _JOINED.clear()
        joined = _JOINED[text] = claims.joined_hashes(text)  # several sessions may have written one file
    return kept + sum(1 for h in hashes if h not in have and h in joined)


_JOINED: dict[str, set[str]] = {}  # a file's text -> its joined lines' hashes, for this process


def _kept_of(hashes: list[str]) -> Callable[[str], int]:
    """How many of ``hashes`` a file's text still holds, as a question ``Reader.ask`` puts (a closure,
    not ``functools.partial``: importing functools costs a start ~3 ms)."""
    return lambda text: _kept(hashes, text)


def lines_verdict(wrote: dict[str, list[str]], tied: set[str] | None, reader: Reader) -> Verdict:
    """Whether most of the lines the item's session wrote are gone: in a file its broken claims
    held in (``tied``), or, when it claims nothing that can be checked (None), across every file
    the session wrote."""
    seen: list[tuple[int, int, str, bool]] = []  # lines lost, lines written, file, gone
    for rel, hashes in wrote.items():
        if len(hashes) < MIN_LINES or (tied is not None and rel not in tied):
            continue
        question = "k:" + claims.digest(",".join(hashes).encode("utf-8", "surrogatepass"))[:16]
        state, kept = reader.ask(rel, question, int, _kept_of(hashes))
        if state != "unknown":
            kept = 0 if state == "gone" else min(kept, len(hashes))
            seen.append((len(hashes) - kept, len(hashes), rel, state == "gone"))
    if not seen:
        return ("unchecked", 0, "no line it wrote is in a file of the project")
    groups = [[one] for one in seen] if tied is not None else [seen]
    for group in groups:
        lost, total = sum(g[0] for g in group), sum(g[1] for g in group)
        if lost * 2 > total:
            return ("broken", RANKS["lines"], _rewritten(group, total - lost, total))
    return HOLDS


def _rewritten(group: list[tuple[int, int, str, bool]], kept: int, total: int) -> str:
    """``most lines its session wrote in src/cache.py were rewritten (1 of 7 left)``."""
    worst = max(group)
    if len(group) == 1 and worst[3]:
        return f"{say(worst[2], 100)}, where its session wrote, is gone"
    where = f"in {say(worst[2], 100)} " if len(group) == 1 else ""
    most = f", most in {say(worst[2], 100)}" if len(group) > 1 else ""
    return f"most lines its session wrote {where}were rewritten ({kept} of {total} left{most})"


def evidence(history: list[Event]) -> Event | None:
    """An item's newest evidence (an echo is none): a save that added, re-confirmed or edited it
    says what it claims now, so a mark goes once a save re-confirms it."""
    return next((e for e in reversed(history) if e.kind in provenance.EVIDENCE), None)


def verdicts(history: list[Event], sessions: dict[str, Event], reader: Reader) -> list[tuple[Claim, Verdict]]:
    """Each claim of an item's newest evidence with its verdict; the lines its session wrote last.
    Evidence saved before Keeper noted claims (or that arrived without them) claims nothing."""
    newest = evidence(history)
    if newest is None or newest.claims is None:
        return []
    mine = list(newest.claims[: claims.MAX_CLAIMS])
    named = frozenset(w for c in mine if c.get("kind") == "path" for w in _held(c))
    found = [(c, judge(c, reader, named)) for c in mine]
    session = newest.session or ""
    facts = sessions.get(session)
    wrote = reader.wrote(session, facts) if facts is not None else {}
    if wrote:
        lines: Claim = {"kind": "lines", "name": ", ".join(sorted(wrote)[:3]), "in": sorted(wrote)}
        found.append((lines, _lines(found, wrote, reader)))
    return found


def _lines(found: list[tuple[Claim, Verdict]], wrote: dict[str, list[str]], reader: Reader) -> Verdict:
    """The written-lines rule, only for an item none of whose claims holds: the lines its session
    wrote in a file are every item's of that save, so a claim that holds outweighs them."""
    if any(v[0] == "holds" for _, v in found):
        return ("unchecked", 0, "its claims hold; the lines its session wrote are its save's, not its own")
    broken = {w for c, v in found if v[0] == "broken" for w in _held(c)}
    return lines_verdict(wrote, broken or None, reader)


def reason(history: list[Event], sessions: dict[str, Event], reader: Reader) -> tuple[str, int] | None:
    """Why an item may be stale and how decisive that is; None when all it claims still holds."""
    broken = [v for _, v in verdicts(history, sessions, reader) if v[0] == "broken"]
    if not broken:
        return None
    best = max(broken, key=lambda v: v[1])
    return best[2], best[1]


class Stale:
    """An item that may be stale: its text, its section, why, and how decisive the reason is."""

    __slots__ = ("key", "rank", "reason", "section", "text")

    def __init__(self, key: str, text: str, section: str, reason: str, rank: int) -> None:
        self.key, self.text, self.section, self.reason, self.rank = key, text, section, say(reason), rank

    def as_dict(self) -> dict[str, str]:
        return {"id": provenance.item_id(self.key), "text": self.text, "section": self.section, "reason": self.reason}


def stale_items(
    project: paths.Project,
    text: str | None,
    firsts: dict[str, str] | None = None,
    keep: bool = False,
    doc: Document | None = None,
    looked: set[str] | None = None,
    taken: tuple[int, Taken] | None = None,
) -> list[Stale]:
    """The items of ``text`` (the project's memory.md) whose claims no longer hold, most decisive
    first, in memory.md's order within a rank (``firsts``: see ``provenance.listed``; ``keep``: take
    the verdicts of an earlier check while the files they rest on hold the same, judge again only
    the items resting on a file that changed, and keep these for the next one:
    ``keeper.store.verdicts``, for SessionStart; ``doc``: ``text`` parsed already; ``looked`` gets
    every input the verdicts rest on: ``Reader.inputs``' names, and ``WAITING``; ``taken``: the
    clock before the caller looked at any input, and the stats it took of the files since, which
    the kept verdicts take rather than stat them again)."""
    if not text or not os.path.isdir(project.checkout):
        return []  # no work tree here (a folder moved away): nothing can be told of its files
    firsts = {} if firsts is None else firsts
    if not keep:
        return _judged(project, doc or text, firsts, None)[0]
    from keeper.store import verdicts as kept_verdicts

    want = kept_verdicts.key(project, text)  # before reading the record
    # before any input is looked at (by the caller, for ``taken``): a file changed since is not taken by its time
    began = taken[0] if taken is not None else time.time_ns()
    kept = kept_verdicts.load(project, want, began, taken[1] if taken is not None else None)
    if kept.verdicts is not None:
        firsts.update(kept.firsts)
        if looked is not None:
            looked.update(kept.inputs)
        return [Stale(*row) for row in kept.verdicts]
    found, judged, reader = _judged(project, doc or text, firsts, kept)
    if looked is not None:
        looked.update([*reader.inputs, WAITING] if reader.waiting else reader.inputs)
    if not reader.waiting:
        rows = [(s.key, s.text, s.section, s.reason, s.rank) for s in found]
        kept_verdicts.save(project, want, reader, rows, firsts, judged, began, kept.file)
    return found


def _judged(
    project: paths.Project, text: str | Document, firsts: dict[str, str], kept: Kept | None
) -> tuple[list[Stale], list[Judged], Reader]:
    """Every item judged (or, for an item resting only on inputs as they were, ``kept``'s verdict
    taken), the stale ones most decisive first, with what each rests on."""
    reader = Reader(project.checkout, previous=(kept.inputs, kept.answers, kept.looked) if kept is not None else None)
    reuse, same = {}, set()
    if kept is not None and kept.changed is not None:
        reuse, same = kept.items, set(kept.inputs) - kept.changed
    order = _kept_order(kept, firsts)
    if order is None:
        order = [(k, item, section) for section, k, item, _ in provenance.listed(text, firsts)]
    history: dict[str, list[Event]] | None = None
    sessions: dict[str, Event] = {}
    judged: list[Judged] = []
    for item_key, item, section in order:
        old = reuse.get(item_key)
        if old is not None and same.issuperset(old[0]):  # every input it rests on is as it was
            reader.carry(old[0])
            judged.append((item_key, item, section, old[0], old[1]))
            continue
        if history is None:  # only the items judged again, when the others' verdicts are kept
            again = {k for k, _, _ in order if k not in reuse or not same.issuperset(reuse[k][0])} if reuse else None
            later: list[Event] = []
            events = provenance.read(project.dir, again if again is not None and len(again) <= FEW else None, later)
            reader.waiting = bool(later)
            history, sessions = provenance.by_item(events), provenance.session_facts(events)
        reader.touched = set()
        why = reason(history.get(item_key, []), sessions, reader)
        judged.append((item_key, item, section, sorted(reader.touched), why))
    if any(why is not None and not item for _, item, _, _, why in judged):  # stale now: its text is needed
        listed = {k: (item, section) for section, k, item, _ in provenance.listed(text)}
        judged = [
            (k, *(listed[k] if not item else (item, section)), deps, why) for k, item, section, deps, why in judged
        ]
    found = [Stale(k, item, section, *why) for k, item, section, _, why in judged if why is not None]
    found.sort(key=lambda s: -s.rank)
    return found, judged, reader


def _kept_order(kept: Kept | None, firsts: dict[str, str]) -> list[tuple[str, str, str]] | None:
    """memory.md's items as the last check judged them, when only files changed since and it kept
    them all apart: its key for each, in order (memory.md is the same text), with the text and
    section of those it found stale (the others' are not needed unless they turn stale now)."""
    if kept is None or kept.changed is None or kept.count != len(kept.items):
        return None
    firsts.update(kept.firsts)
    return [(k, *kept.stale.get(k, ("", ""))) for k in kept.items]


def explained(project: paths.Project, history: list[Event], sessions: dict[str, Event]) -> list[dict[str, str]]:
    """Each claim of an item with its verdict, for ``keeper why``."""
    reader = Reader(project.checkout)
    shown: list[dict[str, str]] = []
    for claim, (state, _, why) in verdicts(history, sessions, reader):
        name = say(str(claim.get("name") or ""), 80)
        value = claim.get("value")
        shown.append(
            {
                "kind": str(claim.get("kind")),
                "claim": f"{name} = {say(value, 30)}" if isinstance(value, str) and value else name,
                "where": say(", ".join(_held(claim)[:3]), 200),
                "verdict": state,
                "why": say(why),
            }
        )
    return shown


def observed(
    text: str, root: str, files: Iterable[str], cache: dict[str, str | None] | None = None
) -> list[dict[str, Any]]:
    """The claims a save notes for an item (``claims.observe``), when the project is a folder here."""
    return claims.observe(text, root, files, cache) if os.path.isdir(root) else []
