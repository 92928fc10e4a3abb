"""The Memory Hub: one offline page, checked as a file and in a real browser (Debian's headless Chromium).

The browser tests open the page the way a person does, from ``file://``, and read the DOM the
page's own script built (``--dump-dom``); URL fragments choose the view. They fail, rather than
skip, where Chromium is missing: the page's JavaScript is tested nowhere else.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import struct
import subprocess
import sys
import time
import webbrowser
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from keeper.cli import main
from keeper.hub import build
from tests import hubstore
from tests.conftest import REPO, TEST_CACHE

ARTIFACTS = TEST_CACHE / "hub-screenshots"  # outside the clone, as every test artefact
VOID = {"meta", "br", "input", "img", "link", "hr", "col", "area", "base", "embed", "source", "track", "wbr"}
SAVE_LABELS = {"Decision": "decided", "Issue": "opened", "Resolved": "resolved", "Retired": "retired"}


@dataclass
class Built:
    page: Path
    store: Path
    made: dict[str, Any]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    """The lived-in store and its hub page, made once for the module."""
    base = tmp_path_factory.mktemp("hub")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KEEPER_HOME", str(base / "store"))
        made = hubstore.build(base)
        page = build.write(str(base / "hub.html"), now=hubstore.TODAY)
    yield Built(Path(page), base / "store", made)


def session_files(store: Path, project_id: str | None = None) -> list[Path]:
    return sorted(store.glob(f"projects/{project_id or '*'}/sessions/*.md"))


def saved_events(store: Path) -> dict[str, int]:
    """What the timeline must hold, counted straight from the session files' ``## Saves``."""
    counts = dict.fromkeys(SAVE_LABELS.values(), 0)
    for path in session_files(store):
        saves = path.read_text(encoding="utf-8").split("## Saves", 1)[1].split("## Activity", 1)[0]
        for line in saves.splitlines():
            label = line[2:].split(": ", 1)[0] if line.startswith("- ") else ""
            if label in SAVE_LABELS:
                counts[SAVE_LABELS[label]] += 1
    return counts


# -- the file ----------------------------------------------------------------------------------


def test_keeper_hub_writes_one_private_file_and_prints_its_path(
    project_dir: Path, store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["save", "--summary", "first session", "--decision", "Keep money in cents"]) == 0
    capsys.readouterr()
    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", opened.append)  # a test never opens a browser
    assert main(["hub"]) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path == store / "hub.html" and path.read_text(encoding="utf-8").startswith("<!doctype html>")
    if sys.platform != "win32":
        assert path.stat().st_mode & 0o777 == 0o600  # it holds memory: private like the rest of the store
    assert opened == []
    assert main(["hub", "--out", "elsewhere/page.html", "--open"]) == 0
    out = Path(capsys.readouterr().out.strip())
    assert out == project_dir / "elsewhere" / "page.html" and out.exists()
    assert opened == [out.as_uri()]


def test_the_page_makes_no_network_request(built: Built) -> None:
    page = built.page.read_text(encoding="utf-8")
    assert not re.search(r"https?:|//|@import|url\(", page, re.I)
    markup = re.sub(r'<script type="application/json".*?</script>', "", page, flags=re.S)  # data is no markup
    assert not re.search(r"\s(src|href|action|srcset|poster|data)\s*=", markup, re.I)  # the script links only to #…
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
    assert policy and "default-src 'none'" in policy.group(1)
    script = page.split("<script>", 1)[1].split("</script>", 1)[0]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy.group(1)  # no other script may run, even injected
    assert script == (REPO / "keeper" / "hub" / "page.js").read_text(encoding="utf-8")


def test_the_data_is_escaped_json_that_no_memory_can_break_out_of(built: Built) -> None:
    page = built.page.read_text(encoding="utf-8")
    assert hubstore.PLANTED_SCRIPT not in page and "<img" not in page
    parts = dict(re.findall(r'<script type="application/json" id="(\w+)">(.*?)</script>', page, re.S))
    assert set(parts) == {"data", "sessions", "records"}
    for text in parts.values():
        assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
    assert "\\u003cscript\\u003edocument.title=" in parts["data"]
    data = json.loads(parts["data"])
    shop = next(p for p in data["projects"] if p["name"] == "shop-api")
    assert hubstore.PLANTED_SCRIPT in shop["memory"] and hubstore.PLANTED_IMG in shop["memory"]
    assert len(json.loads(parts["sessions"])) == sum(p["sessions"] for p in built.made.values())


def test_session_files_become_rows_and_dated_moments(tmp_path: Path) -> None:
    text = (
        "# Session 2026-03-04 23:10 · shop\n\n- Session id: s1\n- Started: 2026-03-04 23:10\n- Tool uses: 12 (2 saves)\n"
        "\n## Saves\n\n### 23:40 save\n\nFixed the cart\n\\## not a heading\n\n- Decision: Cents, not floats\n"
        "  across every service\n- Issue: Refunds round badly\n\n### 00:20 save\n\n"
        "- Resolved: Refunds round badly (2026-03-04)\n- Retired: Floats for money (2026-01-02)\n"
        "- Resolved (no matching issue): something else\n"
        "\n## Activity\n\n- Prompts (2):\n  1. Fix the cart totals\n  2. and the refunds\n"
        "- Files changed (2):\n  - src/cart.py (edited)\n  - src/cart.py (written)\n"
    )
    session = build.Session(0, str(tmp_path / "2026-03-04_2310.md"), text)
    assert session.start == "2026-03-04 23:10" and session.tool_uses == 12
    assert session.summaries == ["Fixed the cart ## not a heading"]  # one summary on two lines
    assert session.prompt == "Fix the cart totals" and session.files == ["cart.py"]
    assert session.events == [
        ("2026-03-04 23:40", "decided", "Cents, not floats\nacross every service"),
        ("2026-03-04 23:40", "opened", "Refunds round badly"),
        ("2026-03-05 00:20", "resolved", "Refunds round badly"),  # after midnight: the next day
        ("2026-03-05 00:20", "retired", "Floats for money"),
    ]
    row = session.summary(-1)
    assert row[:3] == [0, "2026-03-04_2310.md", "2026-03-04 23:10"] and row[-1] == -1
    odd = tmp_path / "2026-1x-notes.md"  # named by hand: its day is when it was written
    odd.write_text("- just a note\n", encoding="utf-8")
    assert build.Session(0, str(odd), odd.read_text()).day == time.strftime("%Y-%m-%d")


def test_a_summary_on_several_lines_reads_as_written_and_two_saves_stay_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    for text in ("summary: The export now streams rows\n    instead of loading them all\n", "summary: Added a test\n"):
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8"))
        assert main(["save"]) == 0
    capsys.readouterr()
    data = build.collect()
    (row,) = data["sessions"]
    assert row[3] == "The export now streams rows instead of loading them all · Added a test"


def test_what_does_not_fit_is_counted(built: Built, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEEPER_HOME", str(built.store))
    monkeypatch.setattr(build, "SUMMARY_BUDGET", 2000)
    monkeypatch.setattr(build, "RECORD_BUDGET", 3000)
    monkeypatch.setattr(build, "EVENT_LIMIT", 5)
    data = build.collect(hubstore.TODAY)
    total = sum(p["sessions"] for p in built.made.values())
    assert data["left_out"]["total_sessions"] == total
    assert 0 < len(data["sessions"]) < total and data["left_out"]["sessions"] == total - len(data["sessions"])
    assert (
        len(data["records"]) < len(data["sessions"])
        and data["left_out"]["events"] == sum(saved_events(built.store).values()) - 5
    )
    assert sum(n for p in data["projects"] for n in p["days"].values()) == total  # the calendar still counts all


# -- in a real browser -------------------------------------------------------------------------


def chromium() -> str:
    found = shutil.which("chromium")
    if not found:
        pytest.fail(
            "chromium is not on PATH, so the Memory Hub cannot be tested in a browser. "
            "Install Debian's package: apt-get update && apt-get install -y chromium (.ci/run does this)."
        )
    return found


class Dom(HTMLParser):
    """A dumped page as the tests read it: every element with its attributes and its text content."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None], list[str]]] = []
        self._open: list[tuple[str, dict[str, str | None], list[str]]] = []
        self.feed(markup)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = (tag, dict(attrs), [])
        self.elements.append(element)
        if tag not in VOID:
            self._open.append(element)

    def handle_endtag(self, tag: str) -> None:
        for index in range(len(self._open) - 1, -1, -1):
            if self._open[index][0] == tag:
                del self._open[index:]
                break

    def handle_data(self, data: str) -> None:
        for element in self._open:
            element[2].append(data)

    def all(self, tag: str, **attrs: str) -> list[tuple[str, dict[str, str | None], list[str]]]:
        return [e for e in self.elements if e[0] == tag and all(e[1].get(k) == v for k, v in attrs.items())]

    def text(self, tag: str, **attrs: str) -> str:
        return "".join(self.all(tag, **attrs)[0][2])

    def texts(self, tag: str, **attrs: str) -> list[str]:
        return ["".join(e[2]) for e in self.all(tag, **attrs)]


def run_chromium(page: Path, fragment: str, *flags: str) -> str:
    done = subprocess.run(
        [
            chromium(),
            "--headless=new",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            *flags,
            f"{page.as_uri()}#{fragment}",
        ],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def view(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """``view(fragment)``: the page opened at ``#fragment``, as a ``Dom`` (each fragment opened once)."""
    profile = tmp_path_factory.mktemp("chromium-profile")
    seen: dict[str, Dom] = {}

    def open_at(fragment: str) -> Dom:
        if fragment not in seen:
            seen[fragment] = Dom(run_chromium(built.page, fragment, f"--user-data-dir={profile}", "--dump-dom"))
        return seen[fragment]

    yield open_at


def ids(built: Built) -> dict[str, str]:
    return {name: made["id"] for name, made in built.made.items()}


@pytest.mark.needs("chromium")
def test_the_overview_shows_projects_calendar_and_timeline(built: Built, view: Any) -> None:
    dom = view("")
    assert dom.text("title") == "Keeper · Memory Hub"
    cards = {e[1]["data-project"]: "".join(e[2]) for e in dom.all("a") if "project" in (e[1].get("class") or "")}
    assert set(cards) == set(ids(built).values())
    gone = cards[ids(built)["old-proto"]]
    assert "folder gone" in gone and built.made["old-proto"]["root"] in gone
    assert "26 sessions" in cards[ids(built)["shop-api"]]
    days = {f.name[:10] for f in session_files(built.store)}
    cells = [e[1] for e in dom.elements if "hm-cell" in (e[1].get("class") or "") and e[1].get("data-n")]
    assert {c["data-date"] for c in cells} == days  # one lit cell per day with a session, in the last year
    assert sum(int(c["data-n"] or 0) for c in cells) == len(session_files(built.store))
    expected = saved_events(built.store)
    shown = [e[1]["data-kind"] for e in dom.all("div") if e[1].get("data-kind")]
    assert f"{sum(expected.values())} entries" in dom.texts("span", **{"class": "note"})
    assert {k: shown.count(k) for k in expected} == expected  # all of them fit the first page of 40
    assert "Show markup as text: " + hubstore.PLANTED_SCRIPT in dom.texts("a", **{"class": "ev-text"})


@pytest.mark.needs("chromium")
def test_markup_in_memory_shows_as_text_and_never_runs(built: Built, view: Any) -> None:
    for fragment, title in (
        ("", "Keeper · Memory Hub"),
        (f"project={ids(built)['shop-api']}", "shop-api · Keeper Memory Hub"),
    ):
        dom = view(fragment)
        assert dom.text("title") == title  # the planted document.title='PWNED' never ran
        assert len(dom.all("script")) == 4 and not dom.all("img")  # the page's own scripts, no planted element
        text = dom.text("main")
        assert hubstore.PLANTED_SCRIPT in text and hubstore.PLANTED_IMG in text
        assert "PWNED" not in dom.text("title") and not any("onerror" in e[1] for e in dom.elements)


@pytest.mark.needs("chromium")
def test_a_project_view_renders_memory_md_sessions_and_what_was_injected(built: Built, view: Any) -> None:
    shop = ids(built)["shop-api"]
    dom = view(f"project={shop}")
    items = dom.texts("li")
    assert any(t.startswith("Decision 24 for refund flow: keep refund_flow in one module") for t in items)
    assert "refund_flow" in dom.texts("code") and "2026-10-15" in dom.texts("span", **{"class": "date"})
    assert any(t.startswith("Show markup as text: " + hubstore.PLANTED_SCRIPT) for t in items)
    assert dom.text("h2", **{"class": "md-h1"}) == "Project Memory: shop-api"
    assert len(dom.all("details", **{"class": "session"})) == 26
    cells = [e for e in dom.elements if "hm-cell" in (e[1].get("class") or "") and e[1].get("data-n")]
    assert len(cells) == len({f.name[:10] for f in session_files(built.store, shop)})
    assert any(row.startswith("session-start26") for row in dom.texts("tr"))  # 26 calls, as the hook log holds
    assert "of memory into Claude’s context" in dom.text("main")


@pytest.mark.needs("chromium")
def test_a_gone_project_says_how_to_clear_it(built: Built, view: Any) -> None:
    gone = ids(built)["old-proto"]
    dom = view(f"project={gone}")
    assert f"keeper clear all --project {gone} --yes" in dom.texts("code")
    assert "(this folder no longer exists)" in dom.text("main")


@pytest.mark.needs("chromium")
def test_a_search_with_a_typo_finds_the_session(built: Built, view: Any) -> None:
    dom = view("q=refnd%20rounding")
    results = [e for e in dom.all("a") if (e[1].get("class") or "").startswith("r r-")]
    assert results, dom.text("main")
    first = "".join(results[0][2])
    assert "Session" in first and "refunds still use the old rounding" in first.lower()
    assert "read as: refnd → refund" in dom.text("p", **{"class": "sub search-note"})
    assert hubstore.TYPO_TARGET in dom.texts("div", **{"class": "r-title"})  # the open issue in memory.md too
    assert dom.all("mark")


@pytest.mark.needs("chromium")
def test_a_session_view_shows_its_whole_record(built: Built, view: Any) -> None:
    shop = ids(built)["shop-api"]
    planted = next(f for f in session_files(built.store, shop) if hubstore.TYPO_TARGET in f.read_text(encoding="utf-8"))
    dom = view(f"project={shop}&session={planted.name}")
    assert "Issue: " + hubstore.TYPO_TARGET in dom.texts("li")
    assert str(planted) in dom.text("main")  # where the file is, to open it in an editor


@pytest.mark.needs("chromium")
def test_a_page_that_left_things_out_says_so(built: Built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEEPER_HOME", str(built.store))
    monkeypatch.setattr(build, "SUMMARY_BUDGET", 4000)
    page = Path(build.write(str(tmp_path / "small.html"), now=hubstore.TODAY))
    dom = Dom(run_chromium(page, "", f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom"))
    notes = dom.texts("p", **{"class": "left-out"})
    assert any("oldest sessions of 46 are left out" in n for n in notes), notes


def first_pixel(png: Path) -> tuple[int, ...]:
    """The top left pixel of a PNG: every PNG filter leaves a row's first pixel as stored."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat, channels = 8, b"", 0
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at : at + 8])
        chunk = data[at + 8 : at + 8 + length]
        if kind == b"IHDR":
            channels = {2: 3, 6: 4}[chunk[9]]
        elif kind == b"IDAT":
            idat += chunk
        at += 12 + length
    row = zlib.decompressobj().decompress(idat, 1 + channels)
    return tuple(row[1 : 1 + channels])


@pytest.mark.needs("chromium")
@pytest.mark.parametrize(
    ("name", "fragment", "flags", "dark"),
    [
        ("hub-light", "", (), False),
        ("hub-dark", "", ("--force-dark-mode",), True),  # the system's colour scheme
        ("hub-project-dark", "theme=dark&project=shop-api", (), True),  # the page's own switch
    ],
)
def test_screenshots_in_light_and_dark(
    built: Built, tmp_path: Path, name: str, fragment: str, flags: tuple[str, ...], dark: bool
) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / f"{name}.png"
    shot.unlink(missing_ok=True)
    fragment = fragment.replace("project=shop-api", f"project={ids(built)['shop-api']}")
    flags = (*flags, f"--user-data-dir={tmp_path / 'profile'}", "--hide-scrollbars", "--window-size=1280,1600")
    run_chromium(built.page, fragment, *flags, f"--screenshot={shot}")
    assert shot.stat().st_size > 20_000, "an empty page"
    brightness = sum(first_pixel(shot)[:3]) / 3
    assert (brightness < 60) if dark else (brightness > 200), (name, brightness)


MEASURE = (
    "window.addEventListener('load', function () {"
    " var wrapped = [];"
    " document.querySelectorAll('.sec-head h2').forEach(function (h) {"
    "  if (h.getBoundingClientRect().height > 1.5 * parseFloat(getComputedStyle(h).lineHeight))"
    "   wrapped.push(h.textContent); });"
    " document.body.setAttribute('data-wrapped', JSON.stringify(wrapped)); });"
)


def measured(page: Path, tmp_path: Path) -> Path:
    """A copy of the page that records which section labels wrap onto a second line (its CSP allows the
    measuring script by its hash, as it allows the page's own)."""
    digest = base64.b64encode(hashlib.sha256(MEASURE.encode("utf-8")).digest()).decode("ascii")
    text = page.read_text(encoding="utf-8").replace("script-src ", f"script-src 'sha256-{digest}' ", 1)
    copy = tmp_path / "measured.html"
    copy.write_text(text.replace("</body>", f"<script>{MEASURE}</script>\n</body>", 1), encoding="utf-8")
    return copy


@pytest.mark.needs("chromium")
@pytest.mark.parametrize("width", [1000, 1280])
def test_the_team_notes_label_stays_on_one_line_beside_a_long_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], width: int
) -> None:
    repo = Path.cwd()  # a git work tree (the test's own project folder)
    assert main(["save", "--team", "--decision", "Releases need two approvals"]) == 0
    assert main(["save", "--decision", "Use Redis for the job queue"]) == 0
    assert main(["hub", "--out", str(tmp_path / "hub.html")]) == 0
    capsys.readouterr()
    page = measured(tmp_path / "hub.html", tmp_path)
    ident = json.loads(_projects_json(capsys))[0]["id"]
    flags = (f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={width},1400", "--dump-dom")
    dom = Dom(run_chromium(page, f"project={ident}", *flags))
    assert "Team notes" in dom.texts("h2") and str(repo / ".claude" / "keeper" / "team.md") in dom.text("main")
    body = dom.all("body")[0][1]
    assert json.loads(body["data-wrapped"] or "null") == []


def _projects_json(capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["projects", "--json"]) == 0
    return capsys.readouterr().out
