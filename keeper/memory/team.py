"""team.md: memory a team shares in its repository, in memory.md's format, merged by saves and by git.

It holds Core Decisions, Known Issues and the typed sections (Feedback, User, Tools, Reference)
that describe the codebase rather than one person. No Current State or Recent Context: those are
one person's session, not the team's. Items are dated like memory.md's.

Branches merge it with git's ``union`` driver (see ``ATTRIBUTES``): both sides' lines are kept,
never a conflict. What that can leave behind (the same item twice, an item one branch retired and
the other still had) is tidied by the next team save, for which a retirement is recorded in
``## Retired`` (reviewed like the rest). An item saved again after its retirement is live again.
"""

from __future__ import annotations

from keeper.markdown import Document, Section, after_last_bullet
from keeper.memory import document, items
from keeper.text import inline

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime

TITLE = "Team Memory"
RETIRED = "Retired"
ATTRIBUTES = (
    "# Keeper's team memory: branches that both add to it merge with git alone, keeping both sides' lines.\n"
    "team.md merge=union\n"
)
SECTIONS = ("decisions", *document.TYPED, "issues")  # what a team save writes; in this order when new


def template(project_name: str) -> str:
    return (
        f"# {TITLE}: {inline(project_name)}\n\n"
        "What this repository's team agreed and learned, saved with `keeper save --team` and reviewed like code.\n\n"
        f"## {document.SECTIONS['decisions'][0]}\n\n## {document.SECTIONS['issues'][0]}\n"
    )


def team_part(data: document.SaveInput) -> document.SaveInput:
    """The part of a save that goes to team.md: decisions, typed lists, issues and what they end.
    A NUL character becomes U+FFFD: it is no text anyone meant, and a file holding one is binary
    to git and to every reader of the repository."""

    def text(items: list[str]) -> list[str]:
        return [item.replace("\0", "\ufffd") for item in items]

    return document.SaveInput(
        decisions=text(data.decisions),
        issues=text(data.issues),
        resolved=text(data.resolved),
        retired=text(data.retired),
        typed={name: text(items) for name, items in data.typed.items()},
        scope="project",
    )


def _key(text: str) -> str:
    return items.key(text)


def _item(section: Section, index: int) -> str:
    return document.item_text(section.lines[index : section.item_span(index)])


def tidy(text: str) -> tuple[str, int]:
    """Remove what a textual merge left: a repeated item (the first stays) and an item that is also
    listed under Retired. Returns the text and how many items went."""
    doc = Document.parse(text)
    retired_section = doc.find((RETIRED.lower(),))
    retired = (
        {_key(_item(retired_section, i)) for i, _ in retired_section.bullets()}
        if retired_section is not None
        else set()
    )
    removed = 0
    for name in SECTIONS:
        section = doc.find(document.SECTIONS[name][1])
        if section is None:
            continue
        seen: set[str] = set()
        index = 0
        while index < len(section.lines):
            spans = dict(section.bullets())
            if index not in spans:
                index += 1
                continue
            key = _key(_item(section, index))
            if key in seen or key in retired:
                doc.remove(section, index, section.item_span(index))
                removed += 1
                continue
            seen.add(key)
            index = section.item_span(index)
    return doc.render(), removed


def merge(
    text: str | None, data: document.SaveInput, *, project_name: str, now: datetime
) -> tuple[str, document.MergeReport, int]:
    """Merge the team part of a save into team.md's text; return the text, the report and how many
    leftovers of a textual merge were tidied."""
    base = text if text and text.strip() else template(project_name)
    tidied_text, tidied = tidy(base)
    part = team_part(data)
    merged, _, report = document.merge(
        tidied_text, document.OwnedLines(), part, project_name=project_name, session_id="", now=now, recent_sessions=0
    )
    doc = Document.parse(merged)
    saved_again = {_key(item) for item in [*part.decisions, *part.issues, *(i for v in part.typed.values() for i in v)]}
    retired_section = doc.find((RETIRED.lower(),))
    if retired_section is not None and saved_again:
        index = 0
        while index < len(retired_section.lines):
            spans = dict(retired_section.bullets())
            if index in spans and _key(_item(retired_section, index)) in saved_again:
                doc.remove(retired_section, index, retired_section.item_span(index))
                continue
            index = retired_section.item_span(index) if index in spans else index + 1
    if report.retired:
        section = doc.find((RETIRED.lower(),)) or doc.add_section(RETIRED)
        stamp = now.strftime("%Y-%m-%d")
        lines = [line for item in report.retired for line in document.bullet(document.item_text([item]), stamp)]
        doc.insert(section, after_last_bullet(section), lines)
    return doc.render(), report, tidied
