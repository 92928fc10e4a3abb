"""Memory beyond one project: the global memory, typed memories, and Claude Code's own auto memory."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from keeper.cli import main
from keeper.hooks import context
from keeper.memory import document
from keeper.recall import search
from keeper.store import identity, paths
from tests.helpers import run_hook


def project(base: Path, name: str) -> Path:
    folder = base / name
    (folder / ".git").mkdir(parents=True)
    return folder


def start_context(folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict:
    payload = {"session_id": f"start-{folder.name}", "cwd": str(folder), "source": "startup"}
    return run_hook("session-start", payload, monkeypatch, capsys)


def test_a_global_correction_follows_into_another_project_and_a_project_tool_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = project(tmp_path, "alpha"), project(tmp_path, "beta")
    assert main(["save", "--project-dir", str(a), "--global", "--feedback", "Never bypass hooks with --no-verify"]) == 0
    assert main(["save", "--project-dir", str(a), "--tool", "psql lives in /opt/pg16/bin on this box"]) == 0
    out = capsys.readouterr().out
    assert "+ 1 feedback (global) item: Never bypass hooks with --no-verify" in out
    reply = start_context(b, monkeypatch, capsys)
    given = reply["hookSpecificOutput"]["additionalContext"]
    assert "Never bypass hooks with --no-verify" in given and "Across all projects" in given
    assert "psql lives in /opt/pg16/bin" not in given
    assert "1 global note" in reply["systemMessage"]
    assert (
        "psql lives in /opt/pg16/bin"
        in start_context(a, monkeypatch, capsys)["hookSpecificOutput"]["additionalContext"]
    )
    global_md = Path(paths.global_memory_file()).read_text(encoding="utf-8")
    assert (
        global_md.startswith("# Global Memory")
        and "## Feedback\n\n- Never bypass hooks with --no-verify (" in global_md
    )
    project_md = Path(identity.make_project(str(a.resolve())).memory).read_text(encoding="utf-8")
    assert "## Tools" in project_md and "## Feedback" not in project_md


def test_recall_in_another_project_finds_the_global_item_and_labels_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = project(tmp_path, "alpha"), project(tmp_path, "beta")
    main(["save", "--project-dir", str(a), "--global", "--user", "Ana prefers atomic commits, reviews on Fridays"])
    capsys.readouterr()
    assert main(["recall", "atomic commits", "--project-dir", str(b), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found and found[0]["scope"] == "global" and found[0]["id"].startswith("global/memory.md:")
    assert found[0]["path"] == paths.global_memory_file()
    main(["recall", "atomic commits", "--project-dir", str(b)])
    assert "[global memory] memory.md" in capsys.readouterr().out
    assert main(["recall", "atomic commits", "--project-dir", str(b), "--scope", "project", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["expand", found[0]["id"], "--project-dir", str(b)]) == 0
    assert "Ana prefers atomic commits" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("scope", "found_in"), [("global", {"global"}), ("project", {"project"}), ("all", {"global", "project"})]
)
def test_recall_by_scope_finds_the_global_memory_the_project_or_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], scope: str, found_in: set[str]
) -> None:
    here = project(tmp_path, "alpha")
    main(["save", "--project-dir", str(here), "--global", "--user", "Ana prefers atomic commits, reviews on Fridays"])
    main(["save", "--project-dir", str(here), "--decision", "Atomic commits in this repo, squash on merge"])
    capsys.readouterr()
    assert main(["recall", "atomic commits", "--project-dir", str(here), "--scope", scope, "--json"]) == 0
    assert {r["scope"] for r in json.loads(capsys.readouterr().out)} == found_in


def test_typed_items_merge_like_decisions_dedup_dates_retirement_and_hand_lines() -> None:
    now = datetime(2026, 11, 22, 9, 0)
    text = "# Global Memory\n\n## Feedback\n\n- A line I wrote by hand\n"
    report = document.MergeReport()
    save = document.SaveInput(typed={"feedback": ["Never force-push main", "never  FORCE-PUSH main!"]}, scope="global")
    text = document.merge_global(text, save, [], now, report)
    assert report.added_typed["feedback (global)"] == ["Never force-push main"]
    assert "- A line I wrote by hand\n" in text and "- Never force-push main (2026-11-22)" in text
    report = document.MergeReport()
    text = document.merge_global(text, document.SaveInput(), ["never force push main"], now, report)
    assert report.retired == ["Never force-push main (2026-11-22)"] and "force" not in text.split("## Feedback")[1]


def test_a_global_retirement_reaches_the_global_memory_when_the_project_has_no_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = project(tmp_path, "alpha")
    main(["save", "--project-dir", str(a), "--global", "--tool", "Deploys go through make ship"])
    assert capsys.readouterr().out.startswith(f"Saved to {paths.global_memory_file()}\n")
    main(["save", "--project-dir", str(a), "--decision", "Keep money in integer cents"])
    assert main(["save", "--project-dir", str(a), "--retired", "deploys go through make ship"]) == 0
    assert "nothing retired" in capsys.readouterr().out
    assert "make ship" in Path(paths.global_memory_file()).read_text(encoding="utf-8")  # a project save
    assert main(["save", "--project-dir", str(a), "--global", "--retired", "deploys go through make ship"]) == 0
    said = capsys.readouterr().out.splitlines()
    assert said[0] == f"Saved to {paths.global_memory_file()}"  # the project's memory.md was left as it was
    assert "  - 1 global item retired: Deploys go through make ship" in said[1]
    assert "make ship" not in Path(paths.global_memory_file()).read_text(encoding="utf-8")
    assert "integer cents" in Path(identity.make_project(str(a.resolve())).memory).read_text(encoding="utf-8")


def test_a_large_global_and_a_large_project_memory_stay_within_the_budget(tmp_path: Path) -> None:
    a = project(tmp_path, "alpha")
    for i in range(60):
        main(
            [
                "save",
                "--project-dir",
                str(a),
                "--global",
                "--feedback",
                f"Feedback {i}: do not repeat mistake_{i} " + "x" * 60,
            ]
        )
        main(
            [
                "save",
                "--project-dir",
                str(a),
                "--decision",
                f"Decision {i}: module_{i} " + "y" * 60,
                "--issue",
                f"Issue {i} z",
            ]
        )
    proj = identity.make_project(str(a.resolve()))
    for limit in (1500, 6000):
        text, _ = context.session_start(proj, limit, "startup", "s")
        assert len(text) <= limit
        assert "Feedback 59:" in text and "Decision 59:" in text and "Issue 59" in text  # newest of each
        assert "(global)" in text and "older items of 'Core Decisions'" in text  # what was left out is named
        across = text.split("Across all projects", 1)[1].split("# Project Memory", 1)[0]
        assert len(across) <= limit * context.GLOBAL_SHARE + 200


def test_claude_codes_auto_memory_is_found_by_recall_labelled_and_never_written(
    project_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The layout Claude Code uses: ~/.claude/projects/<root, non-alphanumerics as '-'>/memory/."""
    root = identity.find_project_root(str(project_dir))
    native = Path(paths.claude_dir()) / "projects" / "".join(c if c.isalnum() else "-" for c in root) / "memory"
    native.mkdir(parents=True)
    (native / "MEMORY.md").write_text("- [Deploy gotcha](feedback_deploy.md) - staging needs the VPN\n")
    topic = "---\nname: Deploy gotcha\ndescription: staging deploys need the VPN\ntype: feedback\n---\n\nStaging deploys fail with a TLS error unless the corporate VPN is up.\n"
    (native / "feedback_deploy.md").write_text(topic)
    before = {p.name: p.read_bytes() for p in native.iterdir()}
    main(["save", "--decision", "Keep money in integer cents"])
    capsys.readouterr()
    assert main(["recall", "staging TLS error VPN", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    top = found[0]
    assert top["scope"] == "native" and top["id"].startswith("native/feedback_deploy.md:")
    assert top["heading"].startswith("Claude Code auto memory: feedback_deploy.md")
    assert {p.name: p.read_bytes() for p in native.iterdir()} == before
    results = search.search(identity.make_project(root), "staging TLS VPN", limit=3)
    assert "[Claude Code auto memory]" in context.recall_block("staging TLS VPN", results)
