"""``keeper export`` / ``keeper import``: a round trip loses nothing, a merge adds without loss, and
hostile archives write nothing outside Keeper's layout (or nothing at all)."""

from __future__ import annotations

import json
import os
import stat
import sys
import warnings
import zipfile
from datetime import datetime
from pathlib import Path

import pytest

from keeper.capture import saving
from keeper.cli import main
from keeper.commands import archive
from keeper.memory import document, merge
from keeper.memory.document import OwnedLines, RecentLine
from keeper.store import paths
from keeper.store.resolve import resolve

T0 = datetime(2026, 3, 1, 9, 30)
T1 = datetime(2026, 3, 2, 10, 0)
T2 = datetime(2026, 3, 3, 11, 15)


def save(folder: Path, session: str, now: datetime, **fields: object) -> paths.Project:
    """One save through Keeper's own code, as `keeper save` makes it."""
    at = resolve(str(folder), session, strict=True)
    saving.save(at.project, at.cfg, document.SaveInput(**fields), at.session, now=now)  # type: ignore[arg-type]
    return at.project


def use_store(monkeypatch: pytest.MonkeyPatch, root: Path) -> Path:
    monkeypatch.setenv("KEEPER_HOME", str(root))
    return root


def files(root: Path) -> dict[str, bytes]:
    """Every file of a store but its lock files and its format record (format.json), by relative path."""
    if not root.exists():
        return {}
    found = {p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file() and p.name != ".lock"}
    return {name: path.read_bytes() for name, path in found.items() if name != "format.json"}


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def export(capsys: pytest.CaptureFixture[str], out: Path, *extra: str) -> dict:
    code, text, _ = run(["export", "--out", str(out), "--json", *extra], capsys)
    assert code == 0
    return json.loads(text)


def import_(capsys: pytest.CaptureFixture[str], zip_path: Path, *extra: str) -> tuple[int, dict]:
    code, text, err = run(["import", str(zip_path), "--json", *extra], capsys)
    assert not err
    return code, json.loads(text)


def markdown(root: Path) -> dict[str, bytes]:
    return {k: v for k, v in files(root).items() if k.endswith((".md", "/memory.json"))}


@pytest.fixture
def two_projects(tmp_path: Path) -> tuple[Path, Path]:
    """A store with two projects saved through Keeper, a hand edit and a global memory."""
    api, web = tmp_path / "work" / "api", tmp_path / "work" / "web"
    (web / ".git").mkdir(parents=True)
    project = save(api, "s1", T0, summary="Set up the API", decisions=["Use Postgres 16"], state=["tests green"])
    save(api, "s2", T1, decisions=["Retry HTTP calls 3 times"], issues=["Timeouts on /export"])
    save(web, "w1", T1, summary="Started the web app", decisions=["Use htmx, no SPA"])
    with open(project.memory, "a", encoding="utf-8", newline="") as fh:
        fh.write("\n## My notes\n\n- ask Dana about the VPN\r\n")
    global_dir = Path(paths.data_root()) / "global"
    global_dir.mkdir()
    (global_dir / "memory.md").write_text("# Global Memory\n\n## User\n\n- prefers short answers\n", encoding="utf-8")
    return api, web


# -- export ------------------------------------------------------------------------------------


def test_round_trip_into_an_empty_store_is_byte_identical(
    two_projects: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    original = markdown(Path(paths.data_root()))
    result = export(capsys, tmp_path / "all.zip")
    assert (result["projects"], result["sessions"], result["global"]) == (2, 3, True)
    new = use_store(monkeypatch, tmp_path / "new-machine")
    code, report = import_(capsys, tmp_path / "all.zip")
    assert code == 0 and not report["refused"]
    assert markdown(new) == original
    assert {p["memory"] for p in report["projects"]} == {"created"}


def test_export_carries_only_what_cannot_be_rebuilt(
    two_projects: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = Path(paths.data_root())
    for derived in ("cache/config-x.json", "logs/keeper.log", "trash/api-1/20260101-000000/memory.md"):
        (root / derived).parent.mkdir(parents=True, exist_ok=True)
        (root / derived).write_text("derived")
    state = Path(resolve(str(two_projects[0]), strict=True).project.state)
    (state / "index.sqlite3").write_bytes(b"SQLite")
    (state / "hooks.stats").write_text("1")
    result = export(capsys, tmp_path / "all.zip")
    with zipfile.ZipFile(result["archive"]) as zf:
        names = zf.namelist()
        manifest = json.loads(zf.read("keeper-export.json"))
    assert names[0] == "keeper-export.json"
    assert all(
        archive.place(n)[0] in ("manifest", "global", "memory", "provenance", "origins", "session") for n in names
    )
    assert not [n for n in names if n.endswith((".sqlite3", ".tally", ".stats", ".log")) or "/state/s" in n]
    assert manifest["format"] == 1 and manifest["scope"] == "store" and manifest["global"] is True
    assert sorted(p["name"] for p in manifest["projects"]) == ["api", "web"]
    if sys.platform != "win32":
        assert stat.S_IMODE(os.stat(result["archive"]).st_mode) == 0o600
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp file left behind


def test_project_dir_exports_that_project_only(
    two_projects: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    api, _ = two_projects
    result = export(capsys, tmp_path, "--project-dir", str(api))  # a folder: the default name inside it
    assert Path(result["archive"]).parent == tmp_path and Path(result["archive"]).name.startswith("keeper-export-")
    with zipfile.ZipFile(result["archive"]) as zf:
        names = zf.namelist()
        manifest = json.loads(zf.read("keeper-export.json"))
    pid = resolve(str(api), strict=True).project.id
    assert {n.split("/")[1] for n in names if n.startswith("projects/")} == {pid}
    assert not [n for n in names if n.startswith("global/")]
    assert manifest["scope"] == "project" and manifest["projects"][0]["root"] == str(api.resolve())


def test_export_text_output_and_default_name(
    two_projects: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = Path.home().parent / "outside-any-repository"
    outside.mkdir()
    monkeypatch.chdir(outside)
    code, out, _ = run(["export"], capsys)
    made = list(Path.cwd().glob("keeper-export-*.zip"))
    assert code == 0 and len(made) == 1
    assert out.startswith(f"Exported 2 projects with 3 session files and the global memory to {made[0]}")


@pytest.mark.parametrize("downloads", [True, False])
def test_export_run_inside_a_repository_writes_to_downloads_or_home_and_says_so(
    two_projects: tuple[Path, Path], capsys: pytest.CaptureFixture[str], downloads: bool
) -> None:
    """An archive of one's memory written into the work tree would be committed and pushed with the code."""
    if downloads:
        (Path.home() / "Downloads").mkdir()
    code, out, _ = run(["export"], capsys)
    assert code == 0 and not list(Path.cwd().rglob("keeper-export-*.zip"))
    where = Path.home() / "Downloads" if downloads else Path.home()
    made = list(where.glob("keeper-export-*.zip"))
    assert len(made) == 1 and f"to {made[0]} (" in out
    assert f"not into the repository at {Path.cwd()}" in out


def test_an_empty_store_has_nothing_to_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["export", "--out", str(tmp_path / "x.zip")], capsys)
    assert code == 1 and not out and err.startswith("keeper: error: nothing to export") and err.count("\n") == 1
    assert not (tmp_path / "x.zip").exists()


# -- import: merging ---------------------------------------------------------------------------


def test_merge_into_a_diverged_store_loses_nothing(
    project_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    use_store(monkeypatch, a)
    save(project_dir, "base", T0, summary="Base work", decisions=["Use Postgres 16"], state=["base state"])
    export(capsys, tmp_path / "base.zip")
    use_store(monkeypatch, b)
    import_(capsys, tmp_path / "base.zip")
    # Both machines go on working: B writes by hand and saves; A saves later, with one session name in common.
    project = save(project_dir, "b1", T2, decisions=["Cache for 5 minutes"], issues=["Flaky login test"])
    with open(project.memory, "a", encoding="utf-8") as fh:
        fh.write("\n## Contacts\n\n- Dana runs the VPN\n")
    use_store(monkeypatch, a)
    save(project_dir, "a1", T1, decisions=["use postgres 16."], summary="A's first")  # a duplicate, spelled differently
    save(project_dir, "a2", T2, decisions=["Deploy with Helm"], state=["A is newest"], issues=["Flaky login test"])
    memory_a = a / "projects" / project.id / "memory.md"
    memory_a.write_text(memory_a.read_text() + "\n## Runbook\n\n1. restart the worker\n")
    export(capsys, tmp_path / "a.zip")

    use_store(monkeypatch, b)
    code, report = import_(capsys, tmp_path / "a.zip")
    assert code == 0
    text = Path(project.memory).read_text()
    decisions = [item for item, _ in document.items(text, "decisions")]
    assert decisions == ["Use Postgres 16", "Cache for 5 minutes", "Deploy with Helm"]
    assert [item for item, _ in document.items(text, "issues")] == ["Flaky login test"]
    assert "- Deploy with Helm (2026-03-03)" in text  # the date it was decided, not today's
    assert [item for item, _ in document.items(text, "state")] == ["Last updated: 2026-03-03 11:15", "A is newest"]
    assert [item for item, _ in document.items(text, "recent")] == ["2026-03-02: A's first", "2026-03-01: Base work"]
    assert "## Contacts\n\n- Dana runs the VPN\n" in text and "## Runbook\n\n1. restart the worker\n" in text
    sessions = sorted(os.listdir(project.sessions))
    assert sessions == ["2026-03-01_0930.md", "2026-03-02_1000.md", "2026-03-03_1115-imported.md", "2026-03-03_1115.md"]
    (item,) = report["projects"]
    assert item["memory"] == "merged" and item["memory_state_replaced"] is True
    assert item["sessions_renamed"] == [{"from": "2026-03-03_1115.md", "to": "2026-03-03_1115-imported.md"}]
    assert item["sessions_identical"] == ["2026-03-01_0930.md"] and item["sessions_added"] == ["2026-03-02_1000.md"]
    assert item["memory_new_sections"] == ["Runbook"]

    # Keeper still knows its own lines: the next save replaces the imported state and rolls recent context.
    monkeypatch.setenv("KEEPER_RECENT_SESSIONS", "2")
    save(project_dir, "b2", datetime(2026, 3, 4, 8, 0), summary="Later", state=["B again"])
    text = Path(project.memory).read_text()
    assert "A is newest" not in text and "B again" in text
    assert [item for item, _ in document.items(text, "recent")] == ["2026-03-04: Later", "2026-03-02: A's first"]


def test_importing_the_same_archive_twice_changes_nothing_the_second_time(
    two_projects: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    export(capsys, tmp_path / "all.zip")
    api, _ = two_projects
    use_store(monkeypatch, tmp_path / "b")
    save(api, "other", T2, summary="B's own work", decisions=["Use Postgres 16", "Ship on Fridays"], state=["B"])
    import_(capsys, tmp_path / "all.zip")
    after_first = files(tmp_path / "b")
    code, report = import_(capsys, tmp_path / "all.zip")
    assert code == 0 and files(tmp_path / "b") == after_first
    for item in report["projects"]:
        assert item["memory"] in ("unchanged", None) and not item["sessions_added"] and not item["sessions_renamed"]


def test_global_memory_is_merged_too(
    two_projects: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    export(capsys, tmp_path / "all.zip")
    mine = use_store(monkeypatch, tmp_path / "b") / "global"
    mine.mkdir(parents=True)
    (mine / "memory.md").write_text("# Global Memory\n\n## User\n\n- works in Berlin\n", encoding="utf-8")
    code, report = import_(capsys, tmp_path / "all.zip")
    assert code == 0 and report["projects"][-1]["id"] == "global"
    assert (
        mine / "memory.md"
    ).read_text() == "# Global Memory\n\n## User\n\n- works in Berlin\n- prefers short answers\n"
    # no provenance invented for it (filelock leaves its .lock on POSIX and deletes it on Windows)
    assert sorted(set(os.listdir(mine)) - {".lock"}) == ["memory.md"]


def test_dry_run_says_what_would_happen_and_writes_nothing(
    two_projects: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    export(capsys, tmp_path / "all.zip")
    new = use_store(monkeypatch, tmp_path / "b")
    code, out, _ = run(["import", str(tmp_path / "all.zip"), "--dry-run"], capsys)
    assert code == 0 and not new.exists()
    assert out.startswith("Would import") and "dry run: nothing was written" in out
    assert "memory.md created; 2 session files added" in out


def test_one_project_into_the_project_of_another_folder(
    two_projects: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    api, _web = two_projects
    api_id = resolve(str(api), strict=True).project.id
    export(capsys, tmp_path / "all.zip")
    use_store(monkeypatch, tmp_path / "b")
    clone = tmp_path / "elsewhere" / "api"
    (clone / ".git").mkdir(parents=True)
    code, _out, err = run(["import", str(tmp_path / "all.zip"), "--project-dir", str(clone)], capsys)
    assert code == 1 and err.startswith("keeper: error: the archive holds 2 projects") and "--project ID" in err
    code, report = import_(capsys, tmp_path / "all.zip", "--project-dir", str(clone), "--project", api_id)
    target = resolve(str(clone), strict=True).project
    assert code == 0 and [p["id"] for p in report["projects"]] == [target.id] and target.id != api_id
    assert "Use Postgres 16" in Path(target.memory).read_text()
    assert sorted(os.listdir(tmp_path / "b" / "projects")) == [target.id]  # no global memory, no other project
    code, _, err = run(["import", str(tmp_path / "all.zip"), "--project", "nope"], capsys)
    assert code == 1 and "holds no project 'nope'" in err


def test_merge_file_keeps_a_persons_lines_and_is_idempotent() -> None:
    mine = (
        "# Project Memory: api\n\nIntro by hand.\n\n## Core Decisions\n- Use Postgres (2026-01-01)\n- hand decision\n\n"
        "## Current State\n- Last updated: 2026-03-05 10:00\n- mine is newer\n- a hand note\n"
    )
    theirs = (
        "# Project Memory: api\n\nIntro by hand.\nTheir intro.\n\n## Core Decisions\n- use postgres! (2026-02-01)\n"
        "- Two lines\n  of decision (2026-02-02)\n\n## Current State\n- Last updated: 2026-03-01 10:00\n- older\n\n"
        "## Recent Context\n- 2026-03-01: theirs\n"
    )
    owned = OwnedLines(["- Last updated: 2026-03-05 10:00", "- mine is newer"])
    their_owned = OwnedLines(["- Last updated: 2026-03-01 10:00", "- older"], [RecentLine("x", "- 2026-03-01: theirs")])
    merged, provenance, report = merge.merge_file(mine, owned, theirs, their_owned)
    assert merged == (
        "# Project Memory: api\n\nIntro by hand.\nTheir intro.\n\n## Core Decisions\n- Use Postgres (2026-01-01)\n"
        "- hand decision\n- Two lines\n  of decision (2026-02-02)\n\n"
        "## Current State\n- Last updated: 2026-03-05 10:00\n- mine is newer\n- a hand note\n\n"
        "## Recent Context\n\n- 2026-03-01: theirs\n"
    )
    assert provenance == OwnedLines(owned.state, their_owned.recent)
    assert (
        report.added == {"Project Memory: api": 1, "Core Decisions": 1, "Recent Context": 1}
        and not report.state_replaced
    )
    assert merge.merge_file(merged, provenance, theirs, their_owned)[0] == merged


def test_merge_file_keeps_crlf_files_crlf() -> None:
    mine = "# Project Memory: api\r\n\r\n## Known Issues\r\n- one\r\n"
    merged, _, _ = merge.merge_file(mine, OwnedLines(), "## Known Issues\n- two\n", OwnedLines())
    assert merged == "# Project Memory: api\r\n\r\n## Known Issues\r\n- one\r\n- two\r\n"


# -- import: hostile archives ------------------------------------------------------------------

GOOD = "projects/api-1234567890/memory.md"


def make_zip(path: Path, members: list[tuple[str | zipfile.ZipInfo, bytes]]) -> Path:
    """A zip holding exactly these names: no normalising (ZipInfo turns ``\\`` into ``/`` on Windows)."""
    with zipfile.ZipFile(path, "w") as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name": wanted here
        for name, data in members:
            info = name if isinstance(name, zipfile.ZipInfo) else zipfile.ZipInfo(name)
            info.filename = info.filename if isinstance(name, zipfile.ZipInfo) else name
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return path


def outside_the_store(tmp_path: Path) -> set[str]:
    store = Path(paths.data_root())
    return {str(p) for p in tmp_path.rglob("*") if store not in p.parents and p != store}


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("/etc/keeper-evil.md", "an absolute path"),
        ("../keeper-evil.md", "'..' part"),
        ("projects/../../keeper-evil.md", "'..' part"),
        ("projects/api-1/sessions/../../../../keeper-evil.md", "'..' part"),
        ("projects//memory.md", "empty"),
        ("C:/keeper-evil.md", "a drive letter"),
        ("c:keeper-evil.md", "a drive letter"),
        ("projects\\api-1\\memory.md", "a backslash"),
        ("..\\..\\keeper-evil.md", "a backslash"),
        ("projects/.hidden/memory.md", "not a safe folder name"),
        ("projects/con/memory.md", "not a safe folder name"),
        ("projects/" + "x" * 65 + "/memory.md", "not a safe folder name"),
        ("projects/api-1/sessions/.evil.md", "not a safe session file name"),
        ("projects/api-1/sessions/con.md", "not a safe session file name"),
        ("projects/api-1/sessions/a b.md", "not a safe session file name"),
        ("projects/api-1/sessions/2026-01-01.sh", "not a safe session file name"),
        ("projects/api-1/sessions/deep/2026-01-01.md", "not a file Keeper exports"),
        ("projects/api-1/state/index.sqlite3", "not a file Keeper exports"),
        ("projects/api-1/state/s1.json", "not a file Keeper exports"),
        ("projects/api-1", "not a file Keeper exports"),
        ("config.yaml", "not a file Keeper exports"),
        ("global/config.yaml", "not a file Keeper exports"),
    ],
)
def test_names_outside_keepers_layout_are_refused_and_the_rest_imported(
    name: str, reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = outside_the_store(tmp_path)
    evil = make_zip(tmp_path / "evil.zip", [(GOOD, b"# Project Memory: api\n"), (name, b"# evil\n")])
    before.add(str(evil))
    code, report = import_(capsys, evil)
    if os.sep == "\\" and "\\" in name:  # Windows' zipfile reads '\\' as '/': judged in that spelling
        assert name not in [r["name"] for r in report["refused"]]
        assert outside_the_store(tmp_path) == before
        return
    assert code == 1
    (refused,) = report["refused"]
    assert refused["name"] == name and reason in refused["reason"]
    store = Path(paths.data_root())
    assert files(store) == {GOOD: b"# Project Memory: api\n"}
    assert outside_the_store(tmp_path) == before


def test_symlink_entries_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    link = zipfile.ZipInfo(GOOD)
    link.create_system = 3
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    evil = make_zip(tmp_path / "evil.zip", [(link, b"/etc/passwd")])
    code, out, _ = run(["import", str(evil)], capsys)
    assert code == 1 and f"! refused {GOOD}: a symbolic link" in out
    assert files(Path(paths.data_root())) == {}


def test_text_that_is_not_utf8_is_refused_with_a_clear_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad_session = "projects/api-1234567890/sessions/2026-01-01_0900.md"
    evil = make_zip(
        tmp_path / "evil.zip",
        [
            (GOOD, b"# Project Memory: api\n"),
            (bad_session, b"caf\xe9\n"),
            ("projects/api-1234567890/state/memory.json", b"[1]"),
        ],
    )
    code, report = import_(capsys, evil)
    assert code == 1
    assert {(r["name"], r["reason"]) for r in report["refused"]} == {
        (bad_session, "not UTF-8 text (memory files are text)"),
        ("projects/api-1234567890/state/memory.json", "not a JSON object"),
    }
    assert set(files(Path(paths.data_root()))) == {GOOD}


def _lie_about_size(path: Path, name: str, claimed: int) -> None:
    """Rewrite the local and central headers of ``name`` to claim ``claimed`` bytes uncompressed."""
    import struct

    data = bytearray(path.read_bytes())
    encoded = name.encode()
    local = data.find(b"PK\x03\x04")
    while data[local + 30 : local + 30 + len(encoded)] != encoded:
        local = data.find(b"PK\x03\x04", local + 1)
    struct.pack_into("<I", data, local + 22, claimed)
    central = data.find(b"PK\x01\x02")
    while data[central + 46 : central + 46 + len(encoded)] != encoded:
        central = data.find(b"PK\x01\x02", central + 1)
    struct.pack_into("<I", data, central + 24, claimed)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("lie", [False, True])
def test_a_zip_bomb_is_refused_whole_without_writing(
    lie: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive, "MAX_MEMBER", 1 << 20)
    bomb_name = "projects/api-1234567890/sessions/2026-01-01_0900.md"
    bomb = make_zip(tmp_path / "bomb.zip", [(GOOD, b"# ok\n"), (bomb_name, b"0" * (20 << 20))])
    assert bomb.stat().st_size < 100_000
    if lie:  # the header says 100 bytes; what comes out is what counts
        _lie_about_size(bomb, bomb_name, 100)
    code, out, err = run(["import", str(bomb)], capsys)
    assert code == 1 and not out and err.startswith(f"keeper: error: {bomb}") and err.count("\n") == 1
    assert "nothing was imported" in err
    assert not Path(paths.data_root()).exists()


def test_the_total_size_is_capped_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive, "MAX_TOTAL", 3 << 20)
    members = [(f"projects/api-1234567890/sessions/2026-01-0{i}_0900.md", b"x" * (1 << 20)) for i in range(1, 5)]
    code, _, err = run(["import", str(make_zip(tmp_path / "big.zip", members))], capsys)
    assert code == 1 and "more than 3 MiB in all" in err
    assert not Path(paths.data_root()).exists()


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ([(GOOD, b"a"), (GOOD, b"b")], "twice"),
        ([(GOOD, b"a"), (GOOD.upper(), b"b")], "twice"),
        ([(f"projects/p{i}/memory.md", b"x") for i in range(6)], "more than the 5 Keeper accepts"),
        ([("keeper-export.json", b'{"format": 2}'), (GOOD, b"x")], "newer Keeper"),
    ],
)
def test_ambiguous_or_oversized_archives_are_refused_whole(
    members: list[tuple[str, bytes]],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(archive, "MAX_MEMBERS", 5)
    evil = make_zip(tmp_path / "evil.zip", members)  # type: ignore[arg-type]
    code, out, err = run(["import", str(evil)], capsys)
    assert code == 1 and not out and message in err and err.count("\n") == 1
    assert not Path(paths.data_root()).exists()


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: b"not a zip at all",
        lambda data: data[: len(data) // 2],
        lambda data: data.replace(b"Postgres", b"Postgrex"),  # stored member: the CRC no longer matches
        lambda data: b"",
    ],
    ids=["garbage", "truncated", "bad-crc", "empty"],
)
def test_a_damaged_archive_is_one_error_line_and_writes_nothing(
    damage: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.zip"
    with zipfile.ZipFile(good, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(GOOD, "- Use Postgres\n" * 50)
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(damage(good.read_bytes()))  # type: ignore[operator]
    code, out, err = run(["import", str(damaged)], capsys)
    assert code == 1 and not out and err.startswith("keeper: error: ") and err.count("\n") == 1
    assert "nothing was imported" in err
    assert not Path(paths.data_root()).exists()


def test_a_missing_archive_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["import", str(tmp_path / "nope.zip")], capsys)
    assert code == 1 and err.startswith("keeper: error: ") and err.count("\n") == 1


def test_a_hand_made_zip_of_the_store_without_manifest_imports(
    two_projects: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = Path(paths.data_root())
    original = markdown(root)
    by_hand = tmp_path / "by-hand.zip"
    with zipfile.ZipFile(by_hand, "w") as zf:  # as `zip -r` makes it: folders, state and locks included
        for path in sorted(root.rglob("*")):
            zf.write(path, path.relative_to(root).as_posix())
    new = use_store(monkeypatch, tmp_path / "b")
    code, report = import_(capsys, by_hand)
    assert code == 1  # the derived files and locks are named as refused
    assert markdown(new) == original
    assert all(r["reason"] == "not a file Keeper exports" for r in report["refused"])


def test_merge_file_keeps_near_identical_summaries_of_two_sessions() -> None:
    mine = "## Recent Context\n- 2026-03-02: b work\n- 2026-03-01: base\n"
    theirs = "## Recent Context\n- 2026-03-02: a work\n- 2026-03-01: base\n"
    merged, _, _ = merge.merge_file(mine, OwnedLines(), theirs, OwnedLines())
    assert merged == "## Recent Context\n- 2026-03-02: b work\n- 2026-03-02: a work\n- 2026-03-01: base\n"


def test_export_never_writes_into_the_store(
    two_projects: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    project = resolve(str(two_projects[0]), strict=True).project
    before = Path(project.memory).read_bytes()
    code, _, err = run(["export", "--out", project.memory], capsys)
    assert code == 1 and "inside the store" in err and Path(project.memory).read_bytes() == before


def test_an_older_export_does_not_bring_back_what_was_retired_or_resolved_since(
    two_projects: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    api, _ = two_projects
    export(capsys, tmp_path / "old.zip")
    project = save(api, "s3", T2, retired=["Retry HTTP calls 3 times"], resolved=["Timeouts on /export"])
    code, _ = import_(capsys, tmp_path / "old.zip")
    text = Path(project.memory).read_text(encoding="utf-8")
    assert code == 0 and "Retry HTTP calls" not in text and "Timeouts on /export" not in text
    assert "Use Postgres 16" in text
    save(api, "s4", T2, decisions=["Retry HTTP calls 3 times"])  # said again: it holds again
    import_(capsys, tmp_path / "old.zip")
    assert "Retry HTTP calls 3 times" in Path(project.memory).read_text(encoding="utf-8")


def test_import_redacts_as_a_save_does_with_the_projects_own_patterns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    api = tmp_path / "work" / "api"
    (api / ".claude").mkdir(parents=True)
    project = save(api, "s1", T0, decisions=["Use Postgres 16"])
    memory = Path(project.memory).read_text(encoding="utf-8")
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    leaked = memory.replace("- Use Postgres 16", f"- Use Postgres 16\n- token {secret}\n- code ACME-7731-XYZ")
    zpath = tmp_path / "leak.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr(f"projects/{project.id}/memory.md", leaked)
        zf.writestr(f"projects/{project.id}/sessions/2026-03-01_0930.md", f"# Session\n\nkey {secret}\n")
        zf.writestr(f"projects/{project.id}/state/memory.json", json.dumps({"lines": [f"- token {secret}"]}))
    (api / ".claude" / "keeper.yaml").write_text('redact_patterns:\n  - "ACME-[0-9]{4}-[A-Z]{3}"\n', encoding="utf-8")
    Path(project.memory).unlink()
    import_(capsys, zpath)
    stored = "".join(p.read_text(encoding="utf-8") for p in Path(project.dir).rglob("*.md"))
    assert secret not in stored and "ACME-7731-XYZ" not in stored and "- token " in stored
    records = [p.read_text(encoding="utf-8") for p in Path(project.state).glob("*.json")]  # memory.json too
    assert records and not any(secret in text for text in records)


def test_an_older_export_does_not_bring_back_a_global_item_retired_since(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    api = tmp_path / "proj"
    api.mkdir()
    assert main(["save", "--project-dir", str(api), "--global", "--feedback", "Never force-push main"]) == 0
    capsys.readouterr()
    export(capsys, tmp_path / "old.zip")
    assert main(["save", "--project-dir", str(api), "--global", "--retired", "Never force-push main"]) == 0
    assert "1 global item retired" in capsys.readouterr().out
    import_(capsys, tmp_path / "old.zip")
    assert "force-push" not in Path(paths.global_memory_file()).read_text(encoding="utf-8")


def test_a_keeper_file_nested_past_pythons_limit_is_left_out_of_an_export_and_an_import(
    two_projects: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = "[" * 100_000  # a damaged or hostile state/memory.json: JSON's grammar allows it, Python's parser does not
    state = Path(resolve(str(two_projects[0]), strict=True).project.state)
    (state / "memory.json").write_text(deep, encoding="utf-8")
    result = export(capsys, tmp_path / "all.zip")
    assert [i["reason"] for i in result["left_out"] if i["path"].endswith("memory.json")] == ["not valid JSON"]
    with zipfile.ZipFile(tmp_path / "hostile.zip", "w") as zf, zipfile.ZipFile(result["archive"]) as ours:
        for name in ours.namelist():
            zf.writestr(name, ours.read(name))
        pid = next(n.split("/")[1] for n in ours.namelist() if n.startswith("projects/"))
        zf.writestr(f"projects/{pid}/state/memory.json", deep)
    use_store(monkeypatch, tmp_path / "new-machine")
    code, report = import_(capsys, tmp_path / "hostile.zip")
    assert code == 1 and [i["reason"] for i in report["refused"]] == ["not valid JSON"]  # the rest imported
    assert report["projects"] and {p["memory"] for p in report["projects"]} == {"created"}
