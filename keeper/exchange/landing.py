"""The one landing path: memory that arrives from elsewhere, whatever road it took, lands here once.

``keeper import`` and ``keeper sync`` each read what arrives their own way (a zip, a git tree) into
an ``Incoming`` bundle, bounded and redacted once as it is made; ``land`` then brings one memory
folder to it under the folder's lock: memory.md merged (three-way against a ``base``, what this
folder last sent, or two-way without one, items this folder removed not brought back), the
provenance records unioned, the record of removals kept, the owned-lines record updated and the
session files placed by their one identity (``sessions.Known``). No road has a merge or a naming
rule of its own.
"""

from __future__ import annotations

import os

from keeper import redact
from keeper.markdown import Document
from keeper.memory import merge
from keeper.memory.document import OwnedLines
from keeper.store import paths, provenance, removals
from keeper.store.fsutil import atomic_write, create_new, project_lock, read_json, read_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

GLOBAL = "global"  # the id of the global memory's folder: it has no owned-lines record of its own


class Incoming:
    """What arrives for one memory folder: its memory.md, the sender's owned-lines record, the
    provenance record, session files by the name they take here, the record of removals that
    travels and the files the sender removed (paths within the folder, ``/``-separated).

    ``arrived`` makes one from what a road read, bounded and redacted once; the constructor takes
    texts as they are (a ``base``: what this folder sent, redacted when it left)."""

    __slots__ = ("gone", "memory", "origins", "owned", "refused", "removals", "sessions")

    def __init__(
        self,
        memory: str | None = None,
        sessions: Mapping[str, str] | None = None,
        origins: str | None = None,
        owned: OwnedLines | None = None,
        record: removals.Record | None = None,
        gone: Iterable[str] = (),
    ) -> None:
        self.memory, self.origins, self.owned, self.removals = memory, origins, owned, record
        self.sessions: dict[str, str] = dict(sessions or {})
        self.gone = sorted(gone)
        self.refused: list[tuple[str, str]] = []  # (session file name, why) left out by ``arrived``

    @classmethod
    def arrived(
        cls,
        patterns: Iterable[str],
        memory: str | None = None,
        sessions: Mapping[str, str] | None = None,
        origins: str | None = None,
        owned: object = None,
        record: removals.Record | None = None,
        gone: Iterable[str] = (),
    ) -> Incoming:
        """What a road read, as it may land: a session file with a name Keeper would not make, or
        any file past ``paths.MAX_FILE``, left out (and named in ``refused``); every text redacted
        exactly as a save is, with one scan of them all when none holds anything to redact."""
        rules = list(patterns)
        kept: dict[str, str] = {}
        refused: list[tuple[str, str]] = []
        for name, text in sorted((sessions or {}).items()):
            if not paths.safe_session_name(name):
                refused.append((name, "not a safe session file name"))
            elif len(text) > paths.MAX_FILE:
                refused.append((name, f"larger than {paths.MAX_FILE >> 20} MiB"))
            else:
                kept[name] = text
        texts = [t for t in (memory, origins) if t is not None and len(t) <= paths.MAX_FILE]
        memory, origins = (t if t is not None and len(t) <= paths.MAX_FILE else None for t in (memory, origins))
        joined = "\n\n".join([*texts, *kept.values()])
        if redact.redact(joined, rules) != joined:  # one scan; each file redacted only when one needs it
            memory, origins = (redact.redact(t, rules) if t is not None else None for t in (memory, origins))
            kept = {name: redact.redact(text, rules) for name, text in kept.items()}
        found = cls(memory, kept, origins, None, record, gone)
        if owned is not None:
            found.owned = OwnedLines.parse(redact.redact_values(owned, rules))
        found.refused = refused
        return found


class Landed:
    """What landing did (or would do, dry): memory.md ``created``, ``merged``, ``unchanged``,
    ``held`` (a memory.md here that reads as no memory, left for its person) or "" (none arrived);
    the two-way merge's report; the session files added, already here (under any name), added
    under another name and left out (removed here, by their text: ``removals.text_key``); every
    file written with its text; the files moved to the trash."""

    def __init__(self, folder: paths.Project) -> None:
        self.id, self.dir = folder.id, folder.dir
        self.memory = ""
        self.merge: merge.FileMergeReport | None = None
        self.added: list[str] = []
        self.identical: list[str] = []
        self.renamed: list[tuple[str, str]] = []
        self.removed: list[str] = []  # session files left out: their text was removed here
        self.written: list[tuple[str, str]] = []  # memory files (not Keeper's records), with their text
        self.trashed: list[str] = []
        self.news: list[provenance.Event] = []  # the record's events that arrived new (``_evidence``)
        self._writes: list[tuple[str, str, bool, bool]] = []  # (path, text, must be new, a record of Keeper's)

    def _write(self, path: str, text: str, new: bool = False, record: bool = False) -> None:
        self._writes.append((path, text, new, record))


def acceptable(path: str, data: bytes | None) -> bool:
    """Whether a file that arrives by its path (an archive's layout, the sync repository's) may land
    in the store: one of the store's kinds of durable file (``paths.file_kind``), a session file
    with a safe name, within the size an archive allows."""
    if data is None or len(data) > paths.MAX_FILE:
        return False
    found = paths.file_kind(path)
    return found is not None and (found != paths.SESSION or paths.safe_session_name(path.rsplit("/", 1)[-1]))


def patterns(folder: paths.Project) -> list[str]:
    """The redaction patterns a save into ``folder`` uses: the global ones and its project's own."""
    from keeper.store import config, resolve

    root = "" if folder.id == GLOBAL else folder.root or resolve.recorded_root(folder.dir)
    return list(config.load(root if root and os.path.isdir(root) else None).redact_patterns)


def land(
    folder: paths.Project,
    incoming: Incoming,
    base: Incoming | None = None,
    *,
    dry_run: bool = False,
    then: Callable[[], None] | None = None,
) -> Landed:
    """Bring ``folder`` to what arrived, under its lock, reading memory.md once; ``then`` runs
    under the same lock once everything landed (sync records its commit there). With ``dry_run``
    nothing is written and no lock taken: the report says what landing would do."""
    if dry_run:
        return _plan(folder, incoming, base)
    with project_lock(folder.lock):
        landed = _plan(folder, incoming, base)
        for path, text, new, record in landed._writes:
            if not new:
                atomic_write(path, text)
            elif not create_new(path, text, durable=os.path.basename(path) == paths.MEMORY_FILE or base is None):
                continue  # appeared meanwhile (a session's own file): kept, the next landing sees it
            if not record:
                landed.written.append((path, text))
        if incoming.removals is not None and incoming.removals != removals.read(folder.dir):
            removals.write(folder.dir, incoming.removals)
        gone = [os.path.join(folder.dir, *p.split("/")) for p in incoming.gone]
        landed.trashed = [p for p in gone if os.path.exists(p) and not _arrives_again(folder, p, incoming)]
        _evidence(folder, landed.news)
        if then is not None:
            then()
    if landed.trashed:
        _to_trash(folder, landed.trashed)
    return landed


def _evidence(folder: paths.Project, news: list[provenance.Event]) -> None:
    """Uses and re-confirmations made on another machine count here too, each once (it arrives new
    once, whatever road brings it again): an item another machine's sessions use is not left to
    recall because this machine's sessions did not use it (``store.loads``)."""
    used = [e.item for e in news if e.kind == provenance.USED]
    confirmed = [e.item for e in news if e.kind == "confirmed"]
    if (used or confirmed) and folder.id != GLOBAL:
        from keeper.store import loads

        loads.note(folder, used=used, restated=confirmed)


def _plan(folder: paths.Project, incoming: Incoming, base: Incoming | None) -> Landed:
    landed = Landed(folder)
    if incoming.memory is not None:
        _memory(folder, incoming, base, landed)
    if incoming.origins is not None:  # where each item came from: the union of both records
        current = read_text(folder.provenance, exact=True)
        united = provenance.merge(current, incoming.origins)
        if united != current:
            landed._write(folder.provenance, united)
            landed.news = provenance.arrived(current, united)
    _sessions(folder, incoming, base, landed)
    return landed


def _memory(folder: paths.Project, incoming: Incoming, base: Incoming | None, landed: Landed) -> None:
    """memory.md: created as it arrived; else merged, three-way against ``base`` (``merge3``) or
    two-way (``merge_file``) without items this folder or a record of removals took out."""
    assert incoming.memory is not None
    current = read_text(folder.memory, exact=True)
    owned_file = os.path.join(folder.state, paths.OWNED_LINES)
    if current is None:
        landed.memory = "created"
        landed._write(folder.memory, incoming.memory, new=True)
        if base is None and incoming.owned is not None:
            landed._write(owned_file, incoming.owned.dump(), record=True)
        elif base is not None:
            _take_over(folder, owned_file, None, Document.parse(incoming.memory), incoming, landed)
        return
    if base is None:
        mine = OwnedLines.parse(read_json(owned_file))
        gone = removals.items_gone(removals.read(folder.dir), removals.retired(folder.dir))
        theirs = incoming.owned or OwnedLines()
        merged, owned, landed.merge = merge.merge_file(current, mine, incoming.memory, theirs, gone)
        if owned != mine:
            landed._write(owned_file, owned.dump(), record=True)
    else:
        was = Document.parse(current)
        if not has_sections(was) and has_sections(Document.parse(base.memory or "")):
            landed.memory = "held"  # read as no memory (a save cut short, not UTF-8): the person's to fix
            return
        merged = merge.merge3(base.memory, current, incoming.memory)
        if merged != current:
            _take_over(folder, owned_file, was, Document.parse(merged), incoming, landed)
    landed.memory = "unchanged" if merged == current else "merged"
    if merged != current:
        landed._write(folder.memory, merged)


def has_sections(doc: Document) -> bool:
    """Whether a memory.md reads as memory: it holds a section (one emptied by a save cut short, or
    written in UTF-16 or with old-Mac line ends, holds none)."""
    return any(section.level == 2 for section in doc.sections)


def _take_over(
    folder: paths.Project, owned_file: str, was: Document | None, now: Document, incoming: Incoming, landed: Landed
) -> None:
    """Keeper's lines another machine wrote stay Keeper's here (``owned.take_over``)."""
    from keeper.exchange import owned

    if folder.id == GLOBAL:
        return
    said = owned.stated(incoming.sessions.values())
    record = owned.take_over(read_json(owned_file), was, now, said)
    if record is not None:
        landed._write(owned_file, record.dump(), record=True)


def _sessions(folder: paths.Project, incoming: Incoming, base: Incoming | None, landed: Landed) -> None:
    """Each session file once: one this folder holds under any name is already here; one whose
    text the record of removals says is removed stays out, whatever its name; a free name is
    taken; a name taken by another text is replaced when that text is what this folder last sent
    (``base``: only the other side changed it), else the arriving text goes in under the session's
    other name (``sessions.other_name``: ``<stem>-imported.md``, ``-imported-2.md`` …) so neither
    is lost."""
    if not incoming.sessions:
        return
    from keeper.exchange.sessions import Known

    sent = base.sessions if base is not None else {}
    current = {name: read_text(os.path.join(folder.sessions, name), exact=True) for name in incoming.sessions}
    replaced = {n for n, text in current.items() if text is not None and sent.get(n) == text != incoming.sessions[n]}
    known = Known.in_folder(folder.sessions, leaving=replaced)
    record = incoming.removals if incoming.removals is not None else removals.read(folder.dir)
    gone = removals.texts_removed(record)
    taken: dict[str, str] = {}
    held: list[str] = []  # the folder's session files, listed once when first asked (``_superseded``)
    for name, text in sorted(incoming.sessions.items()):
        if name in replaced:  # only the other side changed it since this folder sent it
            landed._write(os.path.join(folder.sessions, name), text)
            landed.added.append(name)
        elif current[name] == text or known.copy_of(text) is not None or _superseded(folder, name, text, held):
            landed.identical.append(name)
        elif gone and removals.holds_text(gone, text.encode("utf-8", "surrogateescape")):
            landed.removed.append(name)  # this session was removed here (or told removed): it stays out
        else:
            _fork(folder, name, text, current[name], taken, landed)
            known.add(name, text)


def _superseded(folder: paths.Project, name: str, text: str, held: list[str]) -> bool:
    """Whether a session file here holds a later text of the arriving one (``sessions.supersedes``):
    an older archive brings nothing back of a session that went on. Its files are named by its
    start, whatever suffix each road gave them, so only those are read (``held``: the folder's
    files, listed on the first call)."""
    from keeper.exchange.sessions import supersedes

    if not held:
        try:
            held += [n for n in os.listdir(folder.sessions) if paths.safe_session_name(n)] or [""]
        except OSError:
            held.append("")
    start = name[: len("YYYY-MM-DD_HHMM")]
    for other in [n for n in held if n and n.startswith(start)][:50]:
        there = read_text(os.path.join(folder.sessions, other), exact=True)
        if there is not None and supersedes(there, text):
            return True
    return False


def _fork(
    folder: paths.Project, name: str, text: str, current: str | None, taken: dict[str, str], landed: Landed
) -> None:
    """Place a session text under ``name``, or the session's first free other name
    (``sessions.place``), unless one of them holds it already."""
    from keeper.exchange.sessions import place

    def holding(candidate: str) -> str | None:
        there = current if candidate == name else read_text(os.path.join(folder.sessions, candidate), exact=True)
        return taken.get(candidate) if there is None else there

    placed, there = place(name, text, holding)
    if there:
        landed.identical.append(name)
        return
    taken[placed] = text
    landed._write(os.path.join(folder.sessions, placed), text, new=True)
    if placed != name:
        landed.renamed.append((name, placed))
    else:
        landed.added.append(name)


def _arrives_again(folder: paths.Project, path: str, incoming: Incoming) -> bool:
    """Whether a session file the other side no longer holds by its name arrives under another name
    (the repository held the same session twice and kept one): the same session, so it stays here,
    under its name here. Trashed, this folder lost it, the arriving copy being known as its own."""
    if os.path.dirname(path) != folder.sessions or not incoming.sessions:
        return False
    text = read_text(path, exact=True)
    return text is not None and text in set(incoming.sessions.values())


def _to_trash(folder: paths.Project, files: list[str]) -> None:
    """What a recorded removal took away here (another machine retired, deleted or cleared it):
    moved to this machine's trash, restorable with ``keeper restore``, never destroyed."""
    from keeper.store import trash

    try:
        trash.move_to_trash(folder, files, "removed on another machine (keeper sync)")
    except OSError:
        pass  # the files stay where they are; the next sync moves them
