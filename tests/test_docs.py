"""The README is the manual, and the plugin files agree with the CLI: checked, so they cannot drift."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from keeper import __version__
from keeper.cli import build_parser
from keeper.hooks import entry
from keeper.store import config
from tests.conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
# The manual: the README, short, and the pages it links in docs/ (the full command and key reference).
DOCS = "".join(p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").glob("*.md")))
MANUAL = README + DOCS
README_LIMIT = 12 * 1024  # read in two minutes; the rest lives in docs/


def commands() -> list[str]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return sorted(sub.choices)  # type: ignore[arg-type]


def test_every_command_and_hook_event_is_documented() -> None:
    for name in commands():
        assert f"`keeper {name}" in README, name  # the README names every command
        assert f"`keeper {name}" in DOCS, name  # and docs/ says all about it
    for event in entry.HANDLERS:
        assert f"`{event}`" in MANUAL, event


def test_every_config_key_is_documented_with_its_default() -> None:
    for key, (default, _, _) in config.KEYS.items():
        row = next((line for line in MANUAL.splitlines() if line.startswith(f"| `{key}` |")), None)
        assert row is not None, key
        if default not in (None, []):
            shown = str(default).lower() if isinstance(default, bool) else default
            assert f"| {shown} |" in row, key


def test_hooks_json_runs_the_plugin_launcher_for_known_events() -> None:
    data = json.loads((REPO / "hooks" / "hooks.json").read_text())
    seen = set()
    for groups in data["hooks"].values():
        for group in groups:
            if group.get("matcher") == "exit":  # Gemini CLI's set-up entry, which Claude Code never runs (test_gemini)
                continue
            for handler in group["hooks"]:
                assert handler["type"] == "command" and "shell" not in handler
                # exec form: no shell on any OS, so spaces, backslashes and PowerShell cannot break it;
                # Windows resolves the extensionless command to bin/keeper.exe
                assert handler["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/keeper"
                verb, event = handler["args"]
                assert verb == "hook" and event in entry.HANDLERS
                assert isinstance(handler["timeout"], int) and handler["timeout"] > 0
                seen.add(event)
    assert seen == set(entry.HANDLERS)


def test_the_launcher_and_bootstrap_know_this_version() -> None:
    from keeper.plugin import bootstrap

    launcher = (REPO / "bin" / "keeper").read_text(encoding="utf-8")
    assert f"\nKEEPER_VERSION={__version__}\n" in launcher
    windows = (REPO / "launcher" / "keeper.c").read_text(encoding="utf-8")  # bin/keeper.exe is built from it
    assert f'\n#define KEEPER_VERSION L"{__version__}"\n' in windows
    assert bootstrap.plugin_version(str(REPO)) == __version__
    if sys.version_info >= (3, 11):
        import tomllib

        pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
        assert bootstrap.dependencies(str(REPO)) == pyproject["project"]["dependencies"]


def test_commands_have_descriptions_and_keep_arguments_out_of_the_shell() -> None:
    files = sorted((REPO / "commands").glob("*.md"))
    assert [f.stem for f in files] == ["clear", "hub", "recall", "save", "status"]
    for path in files:
        text = path.read_text(encoding="utf-8")
        front = text.split("---")[1]
        assert re.search(r"^description: \S", front, re.M), path.name
        for line in text.splitlines():
            if line.lstrip().startswith("!`") or "```!" in line:
                assert "$ARGUMENTS" not in line and not re.search(r"\$\d", line), path.name
                assert re.search(r"!`keeper (status|hub)`", line), path.name
    assert "disable-model-invocation: true" in (REPO / "commands" / "clear.md").read_text()


def test_manifest_versions_agree() -> None:
    plugin = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    assert plugin["version"] == __version__
    marketplace = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    assert all(entry["version"] == __version__ for entry in marketplace["plugins"])  # equal, or Claude Code warns


def test_ci_runs_the_readme_commands() -> None:
    blocks = re.findall(r"```bash\n(.*?)```", README.split("## Set-up")[1].split("## ")[0], re.S)
    setup, tests = (b.strip() for b in blocks[:2])
    ci = (REPO / ".ci" / "run").read_text()
    assert setup in ci and tests in ci


def test_demo_runs_offline_and_shows_the_whole_loop(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "keeper", "demo"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Keeper asks Claude to save" in out and "tool uses since this session's memory was last saved" in out
    assert "+ 2 decisions" in out
    assert "Keeper: 2 decisions, 1 open issue" in out
    assert "Refunds still use the old rounding" in out.split("7. Recall")[1]


def test_the_save_command_file_shows_the_same_save_as_the_hooks_request() -> None:
    from keeper.capture import saveformat
    from keeper.hooks import context

    text = (REPO / "commands" / "save.md").read_text(encoding="utf-8")
    assert f"```bash\n{context.save_command(end=context.STATIC_END)}\n```" in text
    assert " ".join(saveformat.rules().split()) in " ".join(text.split())
    assert " ".join(context.TYPED_HINT.split()) in " ".join(text.split())


def test_the_readme_stays_short_and_every_link_of_it_and_of_docs_leads_somewhere() -> None:
    """A README read in two minutes, whose set-up is on its first screen; links into docs/ that exist."""
    assert len(README.encode("utf-8")) <= README_LIMIT
    assert README.index("## Set-up") < README.index("## The five slash commands")
    assert len(README[: README.index("python -m pytest")].splitlines()) <= 60  # both set-up commands, first screen
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if not target.startswith(("http://", "https://")):
                assert (page.parent / target).exists(), (page.name, target)


def test_a_page_that_sends_you_to_a_readme_section_names_one_the_readme_has() -> None:
    """docs/ once said "the README's 'Memory on every machine' says how to set it up" after that
    section had moved out of the README: a reader followed it to nothing."""
    for page in sorted((REPO / "docs").glob("*.md")):
        for section in re.findall(r"README's \"([^\"]+)\"", page.read_text(encoding="utf-8")):
            assert f"\n## {section}\n" in README, (page.name, section)


def test_every_flag_the_manual_shows_for_a_command_is_one_it_takes() -> None:
    """`keeper hub [--out FILE] [--open]` and the like, written in README.md and docs/, run as written."""
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    shown = re.findall(r"`keeper ([a-z]+)((?: [^`]*)?)`", MANUAL)
    assert len(shown) > 50  # the manual's own usage lines, found
    for name, rest in shown:
        taken = {flag for action in sub.choices[name]._actions for flag in action.option_strings}  # type: ignore[index]
        for flag in re.findall(r"--[a-z][a-z-]*", rest):
            assert flag in taken, f"`keeper {name}{rest}`: {flag}"


def test_security_names_every_file_a_save_writes_into_the_repository_and_every_network_use(
    project_dir: Path,
) -> None:
    """docs/SECURITY.md said Keeper makes no network connection of any kind and writes nothing into
    the repository; a team save writes two files there, the set-up fetches from PyPI, sync pushes."""
    from keeper.cli import main

    before = {p for p in project_dir.rglob("*") if ".git" not in p.parts}
    assert main(["save", "--decision", "Cents, not floats", "--summary", "cart"]) == 0
    assert {p for p in project_dir.rglob("*") if ".git" not in p.parts} == before  # a save writes elsewhere
    assert main(["save", "--team", "--decision", "Cents, not floats"]) == 0
    written = {p.relative_to(project_dir).as_posix() for p in project_dir.rglob("*") if p.is_file()} - {
        p.relative_to(project_dir).as_posix() for p in before
    }
    assert written == {".claude/keeper/team.md", ".claude/keeper/.gitattributes"}
    security = " ".join((REPO / "docs" / "SECURITY.md").read_text(encoding="utf-8").split())
    assert all(f"`{path}`" in security for path in written)
    assert (
        "no network connection of any kind" not in security
        and "nothing is written into your repository" not in security
    )
    assert "from PyPI" in security and "`keeper sync`" in security and "pushes" in security


def test_the_store_tree_in_configuration_names_every_file_the_commands_make(project_dir: Path, tmp_path: Path) -> None:
    from keeper.cli import main

    assert (
        main(["save", "--summary", "cart", "--decision", "Cents, not floats", "--global", "--feedback", "Brief"]) == 0
    )
    for argv in (["hub"], ["clear", "all", "--yes"], ["restore"], ["export", "--out", str(tmp_path / "a.zip")]):
        assert main(argv) == 0
    store = tmp_path / "store"
    (project,) = (store / "projects").iterdir()
    made = [*store.iterdir(), *project.iterdir(), *(store / "global").iterdir()]
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    tree = page[page.index("```\n<store>/") : page.index("```", page.index("```\n<store>/") + 3)]
    missing = sorted({p.name for p in made if not p.name.startswith(".")} - set(re.findall(r"[\w.-]+", tree)))
    assert not missing, f"docs/configuration.md's store tree lacks {missing}"


def test_every_repository_file_the_manual_cites_is_in_the_repository() -> None:
    """docs/codex.md cited research/codex/codex-spec.md, which the repository does not hold."""
    tops = (
        "research/",
        "tests/",
        "keeper/",
        "docs/",
        "benchmarks/",
        "launcher/",
        "bin/",
        "hooks/",
        "commands/",
        ".ci/",
    )
    cited = {m for m in re.findall(r"`([^`\s<>*{}$…]+)`", MANUAL) if m.startswith(tops)}
    assert cited and not [c for c in sorted(cited) if not (REPO / c.split(":")[0]).exists()]


def test_the_readme_and_the_codex_page_agree_that_codex_hooks_are_trusted_again_after_an_update() -> None:
    codex = " ".join((REPO / "docs" / "codex.md").read_text(encoding="utf-8").split())
    readme = " ".join(README.split())
    assert "again after every update" in codex
    assert "trust Keeper's hooks in `/hooks`, and again after each update" in readme and "hooks once" not in readme


def test_where_the_readme_gives_the_test_command_it_names_every_variable_the_end_to_end_tests_read() -> None:
    """A newcomer with a `claude` on PATH found `KEEPER_TEST_CLAUDE` only by reading tests/e2e/conftest.py
    (issue 40, item 2); Gemini CLI's and OpenCode's came later and were named nowhere."""
    read = set(re.findall(r"\"(KEEPER_TEST_[A-Z_]+)\"", (REPO / "tests" / "e2e" / "conftest.py").read_text()))
    read |= set(re.findall(r"\b(KEEPER_TEST_[A-Z_]+)\b", (REPO / "tests" / "conftest.py").read_text()))
    assert {"KEEPER_TEST_CLAUDE", "KEEPER_TEST_CODEX", "KEEPER_TEST_GEMINI", "KEEPER_TEST_OPENCODE"} <= read
    command = README.index("python -m pytest\n")
    where = README[command : README.index("\n## ", command)]
    development = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    for variable in sorted(read):
        assert f"`{variable}`" in where and variable in development, variable


def test_the_tests_long_variants_answer_to_one_flag_named_where_the_readme_gives_the_test_command() -> None:
    """The long runs of the property and stress tests (more examples, more rounds) answered to two flags
    and a time, each named only in its own test file (issue 40, item 8)."""
    read = {
        flag
        for path in sorted((REPO / "tests").rglob("test_*.py"))
        for flag in re.findall(r"\b(KEEPER_(?:LONG|STRESS|CRASH)_[A-Z_]+)\b", path.read_text(encoding="utf-8"))
    }
    assert read == {"KEEPER_LONG_TESTS"}
    command = README.index("python -m pytest\n")
    assert "`KEEPER_LONG_TESTS=1`" in README[command : README.index("\n## ", command)]
    assert "KEEPER_LONG_TESTS=1" in (REPO / "docs" / "development.md").read_text(encoding="utf-8")


def test_security_names_the_one_file_the_set_up_writes_outside_its_data_folder() -> None:
    """The set-up completes the hooks file of Gemini CLI's own copy of the extension
    (``bootstrap.complete_gemini_hooks``); SECURITY.md said everything stays in the store and the data folder."""
    from keeper.plugin import bootstrap

    security = " ".join((REPO / "docs" / "SECURITY.md").read_text(encoding="utf-8").split())
    assert f"`~/.gemini/extensions/keeper/{'/'.join(bootstrap.SHARED_HOOKS)}`" in security


def test_each_agent_page_says_that_keeper_doctor_reports_on_that_agent() -> None:
    """docs/opencode.md said doctor did not list OpenCode while doctor had checked it for a release
    (issue 40's walk of the OpenCode route): a page and doctor name the same agents."""
    doctor = (REPO / "keeper" / "commands" / "doctor.py").read_text(encoding="utf-8")
    for agent in ("gemini", "opencode"):
        page = (REPO / "docs" / f"{agent}.md").read_text(encoding="utf-8")
        assert f'Check("{agent}"' in doctor, agent  # doctor reports on this agent
        assert "`keeper doctor`" in page and "does not list" not in page, agent  # and its page says so


def test_every_keeper_variable_the_manual_names_is_one_keeper_or_its_tests_read() -> None:
    """docs/development.md named `KEEPER_TEST_OLD_BASH` for a launcher test that had been removed: a
    newcomer who built a bash 4.2 for it ran nothing more."""
    read = "".join(
        path.read_text(encoding="utf-8", errors="replace")
        for pattern in (
            "keeper/**/*.py",
            "tests/**/*.py",
            "benchmarks/**/*.py",
            "launcher/*",
            "bin/keeper",
            "opencode/*",
        )
        for path in REPO.glob(pattern)
        if path.is_file() and path.name != "test_docs.py"  # this file names them to check them
    )
    named = set(re.findall(r"\b(KEEPER_[A-Z][A-Z0-9_]*[A-Z0-9])\b", MANUAL))
    assert named and not sorted(v for v in named if v not in read)


def test_where_the_manual_says_keeper_calls_no_model_it_names_the_one_command_that_does() -> None:
    """README and SECURITY.md said "no model call" and the network "in two cases only" (set-up, sync), while
    `keeper doctor --live` starts one turn of the agent, a request to its model with the user's login."""
    doctor = build_parser().parse_args(["doctor", "--live"])
    assert doctor.live  # the command that asks the model once
    security = " ".join((REPO / "docs" / "SECURITY.md").read_text(encoding="utf-8").split())
    private = next(line for line in " ".join(README.split()).split("- **") if line.startswith("Private"))
    for text in (security, private):
        assert "no model call" in text and "`keeper doctor --live`" in text, text[:300]


def test_the_readme_names_every_step_codex_needs_beyond_its_install_line() -> None:
    """A newcomer who followed the README's Codex line and trusted the hooks had every save of the model
    fail in Codex's sandbox (read-only under `codex exec`): the step was on docs/codex.md only."""
    install = " ".join(README[README.index("## Install") : README.index("## Your first session")].split())
    codex = " ".join((REPO / "docs" / "codex.md").read_text(encoding="utf-8").split())
    assert "writable roots" in codex and "writable roots" in install
