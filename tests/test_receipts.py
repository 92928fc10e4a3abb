"""Use receipts: which items a session's start-up context showed the session went on to use.

Real hooks, real files, transcripts as Claude Code writes them: a session starts (Keeper shows
memory.md), works (its transcript grows), stops and ends; the receipts land in the provenance record.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from keeper.capture import receipts, saving
from keeper.cli import main
from keeper.memory.document import SaveInput
from keeper.store import config, identity, markers, paths, provenance
from tests.helpers import run_hook
from tests.transcripts import Transcript

FIRST = "3c1d2e4f-0a9b-4c8d-9e7f-6a5b4c3d2e1f"
SECOND = "7e6d5c4b-3a29-4180-9f8e-7d6c5b4a3928"
RETRY = "Retries go through `with_backoff()` in src/net/retry.py, capped at 5 attempts"
PORT = "The dev server listens on port 8731; never bind 8080"
PLAIN = "We prefer small commits and clear messages when we change the code"


def project_of(root: Path) -> paths.Project:
    return identity.make_project(identity.find_project_root(str(root)))


def seeded(root: Path) -> paths.Project:
    """A project whose memory holds three decisions, saved by an earlier session."""
    project = project_of(root)
    data = SaveInput(decisions=[RETRY, PORT, PLAIN])
    saving.save(project, config.load(project.root), data, "an-earlier-session", now=datetime.now())
    return project


def payload(root: Path, session: str, transcript: Transcript) -> dict[str, Any]:
    return {"session_id": session, "transcript_path": str(transcript.path), "cwd": str(root)}


def begin(root: Path, session: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Transcript:
    transcript = Transcript(root.parent / f"{session}.jsonl", cwd=str(root))
    run_hook("session-start", {**payload(root, session, transcript), "source": "startup"}, monkeypatch, capsys)
    return transcript


def stop(
    root: Path,
    session: str,
    transcript: Transcript,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    first = payload(root, session, transcript)
    run_hook("stop", {**first, "stop_hook_active": False, "last_assistant_message": "Done."}, monkeypatch, capsys)


def used(project: paths.Project) -> list[dict[str, Any]]:
    return [e.as_dict() for e in provenance.read(project.dir) if e.kind == "used"]


def test_a_tool_input_that_uses_an_injected_decisions_identifier_gets_a_receipt(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = seeded(project_dir)
    transcript = begin(project_dir, FIRST, monkeypatch, capsys)
    transcript.prompt("The payment call fails now and then, make it sturdier")
    transcript.tool("Read", {"file_path": str(project_dir / "src" / "pay.py")})
    transcript.tool(
        "Edit",
        {
            "file_path": str(project_dir / "src" / "pay.py"),
            "old_string": "charge()",
            "new_string": "with_backoff(charge)",
        },
    )
    stop(project_dir, FIRST, transcript, monkeypatch, capsys)
    found = used(project)
    assert [(e["session"], e["where"]) for e in found] == [(FIRST, "tool:Edit")]
    assert "with_backoff" in found[0]["item"]
    assert provenance.checked(dict(found[0])) == found[0]  # the record's reader keeps it as written


def test_words_in_common_are_no_use(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = seeded(project_dir)
    transcript = begin(project_dir, FIRST, monkeypatch, capsys)
    transcript.prompt("Tidy up the server code please")
    transcript.reply("We prefer small commits, so I will change the server code in clear steps and retry the tests.")
    transcript.tool("Bash", {"command": "git commit -am 'clear messages for the dev server'"})
    stop(project_dir, FIRST, transcript, monkeypatch, capsys)
    assert used(project) == []


def test_a_reply_naming_the_port_is_a_use_and_is_recorded_once_per_session(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = seeded(project_dir)
    transcript = begin(project_dir, FIRST, monkeypatch, capsys)
    transcript.prompt("Start the app for me")
    transcript.reply("Starting it on port 8731, as the project decided.")
    stop(project_dir, FIRST, transcript, monkeypatch, capsys)
    transcript.prompt("And again")
    transcript.tool("Bash", {"command": "npm run dev -- --port 8731"})
    stop(project_dir, FIRST, transcript, monkeypatch, capsys)
    run_hook("session-end", {**payload(project_dir, FIRST, transcript), "reason": "other"}, monkeypatch, capsys)
    assert [(e["session"], e["where"]) for e in used(project)] == [(FIRST, "text")]
    later = begin(project_dir, SECOND, monkeypatch, capsys)  # another session: its own receipt
    later.prompt("Run it")
    later.tool("Bash", {"command": "npm run dev -- --port 8731"})
    stop(project_dir, SECOND, later, monkeypatch, capsys)
    assert [(e["session"], e["where"]) for e in used(project)] == [(FIRST, "text"), (SECOND, "tool:Bash")]


def test_what_the_user_said_first_is_not_the_memorys_use(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = seeded(project_dir)
    transcript = begin(project_dir, FIRST, monkeypatch, capsys)
    transcript.prompt("Why does nothing answer on port 8731?")
    transcript.reply("Nothing listens on 8731 yet; starting it.")
    stop(project_dir, FIRST, transcript, monkeypatch, capsys)
    assert used(project) == []


def test_a_save_that_restates_an_item_is_a_use_once_and_no_new_evidence(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = seeded(project_dir)
    transcript = begin(project_dir, FIRST, monkeypatch, capsys)
    transcript.prompt("Save what we know")
    transcript.tool("Bash", {"command": f"keeper save <<'EOF'\ndecision: {PORT}\nEOF"})
    saving.save(project, config.load(project.root), SaveInput(decisions=[PORT, PLAIN]), FIRST)
    transcript.tool("Bash", {"command": "npm run dev -- --port 8731"})  # used again: no second receipt
    stop(project_dir, FIRST, transcript, monkeypatch, capsys)
    saving.save(project, config.load(project.root), SaveInput(decisions=[PORT]), FIRST)  # restated again
    assert sorted((e["where"], "8731" in e["item"]) for e in used(project)) == [("save", False), ("save", True)]
    history = [h for k, h in provenance.by_item(provenance.read(project.dir)).items() if "8731" in k]
    assert [[e.kind for e in h] for h in history] == [["added", "echoed", "echoed"]]  # no confirmation


@pytest.mark.parametrize(
    "command",
    [
        "keeper recall with_backoff retry",
        "keeper why 8731",
        '"/home/ann/.claude/plugins/cache/keeper/keeper/0.5.0/bin/keeper" recall with_backoff --limit 3',
        "python -m keeper expand memory.md:3 && keeper why with_backoff",
    ],
)
def test_looking_an_item_up_in_memory_is_no_use_of_it(
    command: str, project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``keeper recall``, ``why`` or ``expand`` with an item's identifier or number loads the item
    again (as its start did); it is no sign the session used it, which a command that does the
    work with it is."""
    project = seeded(project_dir)
    transcript = begin(project_dir, FIRST, monkeypatch, capsys)
    transcript.prompt("What do we know about retries and the server?")
    transcript.tool("Bash", {"command": command})
    stop(project_dir, FIRST, transcript, monkeypatch, capsys)
    assert used(project) == []
    transcript.tool("Bash", {"command": "npm run dev -- --port 8731"})
    stop(project_dir, FIRST, transcript, monkeypatch, capsys)
    assert [(e["session"], e["where"]) for e in used(project)] == [(FIRST, "tool:Bash")]


def test_items_not_shown_get_no_receipt(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = seeded(project_dir)
    transcript = Transcript(project_dir.parent / f"{FIRST}.jsonl", cwd=str(project_dir))  # no SessionStart ran
    transcript.prompt("Start it")
    transcript.tool("Bash", {"command": "npm run dev -- --port 8731"})
    stop(project_dir, FIRST, transcript, monkeypatch, capsys)
    assert used(project) == []


def test_keeper_why_lists_an_items_uses_and_status_gives_the_share_used(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seeded(project_dir)
    transcript = begin(project_dir, FIRST, monkeypatch, capsys)
    transcript.prompt("Start the app")
    transcript.tool("Bash", {"command": "npm run dev -- --port 8731"})
    stop(project_dir, FIRST, transcript, monkeypatch, capsys)
    capsys.readouterr()
    monkeypatch.chdir(project_dir)
    assert main(["why", "8731"]) == 0
    out = capsys.readouterr().out
    assert "Used in 1 session" in out and FIRST[:8] in out and "tool:Bash" in out
    assert main(["why", "8731", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(u["session"], u["where"]) for u in data["uses"]] == [(FIRST, "tool:Bash")]
    assert main(["status", "--json"]) == 0
    share = json.loads(capsys.readouterr().out)["uses"]
    assert share == {"sessions": 1, "injected": 3, "used": 1, "at_start": 3, "recalled": 0}
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert "1 of 3 items Keeper put into the last 1 session were used (33%; 3 shown at the start, 0 more" in out


@pytest.mark.parametrize(
    ("item", "said", "use"),
    [
        ("Use `make lint-all` before pushing", "Running make lint-all now", True),
        ("Config lives in settings/prod.toml", "cat settings/prod.toml", True),
        ("Config lives in settings/prod.toml", "the settings for production", False),
        ("The API client is called OrderGateway", "gw = OrderGateway()", True),
        ("Deploys go through Netlify and Tigris", "netlify deploy; tigris bucket ls", True),
        ("Deploys go through Netlify and Tigris", "Deploys go through the pipeline", False),
        ("Timeouts are 2026 ms", "timeouts in 2026", False),
        ("Retry at most 5 times", "retry 5 times", False),
        ("Retries live in src/net/retry.py", r"C:\work\api\src\net\retry.py", True),
        ("Retries live in src/net/retry.py", r"C:\work\api\src\net\other.py", False),
    ],
)
def test_what_counts_as_distinctive(item: str, said: str, use: bool) -> None:
    watch = receipts.Watch("", {"watch": {"x": {"key": item.lower(), "tokens": receipts.distinctive(item)}}})
    watch.hear("tool:Bash", said)
    assert bool(watch.found) is use


def rollout_item(kind: str, **fields: object) -> str:
    entry = {
        "timestamp": "2026-11-26T04:51:00.000Z",
        "type": "event_msg",
        "payload": {"type": "item_completed", "item": {"type": kind, **fields}},
    }
    return json.dumps(entry) + "\n"


def test_a_codex_session_that_runs_an_items_command_gets_a_receipt_and_its_save_does_not(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = seeded(project_dir)
    rollout = project_dir.parent / "rollout-2026-11-26T04-51-00-receipts.jsonl"
    rollout.write_text(rollout_item("UserMessage", content=[{"type": "text", "text": "start the app"}]))
    base = {"session_id": FIRST, "cwd": str(project_dir), "transcript_path": str(rollout)}
    run_hook("session-start", {**base, "source": "startup"}, monkeypatch, capsys)
    with rollout.open("a", encoding="utf-8") as fh:
        fh.write(rollout_item("CommandExecution", command=["bash", "-lc", f"keeper save <<'EOF'\n{RETRY}\nEOF"]))
        fh.write(rollout_item("CommandExecution", command=["bash", "-lc", "npm run dev -- --port 8731"], exit_code=0))
        fh.write(rollout_item("AgentMessage", content=[{"type": "text", "text": "It runs on 8731."}]))
    run_hook("stop", {**base, "stop_hook_active": False, "last_assistant_message": "Done."}, monkeypatch, capsys)
    assert [(e["session"], e["where"]) for e in used(project)] == [(FIRST, "tool:Bash")]
    assert "8731" in used(project)[0]["item"]


GEMINI_USER = {"type": "user", "id": "u1", "content": [{"text": "start the app"}]}
GEMINI_SAVE = {
    "type": "gemini",
    "id": "g1",
    "content": "Saving.",
    "toolCalls": [{"id": "c1", "name": "run_shell_command", "args": {"command": f"keeper save <<'EOF'\n{RETRY}\nEOF"}}],
}
GEMINI_RUN = {
    "type": "gemini",
    "id": "g2",
    "content": "Starting it.",
    "toolCalls": [{"id": "c2", "name": "run_shell_command", "args": {"command": "npm run dev -- --port 8731"}}],
}
OPENCODE_USER = {"info": {"role": "user"}, "parts": [{"type": "text", "text": "start the app"}]}
OPENCODE_SAVE = {
    "info": {"role": "assistant"},
    "parts": [{"type": "tool", "tool": "bash", "state": {"input": {"command": f"keeper save <<'EOF'\n{RETRY}\nEOF"}}}],
}
OPENCODE_RUN = {"info": {"role": "assistant"}, "parts": [{"type": "text", "text": "It listens on 8731 now."}]}


@pytest.mark.parametrize(
    ("lines", "where"),
    [
        ([GEMINI_USER, GEMINI_SAVE, GEMINI_RUN], "tool:run_shell_command"),
        ([OPENCODE_USER, OPENCODE_SAVE, OPENCODE_RUN], "text"),
    ],
)
def test_gemini_chats_and_opencode_messages_give_receipts_too(lines: list[dict[str, Any]], where: str) -> None:
    from keeper.capture import transcript

    tokens = {text: receipts.distinctive(text) for text in (RETRY, PORT)}
    watch = receipts.Watch("", {"watch": {t[:4]: {"key": t, "tokens": tokens[t]} for t in tokens}})
    activity = transcript.Activity(said=watch.hear)
    for line in lines:
        activity.add(line)
    assert watch.found == [(PORT, where)]  # the save restating RETRY is not a use


@pytest.mark.parametrize(
    "kept",
    [
        "not json",
        "[1, 2]",
        '{"watch": [1], "heard": "x", "used": 3}',
        '{"watch": {"a": 1, "b": {"key": 2}, "c": {"key": "k", "tokens": [1]}, "d": {"key": "k", "tokens": {"x": "y"}}}}',
    ],
)
def test_a_damaged_receipts_file_never_breaks_a_stop(
    kept: str, project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = seeded(project_dir)
    transcript = begin(project_dir, FIRST, monkeypatch, capsys)
    Path(project.session_file(FIRST, "receipts")).write_text(kept, encoding="utf-8")
    transcript.prompt("Start the app")
    transcript.tool("Bash", {"command": "npm run dev -- --port 8731"})
    stop(project_dir, FIRST, transcript, monkeypatch, capsys)
    assert [(e["session"], e["where"]) for e in used(project)] == [(FIRST, "tool:Bash")]


def left_to_recall(project: paths.Project, item: str) -> None:
    """``item`` shown at enough starts, never used: the next start leaves it to recall (``store.loads``)."""
    from keeper.memory.items import key
    from keeper.store import loads

    for _ in range(loads.IDLE_AFTER):
        loads.note(project, shown=[key(item)])


def prompt(root: Path, session: str, transcript: Transcript, text: str, monkeypatch: Any, capsys: Any) -> str:
    transcript.prompt(text)
    reply = run_hook("user-prompt-submit", {**payload(root, session, transcript), "prompt": text}, monkeypatch, capsys)
    return str(reply.get("hookSpecificOutput", {}).get("additionalContext", ""))


def test_an_item_automatic_recall_brought_back_and_the_session_used_gets_a_receipt_that_says_so(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = seeded(project_dir)
    left_to_recall(project, RETRY)
    transcript = begin(project_dir, FIRST, monkeypatch, capsys)
    assert RETRY not in markers.shown_file(project, FIRST) and provenance.shown_id(
        provenance.item_id(RETRY)
    ) not in Path(markers.shown_file(project, FIRST)).read_text(encoding="utf-8")
    said = prompt(project_dir, FIRST, transcript, "How do retries go through the backoff helper?", monkeypatch, capsys)
    assert "automatic recall" in said and "with_backoff" in said
    transcript.tool("Edit", {"file_path": str(project_dir / "src" / "net" / "retry.py"), "new_string": "x = 1"})
    stop(project_dir, FIRST, transcript, monkeypatch, capsys)
    receipts_ = [(e["session"], e["where"], e["item"]) for e in used(project)]
    assert receipts_ == [(FIRST, "tool:Edit after auto-recall", key_of(RETRY))]


def test_an_item_keeper_recall_showed_is_judged_and_the_users_own_words_are_still_no_use(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = seeded(project_dir)
    left_to_recall(project, RETRY)
    transcript = begin(project_dir, FIRST, monkeypatch, capsys)
    said = prompt(project_dir, FIRST, transcript, "/keeper:recall with_backoff", monkeypatch, capsys)
    assert "with_backoff" in said
    transcript.reply("Found it: with_backoff() is the helper.")  # only what the user asked for: no use
    stop(project_dir, FIRST, transcript, monkeypatch, capsys)
    assert used(project) == []
    transcript.prompt("Use it for the payment call")
    transcript.tool("Bash", {"command": "sed -n 1,40p src/net/retry.py"})
    stop(project_dir, FIRST, transcript, monkeypatch, capsys)
    assert [(e["where"], e["item"]) for e in used(project)] == [("tool:Bash after recall", key_of(RETRY))]


def test_the_share_used_counts_what_recall_brought_once_a_session_and_why_and_the_hub_read_its_receipt(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from keeper.hub import build

    project = seeded(project_dir)
    left_to_recall(project, RETRY)  # the start shows PORT and PLAIN only
    monkeypatch.chdir(project_dir)
    hub = next(p for p in build.collect()["projects"] if p["id"] == project.id)
    assert "left to recall" in hub["origins"][RETRY]["unused"]
    transcript = begin(project_dir, FIRST, monkeypatch, capsys)
    for asked in (
        "How do retries go through the backoff helper?",
        "/keeper:recall with_backoff",
        "/keeper:recall 8731",
    ):
        assert prompt(project_dir, FIRST, transcript, asked, monkeypatch, capsys)  # RETRY twice, PORT shown already
    transcript.tool("Edit", {"file_path": str(project_dir / "src" / "net" / "retry.py"), "new_string": "x = 1"})
    stop(project_dir, FIRST, transcript, monkeypatch, capsys)
    capsys.readouterr()
    assert main(["status", "--json"]) == 0
    share = json.loads(capsys.readouterr().out)["uses"]
    assert share == {"sessions": 1, "injected": 3, "used": 1, "at_start": 2, "recalled": 1}
    assert main(["status"]) == 0
    assert (
        "1 of 3 items Keeper put into the last 1 session were used (33%; 2 shown at the start, 1 more by recall;"
        in (capsys.readouterr().out)
    )
    assert main(["why", "with_backoff"]) == 0
    out = capsys.readouterr().out
    assert "Used in 1 session" in out and f"by session {FIRST}" in out and "(tool:Edit after auto-recall)" in out
    hub = next(p for p in build.collect()["projects"] if p["id"] == project.id)
    assert "unused" not in hub["origins"][RETRY]  # a use after recall is a use: no longer marked


def key_of(item: str) -> str:
    from keeper.memory.items import key

    return key(item)


@pytest.mark.needs("git")
@pytest.mark.parametrize("how", ["used", "re-confirmed"])
def test_a_use_or_a_reconfirmation_on_another_machine_brings_back_an_item_left_to_recall_once(
    how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Receipts and re-confirmations are durable facts that travel: an item this machine's sessions
    were shown and never used, which another machine's session used (or a save there re-confirmed),
    is no longer left to recall here once that arrives by sync; arriving again by import, it counts
    no second time. (Only this machine's own sessions counted: the item stayed out of every start.)"""
    from keeper.memory.items import key
    from keeper.store import loads
    from tests.syncstores import Machine, connect, git

    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(remote))
    a, b = (Machine(tmp_path, name, monkeypatch, "git@github.com:me/shop.git") for name in "ab")
    a.save("--decision", RETRY, "--decision", PORT)
    connect([a, b], remote)
    monkeypatch.setenv("KEEPER_HOME", str(b.store))
    here = project_of(b.project)
    left_to_recall(here, RETRY)
    assert RETRY not in b.start_session("b-idle")
    if how == "used":
        monkeypatch.setenv("KEEPER_HOME", str(a.store))
        capsys.readouterr()  # what the commands printed: the hooks' replies follow
        transcript = begin(a.project, FIRST, monkeypatch, capsys)
        transcript.tool(
            "Edit", {"file_path": str(a.project / "pay.py"), "old_string": "x", "new_string": "with_backoff(x)"}
        )
        stop(a.project, FIRST, transcript, monkeypatch, capsys)
    else:
        a.save("--decision", RETRY)
    assert a.sync() == 0 and b.sync() == 0
    assert RETRY in b.start_session("b-back")
    counted = loads.read(here).counts(key(RETRY))
    archive = tmp_path / "a.zip"
    assert a.run("export", "--out", str(archive)) == 0
    assert b.run("import", str(archive), "--project-dir", str(b.project)) == 0
    assert loads.read(here).counts(key(RETRY)) == counted
