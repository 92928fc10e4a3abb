"""Keeper's save format: what ``keeper save`` reads on stdin.

Why not YAML: a save is prose a model writes into a heredoc, and YAML types and trims prose.
``state: PR #42 open`` keeps only ``PR``, ``- Use SCAN, not KEYS: it blocks`` turns into a mapping,
``yes`` into True, ``1.10`` into 1.1, and one stray bracket fails the whole save. This format keeps
YAML's look and none of its typing: every value is text stored exactly as written, ``parse`` never
raises, and whatever it does not understand is kept somewhere and reported, never dropped.
Standard library only, plain string operations (json only for JSON input), linear time.

The rules:

- Lines are split on ``\\n`` only (one trailing ``\\r`` is removed), so characters such as
  ``\\x0c``, ``\\x85`` or ``\\u2028`` stay inside values here (saving then writes a lone ``\\r``,
  ``\\x85``, ``\\u2028`` and ``\\u2029`` as ``\\n``, see ``saving.one_newline``). A leading BOM is
  ignored. Nothing else is stripped: leading and trailing spaces of a value are kept.
- A key line starts at column 0: a name (an ASCII letter, then letters, digits, ``_`` or ``-``),
  ``:``, then nothing or one space and the value, which is the rest of the line as written
  (``summary: a: b # c`` gives ``a: b # c``). Known keys match in any case (``Summary:``) and may
  omit the space (``summary:value``); an unknown name needs it, so ``C:\\dir`` or ``http://x`` at
  column 0 is text, not a key.
- A text key (``summary``, ``scope``) takes the value on its line; a list key takes it as one item.
  A blank value is no value; a list key with no items is an empty list.
- A list item is ``- text`` or ``* text`` at any indentation, the item being everything after that
  first marker (``  - - x`` gives ``- x``). Under a text key such lines are ordinary text.
- A longer value continues on lines indented deeper than its item's marker (any indentation under
  a text key); the lines are joined with ``\\n`` after their common indentation is removed. Blank
  lines inside are kept when more continuation follows; trailing ones are dropped. So an indented
  ``note: x`` is text, not a key.
- YAML's block form still works: a value of exactly ``|`` or ``>`` (with ``-``/``+``) followed by
  an indented line is only a marker. ``|`` keeps the lines, ``>`` folds them into one paragraph per
  blank line; under a list key each line of the block is an item. Otherwise ``|`` is literal text.
- What fits no rule is still kept, with a problem saying where: a line under a list key that is
  neither an item nor deeper than one becomes an item of its own; an unindented non-key line under
  a text key joins its text; text before the first key goes to ``stray``; an unknown key keeps its
  text (a list once an item appears under it) in ``unknown``. A text key given twice keeps both
  values, one per line; a list key given twice collects all items.
- A body indented as a whole is read as if it started at column 0.
- A JSON object (first non-space character ``{``) is read as JSON: strings as they are, lists as
  items, numbers as written (``1.10`` stays ``1.10``), ``true``/``false`` as that text, ``null`` as
  nothing (JSON's "none"), a nested object or list as its JSON text (with a problem). Text that
  starts with ``{`` but is no JSON object is read as save-format text, with a problem (``keeper
  save`` refuses it outright when no key is found in it, and refuses a bare JSON list).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_NAME_CHARS = _LETTERS | frozenset("0123456789_-")
_BLOCK_MARKERS = frozenset(("|", "|-", "|+", ">", ">-", ">+"))
_INDENT = " \t"


class ParsedSave:
    """One save as read: known values, unknown keys, text that belonged to no key, and problems."""

    __slots__ = ("problems", "stray", "unknown", "values")

    def __init__(
        self,
        values: dict[str, str | list[str]] | None = None,
        unknown: dict[str, str | list[str]] | None = None,
        problems: list[str] | None = None,
        stray: list[str] | None = None,
    ) -> None:
        self.values: dict[str, str | list[str]] = {} if values is None else values
        self.unknown: dict[str, str | list[str]] = {} if unknown is None else unknown
        self.problems: list[str] = [] if problems is None else problems
        self.stray: list[str] = [] if stray is None else stray

    def __repr__(self) -> str:
        return (
            f"ParsedSave(values={self.values!r}, unknown={self.unknown!r}, "
            f"problems={self.problems!r}, stray={self.stray!r})"
        )


def rules() -> str:
    """The sentences a save request prints above the example."""
    return (
        "Values are plain text, written as they are: no quotes, no escapes. One item per `  - ` line; "
        "continue a long value on the next line indented by four spaces; drop keys that do not apply. "
        "Name a resolved issue or a retired decision in the words memory.md has for it."
    )


def template() -> str:
    """The example body a save request shows between ``<<'KEEPER'`` and ``KEEPER``, newline-ended."""
    return (
        "summary: What this session did and why, in one or two sentences; a long value\n"
        "    continues on the next line, indented by four spaces.\n"
        "decisions:\n"
        "  - A durable choice and its reason\n"
        "state:\n"
        "  - Where the work stands now and what comes next\n"
        "issues:\n"
        "  - An open problem worth remembering\n"
        "resolved:\n"
        "  - A known issue that is now fixed\n"
        "retired:\n"
        "  - A decision that no longer holds\n"
    )


def parse(text: str) -> ParsedSave:
    """Read a save; never raises, and keeps every non-blank line's text somewhere in the result."""
    if text.startswith("\ufeff"):
        text = text[1:]
    problem = ""
    if text.lstrip().startswith("{"):
        pairs = _json_pairs(text)
        if isinstance(pairs, list):
            try:
                return _from_json(pairs)
            except RecursionError:
                pairs = "nested too deeply"
        problem = f"the input starts with '{{' but is not a JSON object ({pairs}); it was read as save-format text"
    result = _Reader().read(text)
    if problem:
        result.problems.insert(0, problem)
    return result


# --- the save format -------------------------------------------------------------------------


def _key_line(line: str) -> tuple[str, str] | None:
    """``(name, value)`` when ``line`` is a key line, else None."""
    from keeper.memory.savekeys import KNOWN_KEYS

    if not line or line[0] not in _LETTERS:
        return None
    end, size = 1, len(line)
    while end < size and line[end] in _NAME_CHARS:
        end += 1
    if end == size or line[end] != ":":
        return None
    name, rest = line[:end], line[end + 1 :]
    if not rest:
        return name, ""
    if rest[0] == " ":
        return name, rest[1:]
    return (name, rest) if name.lower() in KNOWN_KEYS else None


def _item_text(body: str) -> str | None:
    """The item's text when ``body`` (a line without its indentation) is a list item."""
    if body[:2] in ("- ", "* "):
        return body[2:]
    return "" if body in ("-", "*") else None


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(_INDENT))]


def _common_indent(lines: list[str]) -> str:
    """The indentation every non-blank line starts with."""
    common: str | None = None
    for line in lines:
        if not line.strip():
            continue
        lead = _indent_of(line)
        if common is None:
            common = lead
            continue
        size = min(len(common), len(lead))
        same = 0
        while same < size and common[same] == lead[same]:
            same += 1
        common = common[:same]
    return common or ""


def _fold(lines: list[str]) -> str:
    """YAML's ``>``: lines of a paragraph joined by spaces, each blank line one newline."""
    parts: list[str] = []
    after_text = False
    for line in lines:
        if not line:
            parts.append("\n")
            after_text = False
        else:
            if after_text:
                parts.append(" ")
            parts.append(line)
            after_text = True
    return "".join(parts)


class _Value:
    """One value being read: the text on its first line, then its continuation lines as written."""

    __slots__ = ("blanks", "column", "first", "fold", "lines", "marker")

    def __init__(self, first: str, column: int, marker: bool = False) -> None:
        self.first = first
        self.column = column  # a continuation line is indented deeper than this
        self.marker = first if marker and first.rstrip(_INDENT) in _BLOCK_MARKERS else ""
        self.fold = False
        self.lines: list[str] = []  # blank lines inside are ""
        self.blanks = 0  # blank lines since the last one, kept only if more text follows

    def add(self, line: str) -> None:
        if self.first or self.lines:
            self.lines.extend([""] * self.blanks)
        self.blanks = 0
        self.lines.append(line)

    def text(self) -> str:
        if not self.lines:
            return self.first
        cut = len(_common_indent(self.lines))
        lines = [line[cut:] for line in self.lines]
        body = _fold(lines) if self.fold else "\n".join(lines)
        return f"{self.first}\n{body}" if self.first else body


class _Entry:
    """Everything read under one key, over all the places it was given."""

    __slots__ = ("block", "kind", "lines", "name", "pieces")

    def __init__(self, name: str, kind: str) -> None:
        self.name = name
        self.kind = kind  # "text", "list", or "flex": an unknown key, text until an item appears
        self.pieces: list[str] = []  # items, or the texts to join
        self.block = False  # list lines came in a `|`/`>` block: one item each, no marker needed
        self.lines: list[int] = []  # where the key was given


class _Reader:
    """One pass over the lines; each line is placed as it comes."""

    def __init__(self) -> None:
        self.entries: dict[str, _Entry] = {}
        self.entry: _Entry | None = None
        self.value: _Value | None = None
        self.stray: list[str] = []
        self.stray_lines: list[int] = []
        self.notes: dict[tuple[str, str], list[int]] = {}

    def note(self, kind: str, name: str, number: int) -> None:
        self.notes.setdefault((kind, name), []).append(number)

    def finish(self) -> None:
        """Close the value being read and file it under its key."""
        if self.value is not None and self.entry is not None:
            text = self.value.text()
            if text.strip():
                self.entry.pieces.append(text)
        self.value = None

    def read(self, text: str) -> ParsedSave:
        lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
        indent = len(_common_indent(lines))
        if indent:
            first = next(line for line in lines if line.strip())
            if _key_line(first[indent:]) is not None:
                lines = [line[indent:] for line in lines]
        for number, line in enumerate(lines, 1):
            if not line.strip():
                if self.value is not None:
                    self.value.blanks += 1
                elif self.entry is None and self.stray:
                    self.stray.append(line)
                continue
            key = _key_line(line)
            if key is not None:
                self.start(number, *key)
            elif self.entry is None:
                self.stray.append(line)
                self.stray_lines.append(number)
            else:
                self.place(number, line, self.entry)
        self.finish()
        return self.result()

    def start(self, number: int, name: str, value: str) -> None:
        from keeper.memory.savekeys import KNOWN_KEYS, LIST_KEYS, TEXT_KEYS

        self.finish()
        folded = name.lower()
        canonical = folded if folded in KNOWN_KEYS else name
        entry = self.entries.get(canonical)
        if entry is None:
            kind = "text" if canonical in TEXT_KEYS else "list" if canonical in LIST_KEYS else "flex"
            entry = self.entries[canonical] = _Entry(canonical, kind)
            if kind == "flex":
                self.notes[("unknown", canonical)] = []
        entry.lines.append(number)
        if entry.kind == "text" and len(entry.lines) == 2:
            self.notes[("twice", canonical)] = entry.lines
        entry.block = False
        self.entry = entry
        if not value.strip():
            value = ""
        if value or entry.kind != "list":
            self.value = _Value(value, 0, marker=True)

    def place(self, number: int, line: str, entry: _Entry) -> None:
        """A line under a key that is not itself a key line."""
        body = line.lstrip(_INDENT)
        indent = len(line) - len(body)
        item = _item_text(body)
        value = self.value
        if value is not None and value.marker:  # `key: |` is a block marker only before an indented line
            marker, value.marker = value.marker, ""
            if indent:
                value.first = ""
                value.fold = marker.startswith(">")
                entry.block = True
                if entry.kind == "list":
                    self.value = value = None
        if entry.kind == "flex" and item is not None:
            self.finish()
            entry.kind = "list"
            value = None
        if entry.kind != "list":
            if value is None:
                value = self.value = _Value("", 0)
            if not indent:
                self.note("unindented", entry.name, number)
            value.add(line)
        elif item is not None:
            self.finish()
            self.value = _Value(item, indent)
        elif value is not None and indent > value.column:
            value.add(line)
        else:
            self.finish()
            self.value = _Value(body, indent)
            if not entry.block:
                self.note("no-marker", entry.name, number)

    def result(self) -> ParsedSave:
        from keeper.memory.savekeys import KNOWN_KEYS

        result = ParsedSave()
        for name, entry in self.entries.items():
            target = result.values if name in KNOWN_KEYS else result.unknown
            target[name] = list(entry.pieces) if entry.kind == "list" else "\n".join(entry.pieces)
        while self.stray and not self.stray[-1].strip():
            self.stray.pop()
        result.stray = self.stray
        if self.stray_lines:
            first, last = self.stray_lines[0], self.stray_lines[-1]
            where = f"line {first} was" if first == last else f"lines {first} to {last} were"
            if self.entries:
                result.problems.append(f"{where} before the first key, under no key; kept as written")
            else:
                result.problems.append(f"no key found (known: {', '.join(KNOWN_KEYS)}); the text is kept as written")
        for (kind, name), numbers in self.notes.items():
            result.problems.append(_problem(kind, name, numbers))
        return result


def _where(numbers: list[int]) -> tuple[str, str]:
    """``("lines 3, 5 and 8", "were")``, at most five numbers shown."""
    if len(numbers) == 1:
        return f"line {numbers[0]}", "was"
    shown = [str(n) for n in numbers[:5]]
    if len(numbers) > 5:
        return f"lines {', '.join(shown)} and {len(numbers) - 5} more", "were"
    return f"lines {', '.join(shown[:-1])} and {shown[-1]}", "were"


def _unknown(name: str) -> str:
    from difflib import get_close_matches

    from keeper.memory.savekeys import KNOWN_KEYS

    close = get_close_matches(name.lower(), KNOWN_KEYS, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"unknown key {name!r} ({hint}known: {', '.join(KNOWN_KEYS)}); its text is kept in the session file"


def _problem(kind: str, name: str, numbers: list[int]) -> str:
    if kind == "unknown":
        return _unknown(name)
    where, verb = _where(numbers)
    if kind == "twice":
        return f"{name!r} was given {len(numbers)} times ({where}); every value was kept, one after another"
    if kind == "unindented":
        return f"{where} under {name!r} {verb} not indented; kept as part of its text"
    return f"{where} under {name!r} had no '- ' in front; kept as separate items"


# --- JSON --------------------------------------------------------------------------------------


class _Literal(str):
    """A JSON number or constant, kept as the text it was written as."""

    __slots__ = ()


def _json_pairs(text: str) -> list[tuple[str, Any]] | str:
    """The top-level object's pairs in order (duplicates kept), or why there is none."""
    import json  # only for JSON input: json brings in re

    objects: list[list[tuple[str, Any]]] = []

    def collect(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        objects.append(pairs)  # inner objects close first, so the top level comes last
        return dict(pairs)

    try:
        data = json.loads(
            text, object_pairs_hook=collect, parse_float=_Literal, parse_int=_Literal, parse_constant=_Literal
        )
    except (ValueError, RecursionError) as error:
        return str(error) or type(error).__name__
    return objects[-1] if isinstance(data, dict) else "not an object"


def _json_text(value: Any) -> str:
    """A nested value as compact JSON, numbers as written."""
    if isinstance(value, _Literal):
        return str(value)
    if isinstance(value, str):
        import json

        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_json_text(k)}: {_json_text(v)}" for k, v in value.items()) + "}"
    return "[" + ", ".join(_json_text(v) for v in value) + "]"


def _from_json(pairs: list[tuple[str, Any]]) -> ParsedSave:
    from keeper.memory.savekeys import KNOWN_KEYS, LIST_KEYS, TEXT_KEYS

    result = ParsedSave()
    nested: list[str] = []
    given: dict[str, int] = {}

    def piece(value: Any, name: str) -> str:
        if isinstance(value, (dict, list)):
            if name not in nested:
                nested.append(name)
            return _json_text(value)
        return _json_text(value) if isinstance(value, bool) else str(value)

    for name, raw in pairs:
        folded = name.lower()
        key = folded if folded in KNOWN_KEYS else name
        target = result.values if key in KNOWN_KEYS else result.unknown
        given[key] = given.get(key, 0) + 1
        if key not in KNOWN_KEYS and given[key] == 1:
            result.problems.append(_unknown(key))
        as_list = isinstance(raw, list)
        pieces = [piece(v, key) for v in (raw if as_list else [raw]) if v is not None]
        if key in LIST_KEYS or (as_list and key not in KNOWN_KEYS):
            items = [p for p in pieces if p.strip()]
            previous = target.get(key)
            if isinstance(previous, list):
                previous.extend(items)
            else:
                target[key] = ([previous] if previous and previous.strip() else []) + items
            continue
        text = "\n".join(pieces)
        previous = target.get(key)
        if isinstance(previous, list):
            if text.strip():
                previous.append(text)
        elif previous:
            target[key] = f"{previous}\n{text}" if text else previous
        else:
            target[key] = text
    for key, count in given.items():
        if count > 1 and key in TEXT_KEYS:
            result.problems.append(f"{key!r} was given {count} times; every value was kept, one after another")
    result.problems.extend(f"{name!r} held a nested JSON object or list; kept as its JSON text" for name in nested)
    return result
