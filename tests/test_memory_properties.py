"""Properties of parse, render and merge over generated documents and save sequences."""

from __future__ import annotations

from datetime import datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keeper.markdown import Document, bare
from keeper.memory import document, items

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
line_text = st.text(
    st.characters(blacklist_categories=("Cs", "Nd"), blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
    max_size=40,
)
newline = st.sampled_from(["\n", "\r\n"])
word = st.text("abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=8)
item = st.lists(word, min_size=2, max_size=5).map(" ".join)
# Resolutions are digits only: a resolution may rightly remove a hand-written issue, so the
# generated ones must never resemble the (digit-free) hand-written lines.
resolution = st.lists(st.text("0123456789", min_size=3, max_size=5), min_size=2, max_size=3).map(" ".join)


@SETTINGS
@given(st.text(max_size=400))
def test_any_text_renders_back_exactly(text: str) -> None:
    assert Document.parse(text).render() == text


@st.composite
def hand_edited_memory(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A memory.md with hand-written lines in known and unknown sections, in any order."""
    nl = draw(newline)
    titles = draw(
        st.permutations(["Core Decisions", "Current State", "Recent Context", "Known Issues", "Team Notes", "Links"])
    )
    keep = draw(st.lists(st.sampled_from(titles), min_size=0, max_size=6, unique=True))
    lines = ["# Project Memory: api", ""]
    hand: list[str] = []
    for title in keep:
        lines += [f"## {title}", ""]
        for text in draw(st.lists(line_text, max_size=3)):
            written = f"- HAND {text}".rstrip() if draw(st.booleans()) else f"HAND {text}".rstrip()
            lines.append(written)
            hand.append(written)
        lines.append("")
    return nl.join(lines) + (nl if draw(st.booleans()) else ""), hand


saves = st.lists(
    st.fixed_dictionaries(
        {
            "summary": st.one_of(st.just(""), item),
            "decisions": st.lists(item, max_size=3),
            "state": st.lists(item, max_size=3),
            "issues": st.lists(item, max_size=2),
            "resolved": st.lists(resolution, max_size=2),
        }
    ),
    min_size=1,
    max_size=6,
)


def run_saves(
    text: str | None, batch: list[dict], cap: int
) -> tuple[str, document.OwnedLines, list[document.MergeReport]]:
    prov = document.OwnedLines()
    reports = []
    for number, data in enumerate(batch):
        text, prov, report = document.merge(
            text,
            prov,
            document.SaveInput(**data),
            project_name="api",
            session_id=f"s{number % 4}",
            now=datetime(2026, 1, 1) + timedelta(days=number),
            recent_sessions=cap,
        )
        reports.append(report)
    assert text is not None
    return text, prov, reports


@SETTINGS
@given(hand_edited_memory(), saves, st.integers(1, 4))
def test_hand_written_lines_survive_every_save_in_order(
    doc: tuple[str, list[str]], batch: list[dict], cap: int
) -> None:
    text, hand = doc
    after, _, _ = run_saves(text, batch, cap)
    remaining = [bare(line) for line in after.splitlines(keepends=True)]
    position = 0
    for line in hand:  # each hand line is still there, in the same relative order
        position = remaining.index(line, position) + 1
    assert Document.parse(after).render() == after


@SETTINGS
@given(saves, st.integers(1, 4))
def test_recent_context_respects_the_cap_and_decisions_are_kept(batch: list[dict], cap: int) -> None:
    text, prov, reports = run_saves(None, batch, cap)
    assert len(prov.recent) <= cap
    recent = Document.parse(text).find(("recent context",))
    assert recent is not None and len(recent.bullets()) <= cap
    decisions = Document.parse(text).find(("core decisions",))
    kept = [items.key(t) for _, t in decisions.bullets()] if decisions else []
    for report in reports:
        for added in report.added_decisions:
            assert items.key(added) in kept
    assert len(set(kept)) == len(kept)


def _reference_heading(line: str) -> tuple[int, str] | None:
    import re

    match = re.match(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*\r?\n?$", line)
    if not match:
        return None
    title = (match.group(2) or "").strip()
    return len(match.group(1)), title


@SETTINGS
@given(st.text(alphabet=" #\tab#c`~-*+", max_size=16).map(lambda s: s + "\n"))
def test_heading_recognition_matches_the_commonmark_style_rule(line: str) -> None:
    from keeper.markdown import heading

    found, expected = heading(line), _reference_heading(line)
    assert (found is None) == (expected is None), line
    if found and expected:
        assert found[0] == expected[0]
        assert found[1].rstrip("# \t") == expected[1].rstrip("# \t")


def _sections_line_by_line(text: str, level: int) -> list[tuple[str | None, list[str]]]:
    """Each line read as a fence, a heading or body text, one by one: what ``Document.parse`` must find."""
    from keeper.markdown import fence, heading, split_lines

    found: list[tuple[str | None, list[str]]] = [(None, [])]
    open_fence: str | None = None
    for line in split_lines(text[1:] if text.startswith("\ufeff") else text):
        marker = fence(line)
        if marker:
            open_fence = (
                marker[0] * 3 if open_fence is None else (None if marker.startswith(open_fence) else open_fence)
            )
        elif open_fence is None and (seen := heading(line)) and seen[0] <= level:
            found.append((line, []))
            continue
        found[-1][1].append(line)
    return found


@SETTINGS
@given(
    st.lists(
        st.sampled_from(["#", "## ", "### ", " ", "    ", "\t", "`", "```", "~~~", "a", "x y", "\n", "\r\n"]),
        max_size=30,
    )
)
def test_sections_start_exactly_at_the_headings_outside_fences(pieces: list[str]) -> None:
    """The lines no heading or fence can start with (anything but a space, ``#``, a backtick or a
    tilde first) skip the line's reading: the sections are the same as when every line is read."""
    text = "".join(pieces)
    for level in (2, 3):
        parsed = [(s.heading, s.lines) for s in Document.parse(text, split_level=level).sections]
        assert parsed == _sections_line_by_line(text, level)
