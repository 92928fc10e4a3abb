"""Lossless markdown sections: split at ``#``/``##`` headings, edit bodies, render byte for byte.

Memory files are edited by people in any editor, so the parser keeps every raw line with its own
line ending (and the BOM), ignores headings inside fenced code, and renders the untouched parts
exactly as they were read. Keeper edits only the lines it owns.
"""

from __future__ import annotations

BOM = "\ufeff"
_MAY_OPEN = frozenset(" #`~")  # what a heading or a fence line starts with (indented by spaces only)


def heading(line: str) -> tuple[int, str] | None:
    """``(level, title)`` for an ATX heading line (``## Title ##``), else None.

    String work rather than a regex: SessionStart parses memory.md, and importing ``re`` costs
    about as much as the rest of that hook.
    """
    text = line.rstrip("\r\n")
    stripped = text.lstrip(" ")
    if len(text) - len(stripped) > 3 or not stripped.startswith("#"):
        return None
    level = len(stripped) - len(stripped.lstrip("#"))
    rest = stripped[level:]
    if level > 6 or (rest and rest[0] not in " \t"):
        return None
    title = rest.strip(" \t")
    closing = title.rstrip("#")
    if closing != title and (not closing or closing[-1] in " \t"):
        title = closing.rstrip(" \t")
    return level, title


def fence(line: str) -> str | None:
    """The fence marker (a run of 3+ backticks or tildes) that opens or closes a code block."""
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3 or stripped[:1] not in ("`", "~"):
        return None
    run = len(stripped) - len(stripped.lstrip(stripped[0]))
    return stripped[:run] if run >= 3 else None


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split at ``\n`` only.

    ``str.splitlines`` also breaks at ``\x0c``, ``\x85``, ``\u2028`` and others, which may sit
    inside a saved value; a file must come apart into the same lines an editor shows.
    """
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _structural(text: str, lists: bool = False) -> bool:
    """Whether ``text``, once its leading backslashes are gone, would be a heading or a fence
    (with ``lists``, also a top-level list item: ``- ``, ``* ``, ``+ `` in the first column)."""
    core = text.lstrip(" ")
    indent = text[: len(text) - len(core)]
    core = core.lstrip("\\")
    if lists and not indent and bullet(core) is not None:
        return True
    return heading(indent + core) is not None or fence(indent + core) is not None


def escape_line(line: str, lists: bool = False) -> str:
    """Make a line of saved text inert: one that would read as a heading or fence gets a backslash.

    Markdown shows ``\\#`` as ``#``, so a person reads the text unchanged, and Keeper's own
    structure (``## Activity``, ``### 14:30 save``) can never be forged by what was saved. Lines
    already starting with backslashes get one more, so ``unescape_line`` restores any text exactly.
    With ``lists``, a line that would read as a list item is escaped too (``\\- text``): free text
    such as a summary, where a leading ``- `` would pass for one of Keeper's labelled items.
    """
    if not _structural(line, lists):
        return line
    core = line.lstrip(" ")
    return line[: len(line) - len(core)] + "\\" + core


def unescape_line(line: str, lists: bool = False) -> str:
    """``escape_line``'s inverse (give the same ``lists``)."""
    core = line.lstrip(" ")
    if core.startswith("\\") and _structural(line, lists):
        return line[: len(line) - len(core)] + core[1:]
    return line


def bullet(line: str) -> str | None:
    """The text of a top-level ``-``/``*``/``+`` list item, else None."""
    if len(line) > 1 and line[0] in "-*+" and line[1] in " \t":
        return line[2:].strip()
    return None


class Section:
    """A heading line (None for the text before the first heading) and the raw lines below it."""

    __slots__ = ("heading", "level", "lines", "title")

    def __init__(self, heading: str | None, level: int, title: str, lines: list[str]) -> None:
        self.heading, self.level, self.title, self.lines = heading, level, title, lines

    def key(self) -> str:
        """The title folded for matching: lower case letters and digits, single spaces."""
        return " ".join("".join(c if c.isascii() and c.isalnum() else " " for c in self.title.lower()).split())

    def bullets(self) -> list[tuple[int, str]]:
        """Top-level bullet items as ``(line index, text)``."""
        found = []
        for index, line in enumerate(self.lines):
            text = bullet(line)
            if text is not None:
                found.append((index, text))
        return found

    def item_span(self, index: int) -> int:
        """End (exclusive) of the bullet at ``index`` including its indented continuation lines."""
        end = index + 1
        while end < len(self.lines) and self.lines[end][:1] in (" ", "\t") and self.lines[end].strip():
            end += 1
        return end


class Document:
    """A parsed markdown file that renders back to exactly the text it came from."""

    def __init__(self, sections: list[Section], newline: str, bom: bool) -> None:
        self.sections, self.newline, self.bom = sections, newline, bom

    @classmethod
    def parse(cls, text: str, split_level: int = 2) -> Document:
        bom = text.startswith(BOM)
        if bom:
            text = text[1:]
        lines = split_lines(text)
        crlf = sum(1 for line in lines if line.endswith("\r\n"))
        newline = "\r\n" if crlf * 2 > len(lines) else "\n"
        sections = [Section(None, 0, "", [])]
        open_fence: str | None = None
        for line in lines:
            if line[:1] not in _MAY_OPEN:  # the common line: neither a fence nor a heading starts so
                sections[-1].lines.append(line)
                continue
            marker = fence(line)
            if marker:
                if open_fence is None:
                    open_fence = marker[0] * 3
                elif marker.startswith(open_fence):
                    open_fence = None
            elif open_fence is None:
                found = heading(line)
                if found and found[0] <= split_level:
                    sections.append(Section(line, found[0], found[1], []))
                    continue
            sections[-1].lines.append(line)
        return cls(sections, newline, bom)

    def render(self) -> str:
        parts = [BOM] if self.bom else []
        for section in self.sections:
            if section.heading is not None:
                parts.append(section.heading)
            parts.extend(section.lines)
        return "".join(parts)

    def find(self, keys: tuple[str, ...], level: int = 2) -> Section | None:
        for section in self.sections:
            if section.level == level and section.key() in keys:
                return section
        return None

    def title(self) -> Section | None:
        for section in self.sections:
            if section.level == 1:
                return section
        return None

    def add_section(self, title: str, level: int = 2, before: Section | None = None) -> Section:
        """Add a section at the end (or just before ``before``), set off by blank lines."""
        index = self.sections.index(before) if before is not None else len(self.sections)
        previous = self.sections[index - 1]
        tail = previous.lines
        if previous.heading is not None and not previous.heading.endswith("\n"):
            previous.heading += self.newline
        if tail and not tail[-1].endswith("\n"):
            tail[-1] += self.newline
        if (tail and tail[-1].strip()) or (not tail and previous.heading is not None):
            tail.append(self.newline)
        lines = [self.newline] if before is not None else []
        section = Section("#" * level + " " + title + self.newline, level, title, lines)
        self.sections.insert(index, section)
        return section

    def insert(self, section: Section, index: int, texts: list[str]) -> None:
        """Insert lines (given without endings) at ``index`` of a section's body.

        An empty section gets a blank line after its heading and before the next heading;
        otherwise the lines go in as they are, ending any unterminated line they follow.
        """
        if not texts:
            return
        nl = self.newline
        if section.heading is not None and not section.heading.endswith("\n"):
            section.heading += nl
        new = [text + nl for text in texts]
        is_last = section is self.sections[-1]
        if section.level > 0 and content_start(section) == len(section.lines):
            if not section.lines:
                section.lines[:] = [nl, *new] + ([] if is_last else [nl])
                return
            if not section.lines[0].endswith("\n"):
                section.lines[0] += nl
            trailing = section.lines[1:]  # every blank line already there stays
            section.lines[1:] = new + trailing + ([] if is_last or trailing else [nl])
            return
        if index > 0 and not section.lines[index - 1].endswith("\n"):
            section.lines[index - 1] += nl
        if index == len(section.lines) and not is_last:
            new.append(nl)
        section.lines[index:index] = new

    def remove(self, section: Section, start: int, end: int) -> list[str]:
        """Remove body lines ``start:end`` and return them."""
        removed = section.lines[start:end]
        del section.lines[start:end]
        return removed


def content_start(section: Section) -> int:
    """Index of the first non-blank body line (or the end of the body)."""
    for index, line in enumerate(section.lines):
        if line.strip():
            return index
    return len(section.lines)


def content_end(section: Section) -> int:
    """Index just past the last non-blank body line."""
    end = len(section.lines)
    while end > 0 and not section.lines[end - 1].strip():
        end -= 1
    return end


def after_last_bullet(section: Section) -> int:
    """Where a new bullet goes: after the last bullet item, else after the section's text."""
    bullets = section.bullets()
    if bullets:
        return section.item_span(bullets[-1][0])
    return content_end(section)


def bare(line: str) -> str:
    """A line without its line ending, for comparing lines Keeper wrote."""
    return line.rstrip("\r\n")
