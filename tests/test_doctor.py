"""keeper doctor finds what stops Keeper from working and says how to fix it."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from keeper import __version__
from keeper.cli import main
from keeper.commands import doctor


def test_the_install_hint_is_two_commands_that_work_from_this_checkout() -> None:
    from tests.conftest import REPO

    assert doctor.install.install_hint() == (
        f"run `claude plugin marketplace add {REPO}`, then `claude plugin install keeper@keeper`"
    )


def fake_keeper(folder: Path, version: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "keeper"
    script.write_text(f"#!/bin/sh\necho 'keeper {version}'\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


@pytest.mark.skipif(os.name == "nt", reason="uses a POSIX shell script as a stand-in keeper")
def test_doctor_reports_each_problem_with_a_fix(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    (project_dir / ".claude").mkdir()
    (project_dir / ".claude" / "keeper.yaml").write_text("save_every: never\n")
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "note  plugin   no keeper plugin is enabled" in out and "claude plugin install keeper@keeper" in out
    assert "note  command  no `keeper` on PATH: the plugin runs its own" in out
    assert "FAIL  config" in out and "save_every must be a positive whole number" in out
    assert "ok    store" in out and "1 problem found." in out


def claude_plugin_state(home: Path, source: Path, data_files: dict[str, str], install_path: str = "x") -> Path:
    """Write what `claude plugin marketplace add` + `install` leave behind, and a data folder."""
    claude = home / ".claude"
    (claude / "plugins").mkdir(parents=True, exist_ok=True)
    (claude / "settings.json").write_text(json.dumps({"enabledPlugins": {"keeper@keeper": True}}))
    marketplaces = {"keeper": {"source": {"source": "directory", "path": str(source)}}}
    (claude / "plugins" / "known_marketplaces.json").write_text(json.dumps(marketplaces))
    installed = {"version": 2, "plugins": {"keeper@keeper": [{"version": __version__, "installPath": install_path}]}}
    (claude / "plugins" / "installed_plugins.json").write_text(json.dumps(installed))
    data = claude / "plugins" / "data" / "keeper-keeper"
    for name, text in data_files.items():
        (data / name).parent.mkdir(parents=True, exist_ok=True)
        (data / name).write_text(text)
    return data


def test_doctor_tells_the_truth_about_the_plugin_set_up(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = Path(os.environ["HOME"])
    source = tmp_path / "checkout"
    source.mkdir()
    ready = {f"env/{__version__}/keeper-env.json": json.dumps({"version": __version__, "python": "/usr/bin/python3"})}
    claude_plugin_state(home, source, ready)
    main(["doctor", "--json"])
    found = {c["check"]: c for c in json.loads(capsys.readouterr().out)}
    assert found["setup"]["ok"] is True and "Python /usr/bin/python3" in found["setup"]["detail"]
    assert "source" not in found
    failure = {"systemMessage": "Keeper could not set itself up: pip failed: no network."}
    claude_plugin_state(home, tmp_path / "moved-away", {"setup-failed.json": json.dumps(failure)})
    os.remove(home / ".claude/plugins/data/keeper-keeper/env" / __version__ / "keeper-env.json")
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  setup    Keeper could not set itself up: pip failed: no network." in out
    assert f"FAIL  source   the marketplace folder {tmp_path / 'moved-away'} no longer exists" in out
    assert "claude plugin marketplace remove keeper" in out


def test_doctor_names_a_virtualenv_or_cache_claude_code_copied_into_its_plugin_cache(
    project_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = Path(os.environ["HOME"])
    source = tmp_path / "checkout"
    cache = home / ".claude" / "plugins" / "cache" / "keeper" / "keeper" / __version__
    leftovers = (cache / "build" / "lib" / "keeper", cache / "claude_keeper.egg-info")  # pip install . leaves them
    for folder in (source, cache / "bin", cache / ".venv" / "lib", cache / ".cache" / "claude-code", *leftovers):
        folder.mkdir(parents=True, exist_ok=True)
    claude_plugin_state(home, source, {}, install_path=str(cache))
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert f"FAIL  copy     Claude Code copied .venv, .cache from {source} into its plugin cache" in out
    assert "claude plugin uninstall keeper@keeper" in out
    import shutil

    shutil.rmtree(cache / ".venv")
    shutil.rmtree(cache / ".cache")
    main(["doctor"])
    assert " copy " not in capsys.readouterr().out  # the plugin's own files only: nothing to say


@pytest.mark.skipif(os.name == "nt", reason="uses a POSIX shell script as a stand-in keeper")
def test_a_keeper_only_inside_a_virtualenv_is_a_note_with_the_next_step_without_the_plugin(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's own set-up makes one: not a problem, and the note says to install the plugin."""
    venv = tmp_path / "project-venv"
    fake_keeper(venv / "bin", __version__)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    monkeypatch.setenv("PATH", str(venv / "bin"))
    assert main(["doctor", "--json"]) == 0
    found = {c["check"]: c for c in json.loads(capsys.readouterr().out)}
    assert found["command"]["ok"] is None and "inside a virtualenv" in found["command"]["detail"]
    assert "claude plugin install keeper@keeper" in found["command"]["fix"]


class Installed:
    """Stands in for the ``claude-keeper`` distribution pip installed, with its direct_url.json."""

    def __init__(self, url: str | None) -> None:
        self.url = url

    def read_text(self, name: str) -> str | None:
        return json.dumps({"url": self.url, "dir_info": {}}) if self.url and name == "direct_url.json" else None


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("file://{clone}", "{clone}"),
        ("git+https://github.com/keeper-team/keeper.git@v0.3.0", "keeper-team/keeper"),
        (None, "claude plugin marketplace add ."),
        ("file:///nowhere/at/all", "claude plugin marketplace add ."),
    ],
)
def test_the_install_hint_names_where_pip_installed_keeper_from_and_never_a_placeholder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str | None, named: str
) -> None:
    from importlib import metadata

    clone = tmp_path / "keeper-clone"
    (clone / ".claude-plugin").mkdir(parents=True)
    (clone / ".claude-plugin" / "marketplace.json").write_text("{}")
    monkeypatch.setattr(doctor.install, "checkout", lambda: None)  # pip install . copies the package away
    monkeypatch.setattr(metadata, "distribution", lambda name: Installed(url and url.format(clone=clone.as_uri()[7:])))
    hint = doctor.install.install_hint()
    assert named.format(clone=clone) in hint and "claude plugin install keeper@keeper" in hint
    # Codex's and Gemini CLI's hints name the same source (they said OWNER/REPO on the README walk)
    from keeper.plugin import codex, gemini

    for other in (codex.install_hint(), gemini.install_hint()):
        assert named.format(clone=clone).replace("claude plugin marketplace add", "") in other
    assert "https://github.com/keeper-team/keeper" in gemini.install_hint() or "keeper-team" not in named
    for text in (hint, codex.install_hint(), gemini.install_hint()):
        assert "OWNER" not in text and "REPO" not in text


@pytest.mark.skipif(os.name == "nt", reason="uses a POSIX shell script as a stand-in keeper")
def test_doctor_flags_another_keeper_version_on_path(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_keeper(tmp_path / "bin", "0.0.1")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert main(["doctor", "--json"]) == 1
    found = {c["check"]: c for c in json.loads(capsys.readouterr().out)}
    assert found["command"]["ok"] is False and "reports 'keeper 0.0.1'" in found["command"]["detail"]
    fake_keeper(tmp_path / "bin", __version__)
    assert main(["doctor", "--json"]) == 0
    found = {c["check"]: c for c in json.loads(capsys.readouterr().out)}
    assert found["command"]["ok"] is True and found["python"]["ok"] is True


def test_doctor_sees_an_enabled_plugin_and_hooks_that_ran(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from keeper.hooks import entry

    settings = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"enabledPlugins": {"keeper@keeper": True}}))
    entry.handle(
        "post-tool-use", json.dumps({"session_id": "s1", "cwd": str(project_dir), "tool_name": "Read"}).encode()
    )
    main(["doctor", "--json"])
    found = {c["check"]: c for c in json.loads(capsys.readouterr().out)}
    assert found["plugin"]["ok"] is True and "keeper@keeper" in found["plugin"]["detail"]
    assert found["hooks"]["ok"] is True and "1 hook calls" in found["hooks"]["detail"]


def test_an_unwritable_store_is_a_problem(project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("KEEPER_HOME", str(blocker / "store"))
    check = doctor._store()
    assert check.ok is False and "KEEPER_HOME" in check.fix


def test_python_check_passes_here() -> None:
    assert doctor._python().ok is (sys.version_info >= (3, 9))


def test_doctor_on_a_fresh_home_finds_the_store_in_this_keepers_format(
    project_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from keeper.store import migrate

    main(["doctor"])  # its first run makes the store folder: that store is in this Keeper's format
    out = capsys.readouterr().out
    assert "store format 0" not in out
    assert f"store format {len(migrate.MIGRATIONS)}, this Keeper's own" in out


def test_the_live_check_runs_only_when_asked_and_says_what_it_costs_first(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    main(["doctor"])
    assert " live " not in capsys.readouterr().out
    assert main(["doctor", "--live"]) == 1
    out = capsys.readouterr().out
    assert (
        "FAIL  live     neither `claude` nor `codex` is on PATH" in out and "fix: install Claude Code or Codex" in out
    )
    assert main(["doctor", "--live", "--agent", "codex", "--json"]) == 1
    said = capsys.readouterr()
    assert said.err.startswith("Live check: starting `codex exec` once") and "costs one request" in said.err
    live = [c for c in json.loads(said.out) if c["check"] == "live"]
    assert live == [{"check": "live", "ok": False, "detail": "no `codex` on PATH", "fix": live[0]["fix"]}]
    assert "install Codex" in live[0]["fix"]


def test_the_live_check_asks_nothing_where_keeper_is_turned_off(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    (project_dir / ".claude").mkdir()
    (project_dir / ".claude" / "keeper.yaml").write_text("enabled: false\n")
    assert main(["doctor", "--live"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  live     Keeper is turned off here (enabled: false)" in out and "Live check:" not in out


def test_the_live_checks_store_holds_the_word_and_the_users_settings_and_nothing_else() -> None:
    from keeper.commands import live
    from keeper.store import paths

    Path(paths.data_root()).mkdir(parents=True, exist_ok=True)
    Path(paths.global_config_file()).write_text("context_chars: 900\n", encoding="utf-8")
    store = Path(live.throwaway("keeper-live-0123456789ab"))
    try:
        assert (store / "config.yaml").read_text(encoding="utf-8") == "context_chars: 900\n"
        assert "- Keeper live check word: keeper-live-0123456789ab" in (store / "global" / "memory.md").read_text()
        assert sorted(p.relative_to(store).as_posix() for p in store.rglob("*")) == [
            "config.yaml",
            "global",
            "global/memory.md",
        ]
        assert str(store) != paths.data_root()
    finally:
        import shutil

        shutil.rmtree(store)


def test_before_any_hook_ran_the_step_names_every_agent_keeper_runs_in(
    project_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A walk of the Gemini route on a fresh HOME was told to start Claude Code (issue 40)."""
    main(["doctor", "--json"])
    hooks = {c["check"]: c for c in json.loads(capsys.readouterr().out)}["hooks"]
    assert hooks["ok"] is None
    for agent in ("Claude Code", "Codex", "Gemini CLI", "OpenCode"):
        assert agent in hooks["fix"], agent
