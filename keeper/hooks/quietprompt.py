"""A prompt with nothing Keeper could recall, answered by the launcher: what it may rest on, written down.

Most prompts recall nothing, and Keeper knows so before it opens the index (``keeper.recall.gate``):
fewer than ``prompts.MIN_HITS`` of the prompt's terms are held anywhere in the memory, or it is too
short to try (``prompts.AUTO_MIN_WORDS``), or automatic recall is off. Python alone costs such a prompt
more than its budget, so when the plugin's launcher (``launcher/prompt.bash``; on Windows
``launcher/keeper.c``, the paths then in Windows form) passed a prompt on, ``Launcher.vouch`` writes
``$CLAUDE_PLUGIN_DATA/counter/<session>.prompt``: the launcher's key, the tally and hook log the answer
appends to, the settings' bytes, every file the gate rests on (each older than the record and of the
mtime the gate holds, by a twin as the Stop's record), and what the launcher needs to tell (bash with
builtins alone) that a prompt holds fewer than ``MIN_HITS`` held terms: the ``PREFIX``-letter beginnings
of the held terms (``y`` read as ``i``), which a prompt word's term always shares with the word (see
``keys_of``), the stop words, the date words that send a prompt to the search (``keeper.recall.dates``),
and Keeper's own request's opening. The record says nothing about any one prompt: it vouches for the
memory as the gate saw it, and the launcher counts, for each prompt, at least as many held terms as
Python would (``tests/test_launcher_prompt.py`` proves it by property tests). Dated, like the allowance,
from before Keeper read anything; whatever Keeper cannot vouch for, it withdraws. docs/counter.md writes
the record down.
"""

from __future__ import annotations

import os
import stat
import sys

from keeper.hooks import allowance, idle
from keeper.recall import dates, gate, sources
from keeper.recall import stemmer as _stemmer
from keeper.recall import tokens as _tokens
from keeper.store import counters, paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from keeper.store.resolve import Resolved

TAG = "keeper-prompt 1"
PREFIX = 4  # letters of a term the launcher compares
MAX_KEYS = 64 << 10  # bytes of the held beginnings the record may carry; more: only short prompts are answered
MAX_LISTED = 1000  # session files the launcher lists per prompt (~5 ms of bash); more: only short prompts
# words whose term is not found from their first letters by the launcher's rules: kept by their own beginnings
ODD_WORDS = (*_stemmer.IRREGULAR, *_stemmer.EXCEPTIONS, *(c + "ying" for c in "bcdfghjklmnpqrstvwxz"))


_NOT_IN_WORDS = frozenset("0123456789 \t\n\r\x0b\x0c")  # a term holding one never comes from a prompt's letters


def normal(text: str) -> str:
    """How the launcher compares a word's or a term's beginning: ``y`` as ``i`` (Porter2 turns one into the other)."""
    return text.replace("y", "i")


def keys_of(held: bytes) -> set[str]:
    """The launcher's keys for ``held`` terms (one a line): each term's first ``PREFIX`` letters (a
    shorter term whole), and for a word the stemmer joins to a held term by a table (``went``, ``dying``)
    that word's own. Why a prompt word's term is found from the word: Porter2 cuts or replaces a suffix
    within the word's regions, and every replacement keeps the suffix's first letters; so the term is
    the word's first letters (a short one: the word's first one to four), or those and an ``e``
    (``hoping``, ``hope``), or, for ``-biliti``, the two before it and ``bl`` (``launcher/prompt.bash``
    tries each). Only terms a prompt of ASCII letters can give are kept."""
    terms = set(held.decode("utf-8", "surrogatepass").split("\n")) - {""}
    keys = {normal(t)[:PREFIX] for t in terms if t.isascii() and _NOT_IN_WORDS.isdisjoint(t)}
    keys.update(key for term, key in _odd_keys() if term in terms)
    return keys


_ODD_KEYS: list[tuple[str | None, str]] = []


def _odd_keys() -> list[tuple[str | None, str]]:
    """Each of ``ODD_WORDS``' term and key, found once."""
    if not _ODD_KEYS:
        _ODD_KEYS.extend((_tokens.term_of(word), normal(word)[:PREFIX]) for word in ODD_WORDS)
    return _ODD_KEYS


def _spaced(words: object) -> str:
    """Words as one line the launcher tests with ``*" $word "*``."""
    return " " + " ".join(sorted(words)) + " "  # type: ignore[call-overload]


def _gate_files(at: Resolved, found: gate.Kept) -> list[tuple[str, int | None]] | None:
    """The files the gate rests on, each with the mtime the gate holds (None: absent), or None when
    one cannot be told as the launcher tells it (a link, a name a source cannot have)."""
    project, key = at.project, found.key
    files: list[tuple[str, int | None]] = [(os.path.join(project.state, paths.RECALL_GATE), found.mtime_ns)]
    native, stamp = sources.native_dir(project), key.get("native")
    if stamp is None:
        files.append((native, None))
    elif isinstance(stamp, list) and len(stamp) == 4 and all(stat.S_ISDIR(mode) for mode in stamp[::2]):
        files += [(native, stamp[1]), (os.path.dirname(native), stamp[3])]
    else:
        return None
    sessions, outside = key.get("sessions"), key.get("outside")
    if not isinstance(sessions, dict) or not isinstance(outside, dict):
        return None
    named: list[tuple[str | None, object]] = [
        (os.path.join(project.sessions, str(name)), held) for name, held in sessions.items()
    ]
    for name, held in outside.items():
        named.append((project.team if name == sources.TEAM_NAME else sources.path_of(project, str(name)), held))
    for path, held in named:
        if path is None or os.path.islink(path) or not (held is None or (isinstance(held, list) and held)):
            return None
        files.append((path, None if held is None else int(held[0])))
    return files


def _names(found: gate.Kept) -> bytes | None:
    """The session files' names as the launcher lists them (``/`` between), or None when it could not
    (or should not: more than ``MAX_LISTED``)."""
    names = found.names.split(b"\n") if found.names else []
    if len(names) > MAX_LISTED:  # listing them in bash would cost the prompt more than Python's gate
        return None
    if any(not n.isascii() or n.startswith(b".") or b"/" in n or not n.strip() for n in names):
        return None
    return b"/".join(names)


def _mode(at: Resolved, dated: float) -> tuple[str, list[bytes], list[tuple[str, int | None]]]:
    """What the launcher may answer (``quiet``: every prompt that is not a command; ``short``: one of
    fewer than ``AUTO_MIN_WORDS`` words; ``gate``: also one with too few held terms), the lines of the
    gate's terms and names, and the files it rests on, none written since ``dated``."""
    project = at.project
    if not at.cfg.auto_recall:
        return "quiet", [b"", b"", b""], []
    if not os.path.isdir(project.sessions):
        return "quiet", [b"", b"", b""], [(project.sessions, None)]
    found = gate.kept(project, at.cfg.team, at.session)
    files = _gate_files(at, found) if found is not None else None
    names = _names(found) if found is not None else None
    if found is None or files is None or names is None or os.path.islink(project.sessions):
        return "short", [b"", b"", b""], []
    if any(mtime is not None and (mtime >= dated * 1e9 or mtime % 1_000_000_000 == 0) for _, mtime in files):
        # the search just kept the gate (not older than the record), or a file dated to the second (idle.file_lines)
        return "short", [b"", b"", b""], []
    keys = _spaced(keys_of(found.terms)).encode("ascii")
    if len(keys) > MAX_KEYS:
        return "short", [b"", b"", b""], []
    return "gate", [keys, os.fsencode(project.sessions), names], files


def record_words(own_request: str) -> list[str]:
    """The record's lines of words: the stop words, the date words that make the gate search, the
    words a slip in which the gate reads as one of those (``dates.respelled``), and ``own_request``,
    how Keeper's own save request begins (``entry.OWN_REQUEST``)."""
    from keeper.hooks import prompts

    triggers = {word.lower() for word in dates.TRIGGERS if word.isalpha()}
    respelled = [word for word, _ in dates.SPELLED if word in triggers]
    limits = f"{prompts.AUTO_MIN_WORDS} {prompts.MIN_HITS} {PREFIX}"
    return [limits, _spaced(_tokens.STOP), _spaced(triggers), _spaced(respelled), own_request]


class Launcher(idle.Passed):
    """The launcher's record for a prompt (``launcher/prompt.bash``)."""

    __slots__ = ()
    VARIABLE = "KEEPER_LAUNCHER_PROMPT"

    def vouch(self, at: Resolved, cwd: str, started: float, own_request: str) -> None:
        """Write the launcher's record for this session as Keeper finds the memory now, for the
        settings read at ``started`` or later; withdraw it where Keeper cannot vouch. ``own_request``:
        how Keeper's own request begins, a prompt the launcher leaves to Keeper."""
        if not self.record or not os.path.isabs(self.record) or not self.key:
            return
        tally = counters.tally_path(at.project, at.session)
        if at.cfg.debug or not at.has_session or not allowance.names_its_folder(cwd) or os.path.islink(tally):
            self.withdraw()
            return
        dated = started - allowance.CLOCK_SLACK
        mode, gated, files = _mode(at, dated)
        files.append((os.path.join(at.project.state, f"{at.session}.start"), None))  # 0.3's: Keeper migrates
        try:
            claude = os.environ.get("CLAUDE_CONFIG_DIR", "")  # where the auto memory is: not in the launcher's key
            head = [TAG, self.key, tally, counters.hook_log_path(at.project.state), sys.executable, claude, mode]
            lines = [os.fsencode(line) for line in [*head, *record_words(own_request)]] + gated
            settings = allowance.settings_lines(allowance.watched_files(at))
        except (UnicodeError, ValueError):  # a name no file system holds
            settings = None
        if settings is None or any(c in line for line in lines for c in b"\n\r\x00"):
            self.withdraw()
            return
        earlier = idle.twins_of(self.record)
        try:
            os.makedirs(os.path.dirname(self.record), exist_ok=True)
        except OSError:
            return
        twins = idle.file_lines(self.record, files)
        if twins is None:
            self.withdraw()
            return
        body = b"".join(line + b"\n" for line in lines) + settings + twins + b"end\n"
        allowance.write_record(self.record, body, dated)
        for path in earlier:
            idle.remove(path)
