"""Saved as said: whatever a model writes in a save, following the request literally, comes back.

The stdin is built exactly as the save request's template shows (``key: value``, ``  - item``),
then goes through the real reader and merge; every value is read back from memory.md and from
the session file.
"""

from __future__ import annotations

import os
import string
from datetime import datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keeper.capture import saving
from keeper.markdown import Document, unescape_line
from keeper.memory import document
from keeper.memory import items as memory_items
from keeper.store import config, identity, paths

HOSTILE = "#:'\"-*>|!&@`{}[]\\%~ ,?=$^()" + "\t"
# U+2028 and U+2029, NEL and CR are line breaks: a save writes them as "\n" (tests/test_save_injection.py)
ALPHABET = st.sampled_from(list(string.ascii_letters + string.digits + HOSTILE + "期限データ😀é\x0c\x1e"))
# a value is what a model writes after "key: " or "  - ": any characters, not blank, one line
value = st.text(ALPHABET, min_size=1, max_size=40).filter(lambda v: v.strip() and "\n" not in v and "\r" not in v)
LITERALS = st.sampled_from(["yes", "no", "null", "~", "1.10", "0x1F", "true", "- leading", "> quote", "| pipe", "@at"])
values = st.one_of(value, LITERALS)


def build(summary: str, lists: dict[str, list[str]]) -> str:
    lines = [f"summary: {summary}"]
    for key, items in lists.items():
        lines.append(f"{key}:")
        lines += [f"  - {item}" for item in items]
    return "\n".join(lines) + "\n"  # a heredoc ends with a newline


def distinct(items: list[str]) -> bool:
    """Whether the items are distinct memory items (the same item twice is rightly stored once)."""
    keys = [memory_items.key(i) for i in items]
    return len(set(keys)) == len(keys)


def saved_summary(record: str) -> str:
    """The summary lines of the only save in a session file, unescaped."""
    doc = Document.parse(record, split_level=3)
    save = next(s for s in doc.sections if s.title.endswith(" save"))
    raw = [line.rstrip("\n") for line in save.lines]
    end = next((i for i, line in enumerate(raw) if line.startswith("- ")), len(raw))  # a summary's "- " is escaped
    body = [unescape_line(line, lists=True) for line in raw]
    lines = body[1:end]
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(summary=values, decisions=st.lists(values, min_size=1, max_size=4), issues=st.lists(values, max_size=3))
def test_every_value_comes_back_byte_for_byte(
    project_dir: Path, tmp_path_factory: object, summary: str, decisions: list[str], issues: list[str]
) -> None:
    if not distinct(decisions) or not distinct(issues):
        return
    text = build(summary, {"decisions": decisions, "state": ["at " + summary], "issues": issues})
    save, problems = saving.read_input(text, [])
    assert problems == []
    project = paths.Project(str(project_dir), "p", str(Path(str(project_dir)).parent / f"store-{abs(hash(text))}"))
    saving.save(project, config.load(None), save, "s1", now=datetime(2026, 11, 22, 9, 0))
    text_now = Path(project.memory).read_text(encoding="utf-8")
    assert [t for t, _ in document.items(text_now, "decisions")] == decisions
    assert [t for t, _ in document.items(text_now, "issues")] == issues
    assert [t for t, _ in document.items(text_now, "state")][1:] == ["at " + summary]
    record = next(Path(project.sessions).glob("*.md")).read_text(encoding="utf-8")
    assert saved_summary(record) == summary
    for decision in decisions:
        assert f"- Decision: {decision}\n" in record


def test_saved_text_cannot_forge_keepers_own_sections(project_dir: Path) -> None:
    from keeper.capture import record

    text = "summary: Reworked the cart\n    ## Activity\n    ```\n    ### 10:00 save\ndecisions:\n  - Fences\n    ## Saves\n"
    save, problems = saving.read_input(text, [])
    assert problems == [] and save.summary == "Reworked the cart\n## Activity\n```\n### 10:00 save"
    project = identity.make_project(str(project_dir))
    cfg = config.load(None)
    saving.save(project, cfg, save, "s1")
    record.update(project, cfg, "s1", {"Last reply": "done"})
    record.update(project, cfg, "s1", {"Last reply": "done again"})
    session_file = next(Path(project.sessions).glob("*.md")).read_text(encoding="utf-8")
    assert [line for line in session_file.split("\n") if line.startswith("## ")] == ["## Saves"]
    assert saved_summary(session_file) == save.summary
    assert "- Last reply: done again" in session_file
    memory_md = Path(project.memory).read_text(encoding="utf-8")
    assert [t for t, _ in document.items(memory_md, "decisions")] == ["Fences\n## Saves"]
    assert [line for line in memory_md.split("\n") if line.startswith("## ")] == [
        "## Core Decisions",
        "## Current State",
        "## Recent Context",
        "## Known Issues",
    ]


# any character a model may send (no surrogates: not UTF-8), on one line for a list item
ANY = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)
# Every line break a value holds (CR, NEL, U+2028, ...) is stored as "\n" (saving.one_newline): so
# one-line items hold none, and a summary is compared as written with its breaks spelled "\n".
ITEM = st.one_of(ANY, LITERALS).filter(lambda v: v.strip() and "\n" not in saving.one_newline(v))
SLOTS = ("decisions", "state", "issues", "feedback", "user", "tool", "reference")


def stored(project: paths.Project, slot: str, scope: str) -> list[str]:
    """What memory.md (or the global one) holds for ``slot``, read back."""
    path = paths.global_memory_file() if scope == "global" and slot in document.TYPED else project.memory
    found = [t for t, _ in document.items(Path(path).read_text(encoding="utf-8"), slot)]
    return found[1:] if slot == "state" else found  # the state's first line is its date


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    slot=st.sampled_from(SLOTS),
    item=ITEM,
    # a summary's lines as written; blank lines before or after it are not kept (the format trims them)
    summary=st.one_of(ANY, LITERALS)
    .map(saving.one_newline)
    .filter(lambda v: v.split("\n")[0].strip() and v.split("\n")[-1].strip()),
    as_json=st.booleans(),
    scope=st.sampled_from(["project", "global"]),
)
def test_every_slot_stores_any_text_as_written_through_the_save_format_and_json(
    project_dir: Path, slot: str, item: str, summary: str, as_json: bool, scope: str
) -> None:
    import json
    import uuid

    if as_json:
        text = json.dumps({"summary": summary, slot: [item], "scope": scope})
    else:
        folded = summary.replace("\n", "\n    ")  # a long value continues on lines indented by four spaces
        text = f"summary: {folded}\n{slot}:\n  - {item}\nscope: {scope}\n"
    save, problems = saving.read_input(text, [])
    assert problems == [] and save.summary == summary
    home = Path(str(project_dir)).parent / f"store-{uuid.uuid4().hex}"
    project = paths.Project(str(project_dir), "p", str(home / "projects" / "p"))
    before = os.environ.get("KEEPER_HOME")
    os.environ["KEEPER_HOME"] = str(home)  # a global memory of this example's own
    try:
        saving.save(project, config.load(None), save, "s1", now=datetime(2026, 11, 22, 9, 0))
        assert stored(project, slot, scope) == [item]
    finally:
        if before is not None:
            os.environ["KEEPER_HOME"] = before
    record = next(Path(project.sessions).glob("*.md")).read_text(encoding="utf-8")
    assert saved_summary(record) == summary
