"""bin/keeper.exe, the launcher Windows runs for every hook, run under Wine.

The plugin folder and the data folder have a space and a non-ASCII letter in their names. Stand-in
programs (tests/wine/stub.c, compiled here with mingw-w64) play python.exe, py.exe and keeper.exe:
each records the arguments the C runtime gave it and the stdin bytes it read, and answers as told.
A WindowsApps stub placed first on PATH must never run. Wine starts once per test session.

These tests skip only off Linux, or outside CI when Wine or mingw-w64 is missing; in CI (CI set)
they run and fail when either is missing (.ci/run installs both with apt-get).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from keeper.hooks import entry, quietprompt
from keeper.plugin import bootstrap
from tests.allowance_vectors import VECTORS, lay_out
from tests.conftest import LONG, REPO
from tests.releases import PACKAGES
from tests.test_launcher_prompt import cases as prompt_cases
from tests.test_launcher_prompt import launcher_says_quiet, python_says_quiet

TOOLS = ("wine", "wineserver", "x86_64-w64-mingw32-gcc")
MISSING = [tool for tool in TOOLS if shutil.which(tool) is None]
pytestmark = [
    pytest.mark.slow,  # a Wine prefix, and a Windows process for each test
    pytest.mark.skipif(sys.platform != "linux", reason="the Windows launcher is tested under Wine, on Linux"),
    pytest.mark.skipif(
        bool(MISSING) and not os.environ.get("CI"),
        reason=f"{', '.join(MISSING)} not installed (apt-get install wine mingw-w64; CI always runs these)",
    ),
]
LAUNCHER = REPO / "bin" / "keeper.exe"
# The Python paths the launcher names (KEEPER_BOOTSTRAP, KEEPER_CLI_IMPORT, KEEPER_HOOK_IMPORT in
# launcher/keeper.c): change them here with it.
BOOTSTRAP = Path("keeper", "plugin", "bootstrap.py")  # relative to the plugin folder
DIGEST = Path(*bootstrap.DIGEST_FILE)
KEY = bootstrap.env_key(str(REPO))  # the environment folder of exactly this code
NO_KEEPER = "except ImportError: raise SystemExit(75)\n"  # an environment that cannot import Keeper exits 75
CODE_MAIN = "try: from keeper.cli import main\n" + NO_KEEPER + "raise SystemExit(main())"
CODE_BARE = "import sys; sys.path.append(sys.argv.pop(1))\n" + CODE_MAIN
CODE_HOOK = (
    "import sys; sys.path.append(sys.argv.pop(1))\ntry: from keeper.hooks.entry import main\n"
    + NO_KEEPER
    + "main(sys.argv[2:])"
)
HOSTILE_ARGS = ["a b", 'c"d', "e\\\\", "", "ñ ü", 'f\\"g', '\\\\"', "h i\\", "\t", "--x=1;2&3|4"]


def win(path: Path) -> str:
    """The Windows spelling of a Linux path under Wine (drive Z: is the Linux root)."""
    return "Z:" + str(path).replace("/", "\\")


@dataclass
class Wine:
    env: dict[str, str]
    stub: Path


@pytest.fixture(scope="session")
def wine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Wine]:
    assert not MISSING, f"the Windows launcher's tests need {', '.join(MISSING)}: apt-get install wine mingw-w64"
    base = tmp_path_factory.mktemp("wine")
    stub = base / "stub.exe"
    subprocess.run(
        ["x86_64-w64-mingw32-gcc", "-municode", "-O1", "-o", str(stub), str(REPO / "tests" / "wine" / "stub.c")],
        check=True,
    )
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(base / "home"),
        "LANG": "C.UTF-8",
        "WINEPREFIX": str(base / "prefix"),
        "WINEDEBUG": "-all",
        "WINEDLLOVERRIDES": "mscoree,mshtml=;winemenubuilder.exe=d",  # no Mono or Gecko installer
    }
    # One server for the whole session, started first and holding none of the tests' pipes (a server
    # or service that a test's wine started would keep its stdout open after the launcher exits).
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    (base / "prefix").mkdir()
    subprocess.run(["wineserver", "-p"], env=env, timeout=60, check=True, **quiet)
    try:
        subprocess.run(["wineboot", "-i"], env=env, timeout=180, check=True, **quiet)
        (base / "prefix" / "drive_c" / "work" / "api \u00fc").mkdir(parents=True)  # the payloads' cwd: a folder
        yield Wine(env, stub)
    finally:
        subprocess.run(["wineserver", "-k"], env=env, timeout=60, check=False, **quiet)


@dataclass
class Plugin:
    root: Path
    data: Path
    launcher: Path
    wine: Wine

    def program(self, folder: Path, name: str, **answers: str) -> Path:
        """A stand-in program at folder/name; ``answers`` become its .out/.code/.then/.sleep/.fake files."""
        folder.mkdir(parents=True, exist_ok=True)
        exe = folder / name
        shutil.copyfile(self.wine.stub, exe)
        for key, value in answers.items():
            Path(f"{exe}.{key}").write_text(value, encoding="utf-8")
        return exe

    def env_python(self, site: bool = True, key: str = KEY, **answers: str) -> Path:
        env = self.data / "env" / key
        env.mkdir(parents=True, exist_ok=True)
        (env / bootstrap.READY).write_text("{}")
        if site:
            (env / "Lib" / "site-packages" / "keeper").mkdir(parents=True)
        return self.program(env / "Scripts", "python.exe", **answers)

    def run(
        self,
        args: list[str],
        path: Sequence[Path] = (),
        stdin: bytes = b"{}",
        stderr: Path | None = None,
        data: bool = True,
        extra: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """The launcher with PATH (WINEPATH) and CLAUDE_PLUGIN_DATA set; stderr to a file when given."""
        env = {**self.wine.env, "WINEPATH": ";".join(win(p) for p in path), **(extra or {})}
        if data:
            env["CLAUDE_PLUGIN_DATA"] = win(self.data)
        with open(stderr or os.devnull, "wb") as err:
            return subprocess.run(
                ["wine", str(self.launcher), *args],
                input=stdin,
                env=env,
                stdout=subprocess.PIPE,
                stderr=err if stderr else subprocess.PIPE,
                timeout=60,
                check=False,
            )


class _AnySite(str):
    """Matches the environment's site-packages folder, whatever its spelling."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and other.endswith("site-packages")

    __hash__ = str.__hash__


ANY_SITE = _AnySite("site-packages")


def calls(exe: Path) -> list[tuple[list[str], bytes]]:
    """What a stand-in received, one (argv, stdin) per run, oldest first."""
    folder = Path(f"{exe}.calls")
    found = []
    for k in range(1000):
        argv = folder / f"{k}.argv"
        if not argv.exists():
            break
        stdin = folder / f"{k}.stdin"
        found.append(
            (argv.read_bytes().decode("utf-8").split("\0")[:-1], stdin.read_bytes() if stdin.exists() else b"")
        )
    return found


def wait_for(exe: Path, count: int, seconds: float = 20) -> list[tuple[list[str], bytes]]:
    deadline = time.monotonic() + seconds
    while len(calls(exe)) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    return calls(exe)


@pytest.fixture
def plugin(tmp_path: Path, wine: Wine) -> Plugin:
    root = tmp_path / "plugin é x"
    (root / "bin").mkdir(parents=True)
    (root / BOOTSTRAP).parent.mkdir(parents=True)
    shutil.copyfile(REPO / BOOTSTRAP, root / BOOTSTRAP)
    shutil.copyfile(REPO / DIGEST, root / DIGEST)
    launcher = root / "bin" / "keeper.exe"
    shutil.copyfile(LAUNCHER, launcher)
    data = tmp_path / "data ü y"
    data.mkdir()
    return Plugin(root, data, launcher, wine)


@pytest.mark.parametrize(
    ("args", "code"),
    [(["hook", "post-tool-use"], CODE_HOOK), (["save", *HOSTILE_ARGS], CODE_BARE), (["hook", "--help"], CODE_BARE)],
)
def test_the_environment_runs_isolated_with_arguments_stdin_stdout_and_exit_code_intact(
    plugin: Plugin, args: list[str], code: str
) -> None:
    python = plugin.env_python(code="3")
    stdin = b'{"a": "\xc3\xa9\r\n", "b": "\xff\x00 raw"}\n'
    done = plugin.run(args, stdin=stdin)
    assert done.returncode == 3
    assert done.stdout == stdin  # the stub echoes its stdin: both ways byte for byte, no text mode
    [(argv, received)] = calls(python)
    site = win(plugin.data / "env" / KEY / "Lib" / "site-packages")
    assert argv == [win(python), "-I", "-S", "-c", code, site, *args]
    assert received == stdin


def test_given_no_arguments_by_a_hook_runner_it_runs_the_hook_of_the_payload(plugin: Plugin) -> None:
    """Codex runs hooks in a shell and drops their args: the event is the payload's hook_event_name."""
    python = plugin.env_python()
    payload = b'{"session_id":"s","hook_event_name":"SessionStart","cwd":"C:\\\\w"}'
    plugin.wine.env["CLAUDE_PLUGIN_ROOT"] = win(plugin.root)
    try:
        plugin.run([], stdin=payload)
    finally:
        del plugin.wine.env["CLAUDE_PLUGIN_ROOT"]
    site = win(plugin.data / "env" / KEY / "Lib" / "site-packages")
    assert calls(python) == [([win(python), "-I", "-S", "-c", CODE_HOOK, site, "hook"], payload)]
    plugin.run([], stdin=payload)  # no hook runner: the command line's own usage, as before
    assert calls(python)[1][0] == [win(python), "-I", "-S", "-c", CODE_BARE, site]


def test_an_environment_without_its_packages_folder_runs_the_command_line_module(plugin: Plugin) -> None:
    python = plugin.env_python(site=False, out='{"ok": 1}\n')
    done = plugin.run(["hook", "stop"])
    assert done.returncode == 0 and json.loads(done.stdout) == {"ok": 1}
    assert calls(python)[0][0] == [win(python), "-I", "-c", CODE_MAIN, "hook", "stop"]


def test_the_bash_tool_finds_the_environment_without_claude_plugin_data(plugin: Plugin) -> None:
    config = Path(plugin.wine.env["HOME"]) / "claude config ü"
    plugin.data = config / "plugins" / "data" / "keeper-keeper"
    python = plugin.env_python()
    env = {**plugin.wine.env, "CLAUDE_CONFIG_DIR": win(config)}
    done = subprocess.run(
        ["wine", str(plugin.launcher), "save"], input=b"summary: x\n", env=env, capture_output=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout == b"summary: x\n"
    assert calls(python)[0][0][-1] == "save"


def test_a_keeper_on_path_runs_while_there_is_no_environment_and_never_itself(plugin: Plugin, tmp_path: Path) -> None:
    alias = tmp_path / "another spelling"  # the launcher itself under another name: a hard link
    alias.mkdir()
    os.link(plugin.launcher, alias / "keeper.exe")
    pipx = plugin.program(tmp_path / "pipx bin ö", "keeper.exe", code="5")
    done = plugin.run(["save", *HOSTILE_ARGS], path=[plugin.root / "bin", alias, pipx.parent], stdin=b"summary: x\n")
    assert done.returncode == 5 and done.stdout == b"summary: x\n"
    [(argv, received)] = calls(pipx)
    assert argv == [win(pipx), "save", *HOSTILE_ARGS] and received == b"summary: x\n"


def installed(plugin: Plugin, tmp_path: Path, layout: Sequence[str] = (), **answers: str) -> tuple[Path, Path]:
    """Stand-ins for a keeper.exe pip installed in a virtual environment and the environment's python.exe,
    its site-packages folder holding this version of Keeper and its dependencies (or what ``layout`` names)."""
    venv = tmp_path / "venv é"
    keeper = plugin.program(venv / "Scripts", "keeper.exe", out="{}")
    python = plugin.program(venv / "Scripts", "python.exe", **answers)
    (venv / "pyvenv.cfg").write_text("home = C:\\Python313\n", encoding="utf-8")
    version = bootstrap.plugin_version(str(REPO))
    for name in layout or ("keeper", f"claude_keeper-{version}.dist-info", *PACKAGES):
        (venv / "Lib" / "site-packages" / name).mkdir(parents=True)
    return keeper, python


def pipx_copy(launcher: Path, python: Path, folder: Path) -> Path:
    """keeper.exe as pip writes it and pipx copies it out of its environment: ``launcher`` (distlib's
    own, as pip vendors it, or a stand-in), the line naming the environment's python.exe, quoted for
    its space, then the zip of its ``__main__.py``."""
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as zf:
        zf.writestr("__main__.py", "import re\r\nimport sys\r\nfrom keeper.__main__ import command\r\n")
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / "keeper.exe"
    shebang = f'#!"{win(python)}"\r\n'.encode()
    copy.write_bytes(launcher.read_bytes() + shebang + zipped.getvalue())
    Path(f"{copy}.out").write_text("{}", encoding="utf-8")
    return copy


@pytest.mark.parametrize("how", ["in its environment (pip, uv)", "a copy naming its python.exe (pipx)"])
def test_a_hook_through_a_keeper_pip_installed_runs_on_its_python_as_the_plugins_own_environment(
    plugin: Plugin, tmp_path: Path, how: str
) -> None:
    """pip's keeper.exe starts python.exe, which runs site and imports re before Keeper does: the
    environment's python.exe runs the hook as path 1 does (-I -S, its site-packages given)."""
    keeper, python = installed(plugin, tmp_path, out='{"from": "python"}')
    if "copy" in how:
        import pip  # its distlib's launcher, which pip writes keeper.exe with: run, it would run python.exe

        launcher = Path(pip.__file__).parent / "_vendor" / "distlib" / "t64.exe"
        keeper = pipx_copy(launcher, python, tmp_path / "pipx bin ö")
    payload = b'{"session_id":"s","cwd":"C:\\\\w"}'
    done = plugin.run(["hook", "session-start"], path=[keeper.parent], stdin=payload)
    assert done.returncode == 0 and json.loads(done.stdout) == {"from": "python"}
    site = win(python.parent.parent / "Lib" / "site-packages")
    assert calls(python) == [([win(python), "-I", "-S", "-c", CODE_HOOK, site, "hook", "session-start"], payload)]
    assert calls(keeper) == []


def bootstrap_call(plugin: Plugin) -> list[str]:
    """What keeper.exe gives its Python to run the set-up (the arguments after the interpreter)."""
    return ["-B", "-I", win(plugin.root / BOOTSTRAP), "--root", win(plugin.root), "--data", win(plugin.data)]


@pytest.mark.parametrize(
    "doubt",
    [
        "another version",
        "no pyvenv.cfg",
        "a dependency elsewhere",
        "a command",
        "exit 75",
        "a copy naming no environment",
    ],
)
def test_on_any_doubt_a_keeper_pip_installed_runs_as_it_is(plugin: Plugin, tmp_path: Path, doubt: str) -> None:
    version = bootstrap.plugin_version(str(REPO))
    layout = {
        "another version": ["keeper", "claude_keeper-0.0.1.dist-info", *PACKAGES],
        "a dependency elsewhere": ["keeper", f"claude_keeper-{version}.dist-info", *PACKAGES[:-1]],
    }.get(doubt, [])
    keeper, python = installed(plugin, tmp_path, layout, code="75", out="")  # as Python failing at import
    if doubt == "no pyvenv.cfg":
        (keeper.parent.parent / "pyvenv.cfg").unlink()
    if doubt == "a copy naming no environment":  # its python.exe is no virtual environment's
        keeper = pipx_copy(keeper, plugin.program(tmp_path / "Python313", "python.exe"), tmp_path / "copy")
    args = ["save", "--summary", "x"] if doubt == "a command" else ["hook", "stop"]
    done = plugin.run(args, path=[keeper.parent], stdin=b"{}")
    assert done.returncode == 0 and json.loads(done.stdout) == {}
    assert [argv for argv, _ in calls(keeper)] == [[win(keeper), *args]]
    assert len(calls(python)) == (1 if doubt == "exit 75" else 0)  # 75: it could not import Keeper


def test_while_not_set_up_a_hook_answers_at_once_and_starts_the_setup_detached(plugin: Plugin, tmp_path: Path) -> None:
    store = plugin.program(tmp_path / "Microsoft" / "WindowsApps", "python.exe", fake="")
    python = plugin.program(tmp_path / "Python 3.12 ä", "python.exe", sleep="8000")  # a slow set-up
    started = time.monotonic()
    # Wine gives every process it starts its parent's Unix stderr, whatever handles the launcher
    # passes (Windows does not), so stderr goes to a file: stdout, where the reply is read, is a pipe.
    done = plugin.run(["hook", "session-start"], path=[store.parent, python.parent], stderr=tmp_path / "stderr")
    assert time.monotonic() - started < 6  # the reply's pipe is not held by the set-up, which still runs
    assert done.returncode == 0 and "setting itself up" in json.loads(done.stdout)["systemMessage"]
    found = wait_for(python, 2)
    probe, setup = found[0][0], found[1][0]
    assert probe[:3] == [win(python), "-I", "-c"] and probe[-1] == win(plugin.root / BOOTSTRAP)
    assert setup == [win(python), *bootstrap_call(plugin)]
    assert not Path(f"{store}.calls").exists()  # the Store's python.exe never ran

    (plugin.data / "setup.lock").mkdir()  # as the running set-up holds it
    assert json.loads(plugin.run(["hook", "post-tool-use"], path=[python.parent]).stdout) == {}
    time.sleep(0.5)
    assert len(calls(python)) == 3  # one more probe, no second set-up


@pytest.mark.parametrize(("args", "kept"), [(["stop"], "stop"), (["session-end"], "session-end"), ([], "")])
def test_a_hook_that_writes_a_session_file_is_kept_while_setting_up(
    plugin: Plugin, tmp_path: Path, args: list[str], kept: str
) -> None:
    """As bin/keeper does: a Stop or SessionEnd (or Codex's hook with no event) that meets the set-up goes
    to bootstrap.py with its payload, to be run once Keeper is ready; a tool use does not."""
    python = plugin.program(tmp_path / "Python", "python.exe")
    (plugin.data / "setup.lock").mkdir()  # a set-up runs
    payload = b'{"session_id": "s1", "hook_event_name": "Stop"}'
    done = plugin.run(
        ["hook", *args], path=[python.parent], stdin=payload, extra={"CLAUDE_PLUGIN_ROOT": win(plugin.root)}
    )
    assert done.returncode == 0 and json.loads(done.stdout) == {}
    keeps = [(argv, stdin) for argv, stdin in calls(python) if "--keep" in argv]
    assert len(keeps) == 1 and keeps[0][1] == payload
    argv = keeps[0][0]
    assert argv[1:8] == bootstrap_call(plugin)
    assert argv[8:10] == ["--keep", kept] and argv[10] == "--cwd"
    assert json.loads(plugin.run(["hook", "post-tool-use"], path=[python.parent]).stdout) == {}
    assert len([argv for argv, _ in calls(python) if "--keep" in argv]) == 1


def test_the_py_launcher_is_preferred_and_a_failed_setup_is_shown(plugin: Plugin, tmp_path: Path) -> None:
    py = plugin.program(tmp_path / "Windows", "py.exe")
    python = plugin.program(tmp_path / "Python", "python.exe")
    reply = {"systemMessage": "Keeper could not set itself up: pip failed. It tries again at the next session start"}
    (plugin.data / "setup-failed.json").write_text(json.dumps(reply) + "\n", encoding="utf-8")
    done = plugin.run(["hook", "session-start"], path=[python.parent, py.parent])
    assert json.loads(done.stdout) == reply
    setup = wait_for(py, 2)[1][0]
    assert setup[:4] == [win(py), "-3", "-B", "-I"] and setup[4] == win(plugin.root / BOOTSTRAP)
    assert not Path(f"{python}.calls").exists()


def test_without_a_real_python_the_session_start_line_says_what_to_install(plugin: Plugin, tmp_path: Path) -> None:
    store = plugin.program(tmp_path / "WindowsApps", "python.exe")
    impostor = plugin.program(tmp_path / "old", "python.exe", fake="")  # answers the probe as the Store stub does
    start = plugin.run(["hook", "session-start"], path=[store.parent, impostor.parent])
    message = json.loads(start.stdout)["systemMessage"]
    assert "needs Python 3.9 or newer" in message and "winget install Python.Python" in message
    assert json.loads(plugin.run(["hook", "stop"], path=[impostor.parent]).stdout) == {}
    command = plugin.run(["status"], path=[impostor.parent])
    assert command.returncode == 1 and command.stderr.startswith(b"keeper: error: Keeper needs Python 3.9")
    assert not Path(f"{store}.calls").exists()
    assert all(argv[-1] == win(plugin.root / BOOTSTRAP) for argv, _ in calls(impostor))  # probed, never run


def test_a_command_waits_for_the_setup_then_runs_in_the_new_environment(plugin: Plugin, tmp_path: Path) -> None:
    scripts = plugin.data / "env" / KEY / "Scripts"
    scripts.mkdir(parents=True)
    (scripts.parent / bootstrap.READY).write_text("{}")  # the stand-in set-up only copies the python.exe
    python = plugin.program(tmp_path / "Python", "python.exe", then=win(scripts / "python.exe"), sleep="1000")
    done = plugin.run(["save", "--summary", "x y"], path=[python.parent], stdin=b"summary: z\n")
    assert done.returncode == 0 and done.stdout.endswith(b"summary: z\n")
    assert calls(python)[1][0][-1] == "--foreground"
    [(argv, received)] = calls(scripts / "python.exe")
    assert argv == [win(scripts / "python.exe"), "-I", "-c", CODE_MAIN, "save", "--summary", "x y"]  # no packages
    assert received == b"summary: z\n"


def test_the_committed_launcher_is_a_fresh_build_of_its_source(tmp_path: Path) -> None:
    assert shutil.which("x86_64-w64-mingw32-gcc"), "rebuilding bin/keeper.exe needs mingw-w64"
    out = tmp_path / "keeper.exe"
    subprocess.run(["sh", str(REPO / "launcher" / "build.sh"), str(out)], check=True)
    assert out.read_bytes() == LAUNCHER.read_bytes(), "bin/keeper.exe is stale: run launcher/build.sh and commit it"


def test_an_environment_python_that_cannot_start_is_said_on_stderr(plugin: Plugin) -> None:
    python = plugin.env_python()
    python.write_bytes(b"not a program")
    done = plugin.run(["hook", "stop"])
    assert done.returncode == 127 and done.stdout == b""
    assert done.stderr.decode("utf-8").startswith(f"keeper: error: cannot start {win(python)}")


def test_without_a_data_folder_a_hook_says_so_and_sets_nothing_up(plugin: Plugin, tmp_path: Path) -> None:
    python = plugin.program(tmp_path / "Python", "python.exe")
    done = plugin.run(["hook", "session-start"], path=[python.parent], data=False)
    assert "no CLAUDE_PLUGIN_DATA folder" in json.loads(done.stdout)["systemMessage"]
    assert json.loads(plugin.run(["hook", "stop"], path=[python.parent], data=False).stdout) == {}
    time.sleep(0.5)
    assert all(argv[-1] == win(plugin.root / BOOTSTRAP) for argv, _ in calls(python))  # probes only


def test_an_environment_that_cannot_import_keeper_is_set_up_again_and_the_hook_answers(
    plugin: Plugin, tmp_path: Path
) -> None:
    broken = plugin.env_python(code="75", out="")  # as Python does when `import keeper.hooks.entry` fails
    python = plugin.program(tmp_path / "Python", "python.exe", sleep="3000")
    done = plugin.run(["hook", "stop"], path=[python.parent], stderr=tmp_path / "stderr")
    assert done.returncode == 0 and json.loads(done.stdout) == {}
    assert not (plugin.data / "env" / KEY / bootstrap.READY).exists()  # no longer taken for finished
    found = wait_for(python, 3)  # the probe, the Stop kept for when Keeper is ready, the set-up
    assert "--keep" in found[1][0] and found[2][0][-2:] == ["--data", win(plugin.data)]  # it builds it again
    assert len(calls(broken)) == 1


def test_the_first_session_start_after_an_update_copies_the_earlier_environment_and_runs_it(
    plugin: Plugin, tmp_path: Path
) -> None:
    earlier = plugin.data / "env" / "0.2.0"
    earlier.mkdir(parents=True)
    (earlier / bootstrap.READY).write_text("{}")
    new = plugin.data / "env" / KEY / "Scripts" / "python.exe"
    new.parent.mkdir(parents=True)
    (new.parent.parent / bootstrap.READY).write_text("{}")  # the stand-in set-up only copies the python.exe
    python = plugin.program(tmp_path / "Python", "python.exe", then=win(new), out="")
    done = plugin.run(["hook", "session-start"], path=[python.parent], stdin=b'{"x": 1}')
    assert done.returncode == 0 and done.stdout == b'{"x": 1}'  # the new environment answered the hook itself
    quick = calls(python)[1][0]
    assert quick[-1] == "--quick" and quick[3] == win(plugin.root / BOOTSTRAP)
    [(argv, received)] = calls(new)
    assert argv[-2:] == ["hook", "session-start"] and received == b'{"x": 1}'


# -- a tool use counted without Python (issue 33; the rules: keeper/hooks/allowance.py) --------------


def passed(exe: Path, run: int) -> dict[str, str]:
    """The variables keeper.exe passes to Keeper (KEEPER_COUNT*, KEEPER_LAUNCHER_STOP and _KEY) a stand-in was
    started with, in its run ``run``."""
    found = Path(f"{exe}.calls", f"{run}.env").read_bytes().decode("utf-8").split("\0")[:-1]
    return dict(entry.split("=", 1) for entry in found)


def tool_use(**fields: object) -> bytes:
    """A PostToolUse payload as Claude Code on Windows writes it: compact, backslashes escaped."""
    body = {
        "session_id": "s-1",
        "transcript_path": "C:\\Users\\ü\\.claude\\projects\\x\\s-1.jsonl",
        "cwd": "C:\\work\\api ü",
        "permission_mode": "default",
        "effort": {"level": "medium"},
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "pytest -q"},
        "tool_response": {"stdout": "ok"},
        **fields,
    }
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def grant(plugin: Plugin, python: Path, tmp_path: Path, limit: int) -> tuple[Path, Path]:
    """Play Keeper's part after a first PostToolUse: a tally, a hook log, a settings file, and the
    session's allowance record keyed as the launcher asked."""
    store = tmp_path / "store ü"
    store.mkdir(exist_ok=True)
    tally, stats, settings = store / "s-1.tally", store / "hooks.stats", store / "config.yaml"
    tally.write_bytes(b"u")
    stats.write_text("post-tool-use\t0\t3.0\n", encoding="utf-8")
    settings.write_text("save_every: 5\n", encoding="utf-8")
    os.utime(settings, (time.time() - 60, time.time() - 60))
    asked = passed(python, 0)
    assert asked["KEEPER_COUNTER"] == win(plugin.data / "counter" / "s-1")
    lines = ["keeper-allowance 1", asked["KEEPER_COUNTER_KEY"], str(limit), win(tally), win(stats), win(python)]
    held = settings.read_text(encoding="utf-8")  # the bytes Keeper read, after their size
    lines += [f"+{win(settings)}", f"={len(held)}", held, f"-{win(store / 'missing.yaml')}", "end"]
    (plugin.data / "counter").mkdir(exist_ok=True)
    (plugin.data / "counter" / "s-1").write_bytes("".join(line + "\n" for line in lines).encode())
    return tally, stats


@pytest.mark.parametrize("args", [["hook", "post-tool-use"], []])
def test_a_tool_use_within_the_allowance_starts_no_python_and_one_past_it_does(
    plugin: Plugin, tmp_path: Path, args: list[str]
) -> None:
    python = plugin.env_python(out="{}")
    codex = {"CLAUDE_PLUGIN_ROOT": win(plugin.root)}  # Codex gives no arguments; the payload names the event
    done = plugin.run(args, stdin=tool_use(), extra=codex)
    assert done.returncode == 0 and len(calls(python)) == 1  # no allowance yet: Keeper runs, given the payload
    assert calls(python)[0] == (
        [win(python), "-I", "-S", "-c", CODE_HOOK, ANY_SITE, "hook", "post-tool-use"],
        tool_use(),
    )
    tally, stats = grant(plugin, python, tmp_path, limit=3)

    for size in (2, 3):  # within the allowance: one byte each, {}, no python.exe
        done = plugin.run(args, stdin=tool_use(), extra=codex)
        assert (done.returncode, done.stdout) == (0, b"{}")
        assert tally.read_bytes() == b"u" * size
    assert len(calls(python)) == 1
    assert stats.read_text(encoding="utf-8").splitlines()[1:] == ["post-tool-use\t0\t0.0"] * 2

    done = plugin.run(args, stdin=tool_use(), extra=codex)  # the allowance is used up: a request may be due
    assert len(calls(python)) == 2
    argv, received = calls(python)[1]
    assert argv[-2:] == ["hook", "post-tool-use"] and received == tool_use()
    assert passed(python, 1)["KEEPER_COUNTED"] == win(tally)  # counted already: Keeper only decides
    assert tally.read_bytes() == b"uuuu"


@pytest.mark.parametrize(
    "body",
    [
        tool_use(agent_id="a1"),
        tool_use(tool_input={"command": "keeper save --summary x"}),
        tool_use(tool_response={"stdout": "x" * 70_000}),
        tool_use()[:-1],
        tool_use().replace(b'"session_id":"s-1"', b'"session_id":"s\\u002d1"'),
    ],
    ids=["a subagent", "keeper save", "64 KiB or more", "cut short", "an escaped session id"],
)
def test_an_unusual_payload_goes_to_keeper_whole(plugin: Plugin, tmp_path: Path, body: bytes) -> None:
    python = plugin.env_python(out="{}")
    plugin.run(["hook", "post-tool-use"], stdin=tool_use())
    tally, _ = grant(plugin, python, tmp_path, limit=100)
    plugin.run(["hook", "post-tool-use"], stdin=body)
    assert len(calls(python)) == 2 and calls(python)[1][1] == body
    assert tally.read_bytes() == b"u" and "KEEPER_COUNTED" not in passed(python, 1)


WINDOWS_VECTORS = [vector for vector in VECTORS if not vector.get("posix_only")]


@pytest.mark.parametrize("vector", WINDOWS_VECTORS, ids=[vector["name"] for vector in WINDOWS_VECTORS])
def test_keeper_exe_reads_each_allowance_vector_as_written_down(
    plugin: Plugin, tmp_path: Path, vector: dict[str, Any]
) -> None:
    """docs/counter.md's allowance file, read by keeper.exe: the record is the vector's, keyed as the
    launcher asked; whether python.exe started is the decision."""
    python = plugin.env_python(out="{}")
    plugin.run(["hook", "post-tool-use"], stdin=tool_use())
    key = passed(python, 0)["KEEPER_COUNTER_KEY"]
    tally = lay_out(vector, tmp_path / "store ü", plugin.data / "counter" / "s-1", key, win)
    before = tally.read_bytes() if tally.is_file() else None
    done = plugin.run(["hook", "post-tool-use"], stdin=tool_use())
    assert ("count" if len(calls(python)) == 1 else "keeper") == vector["decision"]
    assert done.stdout == b"{}" or vector["decision"] == "keeper"
    if before is not None:
        assert tally.read_bytes() == before + b"u" * vector["appended"]


def stop(reply: str = 'Fixed "it" in C:\\x\nAll tests pass.', **fields: object) -> bytes:
    """A Stop's payload as Claude Code on Windows writes it: compact, letters as they are."""
    body = {
        "session_id": "s-1",
        "transcript_path": "C:\\Users\\\u00fc\\.claude\\projects\\x\\s-1.jsonl",
        "cwd": "C:\\work\\api \u00fc",
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": reply,
        **fields,
    }
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def spelled(text: str) -> str:
    """``text`` as the payload's JSON spells it, without its quotes."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def vouch(plugin: Plugin, python: Path, tmp_path: Path, reply: str) -> dict[str, Path]:
    """Play Keeper's part after a Stop it found idle: the files it rested on, each with a twin of its
    mtime, and the session's Stop record keyed as the launcher asked."""
    store = tmp_path / "store \u00fc"
    store.mkdir(exist_ok=True)
    files = {name: store / name for name in ("s-1.tally", "hooks.stats", "t.jsonl", "s-1.json", "config.yaml")}
    files["s-1.tally"].write_bytes(b"uu")
    files["hooks.stats"].write_text("stop\t0\t3.0\n", encoding="utf-8")
    files["config.yaml"].write_text("save_every: 5\n", encoding="utf-8")
    for name in ("t.jsonl", "s-1.json", "config.yaml"):
        files.setdefault(name, store / name).touch()
        os.utime(files[name], (time.time() - 60, time.time() - 60))
    asked = passed(python, len(calls(python)) - 1)
    record = plugin.data / "counter" / "s-1.stop"
    assert asked["KEEPER_LAUNCHER_STOP"] == win(record)
    payload = json.loads(stop(reply))
    lines = ["keeper-stop 1", asked["KEEPER_LAUNCHER_KEY"], spelled(payload["transcript_path"]), spelled(reply)]
    lines += [win(files["s-1.tally"]), "2", win(files["hooks.stats"]), win(python)]
    lines += _held_lines(record, files, store, ("t.jsonl", "s-1.json"), "s-1.end")
    record.write_bytes("".join(line + "\n" for line in lines).encode())
    return files


def _held_lines(record: Path, files: dict[str, Path], store: Path, twinned: tuple[str, ...], absent: str) -> list[str]:
    """A record's tail as Keeper writes it: the settings held (one there, one missing), a twin dated
    as each of ``twinned`` is, a file that must stay absent, and the end."""
    held = files["config.yaml"].read_text(encoding="utf-8")
    lines = [f"+{win(files['config.yaml'])}", f"={len(held)}", held, f"-{win(store / 'missing.yaml')}"]
    record.parent.mkdir(exist_ok=True)
    for i, name in enumerate(twinned):
        twin = Path(f"{record}.twin.{i}")
        twin.touch()
        os.utime(twin, ns=(files[name].stat().st_mtime_ns, files[name].stat().st_mtime_ns))
        lines += [f"+{win(files[name])}", f"@{win(twin)}"]
    return [*lines, f"-{win(store / absent)}", "end"]


def _stop_change(files: dict[str, Path], how: str) -> bytes:
    """What makes the vouched-for Stop another one; the payload it then comes with."""
    if how == "another reply":
        return stop("Something else.")
    if how == "the tally grew":
        with files["s-1.tally"].open("ab") as fh:
            fh.write(b"p")
    elif how == "the transcript grew":
        with files["t.jsonl"].open("a", encoding="utf-8") as fh:
            fh.write("{}\n")
    elif how == "the session's state replaced by an older one":
        os.utime(files["s-1.json"], (time.time() - 3600, time.time() - 3600))
    elif how == "the session ended":
        (files["t.jsonl"].parent / "s-1.end").touch()
    elif how == "a continuation":
        return stop(stop_hook_active=True)
    elif how == "Gemini's reply field":
        return stop(prompt_response="x")
    elif how == "the session id twice":
        return stop()[:-1] + b',"session_id":"s-1"}'
    elif how == "a list after the reply":
        return stop(background_tasks=[{"id": "b1"}])
    else:
        assert how == "settings edited"
        files["config.yaml"].write_text("save_every: 9\n", encoding="utf-8")
    return stop()


STOP_CHANGES = [
    "another reply",
    "the tally grew",
    "the transcript grew",
    "the session's state replaced by an older one",
]
STOP_CHANGES += ["the session ended", "a continuation", "Gemini's reply field", "the session id twice"]
STOP_CHANGES += ["a list after the reply", "settings edited"]


@pytest.mark.parametrize("how", STOP_CHANGES)
def test_a_stop_keeper_vouched_for_starts_no_python_and_anything_new_does(
    plugin: Plugin, tmp_path: Path, how: str
) -> None:
    python = plugin.env_python(out="{}")
    done = plugin.run(["hook", "stop"], stdin=stop())
    assert done.returncode == 0 and calls(python)[0] == (
        [win(python), "-I", "-S", "-c", CODE_HOOK, ANY_SITE, "hook", "stop"],
        stop(),
    )
    files = vouch(plugin, python, tmp_path, 'Fixed "it" in C:\\x\nAll tests pass.')
    for _ in range(2):  # the same Stop again: {} and the hook log's line, no python.exe
        done = plugin.run(["hook", "stop"], stdin=stop(background_tasks=[], session_crons={}))
        assert (done.returncode, done.stdout) == (0, b"{}")
    assert len(calls(python)) == 1
    assert files["hooks.stats"].read_text(encoding="utf-8").splitlines()[1:] == ["stop\t0\t0.0"] * 2
    body = _stop_change(files, how)
    plugin.run(["hook", "stop"], stdin=body)
    assert len(calls(python)) == 2 and calls(python)[1][1] == body  # Keeper decides, given the payload whole


@pytest.mark.parametrize("hook", ["stop", "post-tool-use"])
@pytest.mark.parametrize("cwd", ["work", "C:\\nowhere"])
def test_a_hook_whose_cwd_names_no_folder_goes_to_keeper_and_gets_no_record(
    plugin: Plugin, hook: str, cwd: str
) -> None:
    """Keeper starts from its own working directory then (keeper.store.resolve.start_folder), which the
    key does not hold: no record keyed by that cwd may answer for a call run from another project."""
    python = plugin.env_python(out="{}")
    body = stop(cwd=cwd) if hook == "stop" else tool_use(cwd=cwd)
    for run in range(2):
        done = plugin.run(["hook", hook], stdin=body)
        assert done.returncode == 0 and calls(python)[run][1] == body
        assert not {"KEEPER_LAUNCHER_STOP", "KEEPER_COUNTER"} & set(passed(python, run))


@pytest.mark.parametrize("event", ["stop", "post-tool-use"])
def test_a_hook_a_keeper_pip_installed_cannot_import_goes_to_its_keeper_exe_with_the_payload(
    plugin: Plugin, tmp_path: Path, event: str
) -> None:
    """Its python.exe exits 75 (it cannot import Keeper): keeper.exe runs the hook as written, on the
    payload the launcher read for its own answer (given to the first child through a pipe)."""
    keeper, python = installed(plugin, tmp_path, code="75", out="")
    payload = b'{"session_id":"s-1","cwd":"C:\\\\w","hook_event_name":"Stop"}'
    done = plugin.run(["hook", event], path=[keeper.parent], stdin=payload)
    assert done.returncode == 0 and json.loads(done.stdout) == {}
    assert len(calls(python)) == 1
    assert calls(keeper) == [([win(keeper), "hook", event], payload)]


# -- a prompt with nothing to recall answered without Python (issue 43; the record: keeper/hooks/quietprompt.py) --

QUIET = "rename the parser module please"  # none of HELD's terms
HELD = {"fix", "flaki", "checkout", "test", "freez", "clock", "invoic", "export"}  # the gate's terms


def prompt(text: str = QUIET, **fields: object) -> bytes:
    """A UserPromptSubmit payload as Claude Code on Windows writes it: compact, letters as they are."""
    body = {
        "session_id": "s-1",
        "transcript_path": "C:\\Users\\\u00fc\\.claude\\projects\\x\\s-1.jsonl",
        "cwd": "C:\\work\\api \u00fc",
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": text,
        **fields,
    }
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")


@dataclass
class Gate:
    """Keeper's part after a prompt whose gate it kept: the files its record names, and the record."""

    record: Path
    lines: list[bytes]
    files: dict[str, Path]

    def write(self, held: set[str], mode: str = "gate") -> None:
        """The record as ``quietprompt.Launcher.vouch`` writes it, for the ``held`` terms."""
        lines = list(self.lines)
        lines[6] = mode.encode()
        keys = quietprompt.keys_of(("\n" + "\n".join(held) + "\n").encode("utf-8", "surrogatepass"))
        lines[12] = (" " + " ".join(sorted(keys)) + " ").encode()
        self.record.write_bytes(b"".join(line + b"\n" for line in lines))


def gate_record(plugin: Plugin, python: Path, tmp_path: Path) -> Gate:
    """A store with two session files, a settings file and a kept gate, each older than the record that
    names them (the gate file and the newest session file by a twin of their mtime)."""
    store = tmp_path / "store \u00fc"
    sessions = store / "sessions"
    sessions.mkdir(parents=True)
    files = {name: store / name for name in ("s-1.tally", "hooks.stats", "recall-gate", "config.yaml")}
    files.update({name: sessions / name for name in ("2026-11-20_0900.md", "2026-11-21_1000.md")})
    files["s-1.tally"].write_bytes(b"p")
    files["hooks.stats"].write_text("user-prompt-submit\t0\t3.0\n", encoding="utf-8")
    files["config.yaml"].write_text("auto_recall: true\n", encoding="utf-8")
    for name in ("recall-gate", "config.yaml", "2026-11-20_0900.md", "2026-11-21_1000.md"):
        files[name].touch()
        then = time.time() - 60
        os.utime(files[name], (then, then + 0.123))  # Keeper vouches for no file dated to the whole second
    asked = passed(python, len(calls(python)) - 1)
    record = plugin.data / "counter" / "s-1.prompt"
    assert asked["KEEPER_LAUNCHER_PROMPT"] == win(record)
    head = ["keeper-prompt 1", asked["KEEPER_LAUNCHER_KEY"], win(files["s-1.tally"]), win(files["hooks.stats"])]
    head += [win(python), "", "gate", *quietprompt.record_words(entry.OWN_REQUEST), "", win(sessions)]
    head.append("/".join(sorted(p.name for p in sessions.iterdir())))
    head += _held_lines(record, files, store, ("recall-gate", "2026-11-21_1000.md"), "s-1.start")
    gate = Gate(record, [line.encode() for line in head], files)
    gate.write(HELD)
    return gate


RECORD_EDITS: dict[str, Callable[[bytes], bytes]] = {  # records Keeper never writes
    "the record in CRLF": lambda record: record.replace(b"\n", b"\r\n"),
    "a NUL inside a record line": lambda record: record.replace(b"keeper-prompt 1\n", b"keeper-prompt 1\0 x\n", 1),
    "more record after its first MiB": lambda record: record + b"x" * (1 << 20),  # its first MiB alone looks whole
}


def _prompt_change(gate: Gate, plugin: Plugin, how: str) -> tuple[bytes, dict[str, str]]:
    """What makes the vouched-for memory or prompt another one; the payload and variables it then comes with."""
    sessions = gate.files["2026-11-21_1000.md"].parent
    texts = {
        "a prompt that recalls": "the flaky checkout test is back, freezing the clock again?",
        "a digit": QUIET + " 2 times",
        "a date word": QUIET + " yesterday",
        "a slip in a date word": QUIET + " yestrday",
        "a command": "  /keeper:save " + QUIET,
        "Keeper's own request": entry.OWN_REQUEST + QUIET,
        "a letter of another script": QUIET.replace("module", "modul\u00e9"),
        "an escaped backslash": QUIET + " C:\\x",
        "a prompt over 4096 bytes": (QUIET + " ") * 140,
    }
    payloads = {  # a field twice (Python reads the last one), an escape in the prompt
        "the cwd twice": prompt()[:-1] + b',"cwd":"C:\\\\other"}',
        "the session id twice": prompt()[:-1] + b',"session_id":"s-2"}',
        "the event twice": prompt()[:-1] + b',"hook_event_name":"Stop"}',
        "a unicode escape": prompt().replace(b"rename", b"\\u0072ename"),
        "an escaped surrogate pair": prompt().replace(b"rename", b"rename \\ud83d\\ude00"),
    }
    if how in texts:
        return prompt(texts[how]), {}
    if how in payloads:
        return payloads[how], {}
    if how == "a session file added":
        (sessions / "2026-11-22_1100.md").write_text("# Session\n", encoding="utf-8")
    elif how == "a session file removed":
        (sessions / "2026-11-20_0900.md").unlink()
    elif how == "a hidden session file":
        (sessions / ".draft.md").write_text("# Session\n", encoding="utf-8")
    elif how == "a session file renamed by case":
        (sessions / "2026-11-20_0900.md").rename(sessions / "2026-11-20_0900.MD")
    elif how in RECORD_EDITS:
        gate.record.write_bytes(RECORD_EDITS[how](gate.record.read_bytes()))
    elif how == "the newest session file replaced by an older one":
        os.utime(gate.files["2026-11-21_1000.md"], (time.time() - 3600, time.time() - 3600))
    elif how == "the gate kept again":
        gate.files["recall-gate"].touch()
    elif how == "settings edited":
        gate.files["config.yaml"].write_text("auto_recall: no\n", encoding="utf-8")
    elif how == "the tally gone":
        gate.files["s-1.tally"].unlink()
    elif how == "Claude Code's folder":
        return prompt(), {"CLAUDE_CONFIG_DIR": "C:\\claude"}
    elif how == "the prompt twice":
        return prompt()[:-1] + b',"prompt":"what did the flaky checkout test do"}', {}
    elif how == "a number JSON does not allow":
        return prompt().replace(b'"permission_mode":"default"', b'"n":01'), {}
    else:
        assert how == "a control character in a string"
        return prompt().replace(b'"permission_mode":"default"', b'"n":"a\tb"'), {}
    return prompt(), {}


PROMPT_CHANGES = [
    "a prompt that recalls",
    "a digit",
    "a date word",
    "a slip in a date word",
    "a command",
    "Keeper's own request",
    "a letter of another script",
    "an escaped backslash",
    "a prompt over 4096 bytes",
    "a session file added",
    "a session file removed",
    "a hidden session file",
    "the newest session file replaced by an older one",
    "the gate kept again",
    "settings edited",
    "the tally gone",
    "Claude Code's folder",
    "the prompt twice",
    "a number JSON does not allow",
    "a control character in a string",
    "the cwd twice",
    "the session id twice",
    "the event twice",
    "a unicode escape",
    "an escaped surrogate pair",
    "the record in CRLF",
    "a NUL inside a record line",
    "more record after its first MiB",
    "a session file renamed by case",
]


@pytest.mark.parametrize("how", PROMPT_CHANGES)
def test_a_prompt_keeper_vouched_for_starts_no_python_and_anything_new_does(
    plugin: Plugin, tmp_path: Path, how: str
) -> None:
    python = plugin.env_python(out="{}")
    done = plugin.run(["hook", "user-prompt-submit"], stdin=prompt())
    assert done.returncode == 0 and calls(python)[0] == (
        [win(python), "-I", "-S", "-c", CODE_HOOK, ANY_SITE, "hook", "user-prompt-submit"],
        prompt(),
    )
    gate = gate_record(plugin, python, tmp_path)
    for text in (QUIET, "yes", "Please add a parser for the CLI flags"):  # {}, the turn and the hook log's line
        done = plugin.run(["hook", "user-prompt-submit"], stdin=prompt(text))
        assert (done.returncode, done.stdout) == (0, b"{}")
    assert len(calls(python)) == 1
    assert gate.files["s-1.tally"].read_bytes() == b"pppp"
    log = gate.files["hooks.stats"].read_text(encoding="utf-8").splitlines()
    assert log[1:] == ["user-prompt-submit\t0\t0.0"] * 3
    body, extra = _prompt_change(gate, plugin, how)
    plugin.run(["hook", "user-prompt-submit"], stdin=body, extra=extra)
    assert len(calls(python)) == 2 and calls(python)[1][1] == body  # Keeper decides, given the payload whole
    assert not gate.files["s-1.tally"].exists() or gate.files["s-1.tally"].read_bytes() == b"pppp"


def test_with_automatic_recall_off_keeper_exe_answers_every_prompt_but_a_command(
    plugin: Plugin, tmp_path: Path
) -> None:
    python = plugin.env_python(out="{}")
    plugin.run(["hook", "user-prompt-submit"], stdin=prompt())
    gate = gate_record(plugin, python, tmp_path)
    gate.write(HELD, mode="quiet")
    for text in ("the flaky checkout test is back, freezing the clock again?", "what did we do 2 days ago"):
        assert plugin.run(["hook", "user-prompt-submit"], stdin=prompt(text)).stdout == b"{}"
    assert len(calls(python)) == 1
    plugin.run(["hook", "user-prompt-submit"], stdin=prompt("/keeper:save"))
    assert len(calls(python)) == 2
    gate.write(HELD, mode="short")  # only a prompt of fewer words than Keeper tries
    assert plugin.run(["hook", "user-prompt-submit"], stdin=prompt("yes go on")).stdout == b"{}"
    plugin.run(["hook", "user-prompt-submit"], stdin=prompt(QUIET))
    assert len(calls(python)) == 3


@settings(max_examples=40 if LONG else 8, deadline=None, suppress_health_check=list(HealthCheck))
@given(batch=st.lists(prompt_cases(), min_size=1, max_size=6))
@example(batch=[({"hope", "run"}, "hoping to keep running it"), ({"die", "fli"}, "dying birds were flying south")])
@example(batch=[({"abbl", "go"}, "abbilities went somewhere nice"), ({"clock"}, "getUserById and HTTPServer clock")])
def test_keeper_exe_answers_a_prompt_exactly_when_the_bash_launcher_does(
    plugin: Plugin, tmp_path: Path, batch: list[tuple[set[str], str]]
) -> None:
    """Random prompts against random held terms (tests/test_launcher_prompt.py's generator): keeper.exe
    answers one itself exactly when launcher/prompt.bash does, never one Keeper's gate would search for,
    and then appends what bash and Keeper append."""
    python = plugin.data / "env" / KEY / "Scripts" / "python.exe"
    if not python.exists():  # the first example: Keeper's first prompt, which the next ones' record follows
        python = plugin.env_python(out="{}")
        plugin.run(["hook", "user-prompt-submit"], stdin=prompt())
    gate = gate_record(plugin, python, Path(tempfile.mkdtemp(dir=tmp_path)))
    for (held, text), bash_says in zip(batch, launcher_says_quiet(batch)):
        gate.write(held)
        before, tally = len(calls(python)), gate.files["s-1.tally"].read_bytes()
        done = plugin.run(["hook", "user-prompt-submit"], stdin=prompt(text))
        answered = len(calls(python)) == before
        assert answered == bash_says, (text, sorted(held))
        assert not answered or python_says_quiet(held, text), (text, sorted(held))
        assert gate.files["s-1.tally"].read_bytes() == tally + b"p" * answered
        assert done.stdout == b"{}"
    log = gate.files["hooks.stats"].read_text(encoding="utf-8").splitlines()[1:]
    assert log == ["user-prompt-submit\t0\t0.0"] * len(log)
