"""bin/keeper, the launcher a plugin-only install runs: which Keeper it starts, and what it answers
while Keeper sets itself up. Runs the real script under /bin/sh with a controlled PATH."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from keeper.plugin import bootstrap
from tests.conftest import REPO
from tests.releases import DEPENDENCIES, PACKAGES, pip_installed

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the POSIX launcher; Windows runs it under Git Bash")
LAUNCHER = REPO / "bin" / "keeper"
SYSTEM_PATH = os.pathsep.join(p for p in ("/usr/bin", "/bin") if os.path.isdir(p))


def fake_program(folder: Path, name: str, body: str) -> Path:
    """A stand-in executable that records how it was called into ``calls.log`` beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f'#!/bin/sh\necho "{name} $*" >> "{folder}/calls.log"\n{body}\n', encoding="utf-8")
    path.chmod(0o755)
    return path


def ready_env(data: Path, key: str = "") -> Path:
    """The environment folder the set-up makes for this code, marked finished."""
    env = data / "env" / (key or bootstrap.env_key(str(REPO)))
    env.mkdir(parents=True, exist_ok=True)
    (env / bootstrap.READY).write_text(json.dumps({"version": bootstrap.plugin_version(str(REPO))}))
    return env


CLI = "try: from keeper.cli import main\nexcept ImportError: raise SystemExit(75)\nraise SystemExit(main())"
HOOK = "try: from keeper.hooks.entry import main\nexcept ImportError: raise SystemExit(75)\nmain(sys.argv[2:])"
ADD_SITE = "import sys; sys.path.append(sys.argv.pop(1))\n"


def run(args: list[str], env: dict[str, str], stdin: str = "{}") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LAUNCHER), *args], input=stdin, env=env, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture
def base_env(tmp_path: Path) -> dict[str, str]:
    data = tmp_path / "plugin-data"
    data.mkdir()
    return {
        "HOME": str(tmp_path / "home"),
        "PATH": str(tmp_path / "nothing"),
        "CLAUDE_PLUGIN_ROOT": str(REPO),
        "CLAUDE_PLUGIN_DATA": str(data),
    }


def test_a_ready_environment_is_started_isolated(tmp_path: Path, base_env: dict[str, str]) -> None:
    env_bin = ready_env(Path(base_env["CLAUDE_PLUGIN_DATA"])) / "bin"
    fake_program(env_bin, "python", 'echo \'{"from": "plugin env"}\'')
    other = fake_program(tmp_path / "elsewhere", "keeper", 'echo \'{"from": "path"}\'')
    done = run(["hook", "stop"], {**base_env, "PATH": f"{other.parent}:{SYSTEM_PATH}"})
    assert json.loads(done.stdout) == {"from": "plugin env"}
    expected = f"python -I -c {CLI} hook stop\n"
    assert (env_bin / "calls.log").read_text() == expected  # -I: a repository's own keeper/ cannot shadow Keeper


def test_the_environment_runs_without_the_site_module_given_its_packages(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    env = ready_env(Path(base_env["CLAUDE_PLUGIN_DATA"]))
    fake_program(env / "bin", "python", 'echo \'{"from": "plugin env"}\'')
    site = env / "lib" / "python3.11" / "site-packages"
    (site / "keeper").mkdir(parents=True)
    done = run(["hook", "stop"], base_env)
    assert json.loads(done.stdout) == {"from": "plugin env"}
    bare = ADD_SITE + HOOK
    assert (env / "bin" / "calls.log").read_text() == f"python -I -S -c {bare} {site} hook stop\n"  # -S: ~1.5 ms a hook
    run(["recall", "x"], base_env)
    command = ADD_SITE + CLI
    assert (env / "bin" / "calls.log").read_text().endswith(f"python -I -S -c {command} {site} recall x\n")


def test_without_the_site_module_keeper_runs_and_knows_its_environment(tmp_path: Path) -> None:
    site = tmp_path / "env" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "keeper").symlink_to(REPO / "keeper")
    (tmp_path / "env" / "keeper-env.json").write_text("{}")
    (tmp_path / "env" / "bin").mkdir()
    (tmp_path / "env" / "bin" / "python").symlink_to(sys.executable)
    bare = "import sys; sys.path.append(sys.argv.pop(1)); from keeper.cli import main; raise SystemExit(main())"
    done = subprocess.run(
        [str(tmp_path / "env" / "bin" / "python"), "-I", "-S", "-c", bare, str(site), "status", "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert json.loads(done.stdout)["running"]["plugin_environment"] is True


def test_a_keeper_on_path_is_honoured_while_there_is_no_environment(tmp_path: Path, base_env: dict[str, str]) -> None:
    other = fake_program(tmp_path / "pipx-bin", "keeper", "echo '{}'")
    done = run(["save", "--summary", "x"], {**base_env, "PATH": f"{LAUNCHER.parent}:{other.parent}:{SYSTEM_PATH}"})
    assert done.returncode == 0
    assert (other.parent / "calls.log").read_text() == "keeper save --summary x\n"  # itself skipped, no loop


def c_string(name: str) -> str:
    """A string constant of launcher/keeper.c, its adjacent literals joined."""
    source = (REPO / "launcher" / "keeper.c").read_text(encoding="utf-8")
    found = re.search(name + r'\[\] =((?:\s*"(?:[^"\\]|\\.)*")+)\s*;', source)
    assert found, name
    return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', found.group(1))).replace('\\"', '"')


def test_while_setting_up_a_hook_answers_at_once_and_setup_starts_once(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    tools = tmp_path / "tools"
    fake_program(
        tools, "python3", 'case "$*" in *bootstrap.py*) sleep 2 ;; esac'
    )  # answers the version check, then is slow
    env = {**base_env, "PATH": f"{tools}:{SYSTEM_PATH}"}
    started = time.monotonic()
    first = run(["hook", "session-start"], env)
    assert time.monotonic() - started < 1.5  # the set-up runs in the background
    said = json.loads(first.stdout)["systemMessage"]
    # it saves this very session once set up, the tool uses made meanwhile included (0.4.0 said "from your
    # next session on", then asked for a save; tests/test_first_session.py holds what it does)
    assert (
        "setting itself up" in said and "saves all the work of this session, what was done meanwhile included" in said
    )
    assert said == json.loads(c_string("MSG_SETTING_UP"))["systemMessage"]  # the Windows launcher's words
    Path(base_env["CLAUDE_PLUGIN_DATA"], "setup.lock").mkdir()  # as the running set-up holds it
    assert json.loads(run(["hook", "post-tool-use"], env).stdout) == {}
    time.sleep(0.3)
    calls = [c for c in (tools / "calls.log").read_text().splitlines() if "bootstrap.py" in c]
    assert (
        len(calls) == 1 and calls[0].startswith("python3 -B -I ") and "/keeper/plugin/bootstrap.py --root " in calls[0]
    )


def test_a_failed_setup_is_shown_at_session_start(tmp_path: Path, base_env: dict[str, str]) -> None:
    fake_program(tmp_path / "tools", "python3", "true")
    reply = {"systemMessage": "Keeper could not set itself up: pip failed. It tries again at the next session start"}
    Path(base_env["CLAUDE_PLUGIN_DATA"], "setup-failed.json").write_text(json.dumps(reply) + "\n")
    done = run(["hook", "session-start"], {**base_env, "PATH": f"{tmp_path / 'tools'}:{SYSTEM_PATH}"})
    assert json.loads(done.stdout) == reply


@pytest.mark.parametrize("event", ["session-start", "post-tool-use"])
def test_the_windows_store_stub_is_not_taken_for_python(tmp_path: Path, base_env: dict[str, str], event: str) -> None:
    stub = fake_program(
        tmp_path / "WindowsApps",
        "python3",
        "echo 'Python was not found; run without arguments to install from the Microsoft Store'; exit 9009",
    )
    done = run(["hook", event], {**base_env, "PATH": str(stub.parent)})
    reply = json.loads(done.stdout)
    assert done.returncode == 0 and not (stub.parent / "calls.log").exists()  # never even run
    if event == "session-start":
        assert "needs Python 3.9 or newer" in reply["systemMessage"]
    else:
        assert reply == {}


def test_a_command_without_python_says_what_to_do(base_env: dict[str, str]) -> None:
    done = run(["status"], base_env)
    assert done.returncode == 1 and done.stderr.startswith("keeper: error: Keeper needs Python 3.9")


def test_a_python_older_than_3_9_is_passed_over(tmp_path: Path, base_env: dict[str, str]) -> None:
    old = fake_program(tmp_path / "old", "python3", "exit 1")  # fails the version check, as Python 3.6 would
    newer = fake_program(tmp_path / "new", "python3.11", "true")
    run(["hook", "session-start"], {**base_env, "PATH": f"{old.parent}:{newer.parent}:{SYSTEM_PATH}"})
    time.sleep(0.3)
    assert "bootstrap.py" not in (old.parent / "calls.log").read_text()
    assert "bootstrap.py" in (newer.parent / "calls.log").read_text()


def test_the_bash_tool_finds_the_environment_without_claude_plugin_data(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    data = Path(base_env["HOME"]) / ".claude" / "plugins" / "data" / "keeper-keeper"
    fake_program(ready_env(data) / "bin", "python", "echo saved")
    env = {k: v for k, v in base_env.items() if k not in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PLUGIN_ROOT")}
    done = run(["save"], {**env, "PATH": SYSTEM_PATH}, stdin="summary: x\n")
    assert done.stdout == "saved\n"


@pytest.mark.skipif(shutil.which("dash") is None, reason="dash is the strictest POSIX sh at hand")
def test_the_launcher_is_plain_posix_sh() -> None:
    assert subprocess.run(["dash", "-n", str(LAUNCHER)], check=False).returncode == 0


def planted_repo(folder: Path, marker: Path) -> Path:
    """A repository holding a `python3`, `uv`, `keeper`, `nohup` and `setsid` of its own, at its top and in
    ``bin/``: run, each leaves ``marker`` behind."""
    for where in (folder, folder / "bin"):
        where.mkdir(parents=True, exist_ok=True)
        for program in ("python3", "python", "uv", "keeper", "nohup", "setsid"):
            (where / program).write_text(f'#!/bin/sh\necho "{where.name}/{program} ran" >> "{marker}"\n')
            (where / program).chmod(0o755)
    return folder


@pytest.mark.parametrize("path_shape", ["{tools}:", ":{tools}", ".:{tools}", "bin:{tools}"])
@pytest.mark.parametrize("args", [["hook", "session-start"], ["save", "--summary", "x"]])
def test_nothing_in_the_project_folder_runs_through_an_empty_or_relative_path_entry(
    tmp_path: Path, base_env: dict[str, str], path_shape: str, args: list[str]
) -> None:
    marker = tmp_path / "ran-from-the-repository"
    repo = planted_repo(tmp_path / "repo", marker)
    tools = tmp_path / "tools"
    fake_program(tools, "python3", 'echo "cwd=$PWD" >> "$(dirname "$0")/calls.log"')
    for program in ("nohup", "dirname"):
        (tools / program).symlink_to(shutil.which(program) or f"/usr/bin/{program}")
    env = {**base_env, "PATH": path_shape.format(tools=tools)}
    done = subprocess.run(
        [str(LAUNCHER), *args], input="{}", env=env, cwd=repo, capture_output=True, text=True, timeout=60, check=False
    )
    log, deadline = tools / "calls.log", time.monotonic() + 30  # a hook starts the set-up in the background
    while (
        "bootstrap.py" not in (log.read_text() if log.exists() else "").rsplit("cwd=", 1)[0]
        and time.monotonic() < deadline
    ):
        time.sleep(0.05)
    assert not marker.exists(), marker.read_text()
    calls = log.read_text().splitlines()
    setup = [i for i, c in enumerate(calls) if "bootstrap.py" in c]
    assert setup and calls[setup[0] + 1] == "cwd=/", calls  # the set-up starts from a neutral folder
    if args[0] == "hook":
        assert "setting itself up" in json.loads(done.stdout)["systemMessage"]


@pytest.mark.skipif(shutil.which("setsid") is None, reason="no setsid here (macOS): the set-up starts under nohup")
def test_the_set_up_outlives_the_hooks_process_group(tmp_path: Path, base_env: dict[str, str]) -> None:
    """Gemini CLI ends a hook's whole process group as its session ends: the set-up a hook started in
    the background runs in a session of its own and goes on."""
    tools, go = tmp_path / "tools", tmp_path / "go"
    fake_program(  # answers the version check; as the set-up, waits for the test's word, then says it went on
        tools,
        "python3",
        f'case "$*" in *bootstrap.py*) while [ ! -f "{go}" ]; do sleep 0.05; done; echo went on >> "{tools}/calls.log" ;; esac',
    )
    env = {**base_env, "PATH": f"{tools}:{SYSTEM_PATH}"}
    hook = subprocess.Popen(
        [str(LAUNCHER), "hook", "session-start"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        env=env,
        start_new_session=True,  # the hook's own process group, as an agent starts it
    )
    assert "setting itself up" in json.loads(hook.communicate(timeout=60)[0])["systemMessage"]
    log, deadline = tools / "calls.log", time.monotonic() + 30
    while "bootstrap.py" not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        os.killpg(hook.pid, signal.SIGKILL)  # the agent ends the hook's process group
    except ProcessLookupError:
        pass  # nothing of the hook's is left in it
    go.touch()
    while "went on" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "went on" in log.read_text()


def test_the_launchers_spell_the_environment_layout_the_set_up_names() -> None:
    """bootstrap.py names the plugin environment's layout once; the sh and C launchers cannot import
    it, so they are held to the same spelling here."""
    from keeper.plugin import bootstrap as layout

    sh = (REPO / "bin" / "keeper").read_text(encoding="utf-8")
    c = (REPO / "launcher" / "keeper.c").read_text(encoding="utf-8")
    assert f"/{layout.ENV_DIR}/$key/{'/'.join(layout.POSIX_PYTHON)}" in sh
    assert f"/{layout.ENV_DIR}/$key/{'/'.join(layout.WINDOWS_PYTHON)}" in sh
    assert f'"$root/{"/".join(layout.DIGEST_FILE)}"' in sh and f'"$env_dir/{layout.READY}"' in sh
    assert f"raise SystemExit({layout.NO_KEEPER})" in sh and f'"$ran" -eq {layout.NO_KEEPER}' in sh
    assert f'"$env_dir/{"/".join(layout.WINDOWS_SITE)}' in sh
    assert f'"$data/{layout.SETUP_LOCK}"' in sh and f'"$data/{layout.SETUP_FAILED}"' in sh
    assert f'L"\\\\{layout.ENV_DIR}\\\\"' in c
    assert "\\\\".join(layout.WINDOWS_PYTHON) in c and "\\\\".join(layout.WINDOWS_SITE) in c
    assert f'L"{layout.SETUP_LOCK}"' in c and f'L"{layout.SETUP_FAILED}"' in c


def test_an_environment_that_cannot_import_keeper_is_set_up_again_and_the_hook_answers(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    env = ready_env(Path(base_env["CLAUDE_PLUGIN_DATA"]))
    fake_program(env / "bin", "python", "exit 75")  # as Python does when `import keeper.hooks.entry` fails
    tools = tmp_path / "tools"
    fake_program(tools, "python3", "")
    done = run(["hook", "stop"], {**base_env, "PATH": f"{tools}:{SYSTEM_PATH}"})
    assert done.returncode == 0 and json.loads(done.stdout) == {} and done.stderr == ""
    assert not (env / bootstrap.READY).exists()  # no longer taken for finished: the set-up builds it again
    deadline = time.monotonic() + 20
    while "bootstrap.py" not in (tools / "calls.log").read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "--data" in (tools / "calls.log").read_text().splitlines()[-1]


def test_an_environment_of_an_earlier_build_is_never_run(tmp_path: Path, base_env: dict[str, str]) -> None:
    data = Path(base_env["CLAUDE_PLUGIN_DATA"])
    earlier = ready_env(data, key=f"{bootstrap.plugin_version(str(REPO))}-0000000000000000")
    fake_program(earlier / "bin", "python", "echo old code")
    (data / "setup.lock").mkdir()  # a set-up runs: nothing else starts
    done = run(["hook", "stop"], {**base_env, "PATH": SYSTEM_PATH})
    assert json.loads(done.stdout) == {} and not (earlier / "bin" / "calls.log").exists()


def installed_keeper(prefix: Path, python_body: str, layout: tuple[str, ...] = ()) -> Path:
    """A stand-in for a keeper pip, pipx or uv installed: ``<prefix>/bin/keeper`` whose first line names
    the environment's ``python`` (a stand-in that logs its calls) and a site-packages folder holding this
    version of Keeper and its dependencies, or the folders ``layout`` names."""
    python = fake_program(prefix / "bin", "python", python_body)
    site = prefix / "lib" / "python3.11" / "site-packages"
    version = bootstrap.plugin_version(str(REPO))
    for name in layout or ("keeper", f"claude_keeper-{version}.dist-info", *PACKAGES):
        (site / name).mkdir(parents=True)
    script = prefix / "bin" / "keeper"
    script.write_text(f"#!{python}\nimport re\nimport sys\nfrom keeper.__main__ import command\n", encoding="utf-8")
    script.chmod(0o755)
    return script


def test_the_launchers_check_for_every_dependency_pyproject_names() -> None:
    """bin/keeper and keeper.exe run an installed keeper without the site module only where its
    site-packages folder holds every dependency: their lists are pyproject's."""
    declared = (REPO / "pyproject.toml").read_text(encoding="utf-8").split("dependencies = [", 1)[1].split("]", 1)[0]
    names = {re.split(r"[<>=!~ ]", line.strip().strip('",'))[0] for line in declared.splitlines() if line.strip()}
    assert names == set(DEPENDENCIES)
    assert " ".join(PACKAGES) in LAUNCHER.read_text(encoding="utf-8")
    c = (REPO / "launcher" / "keeper.c").read_text(encoding="utf-8").split("run_installed(", 1)[1]
    assert all(f'L"{name}"' in c for name in PACKAGES)


def test_a_hook_through_a_keeper_installed_on_path_runs_on_its_python_as_the_plugins_own_environment(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    """pip's console script runs ``site`` and imports ``re`` before Keeper does (0.75x ``python -c
    pass``): its environment's Python runs the hook as path 1 does, isolated, without the site module.
    A command runs the script as its user installed it."""
    script = installed_keeper(tmp_path / "venv", "echo '{}'")
    (tmp_path / "on-path").mkdir()
    (tmp_path / "on-path" / "keeper").symlink_to(script)  # as pipx and uv link it into ~/.local/bin
    env = {**base_env, "PATH": f"{tmp_path / 'on-path'}:{SYSTEM_PATH}"}
    for args in (["hook", "session-start"], ["hook", "--help"], ["status", "--json"]):
        assert json.loads(run(args, env).stdout) == {}
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    assert (script.parent / "calls.log").read_text() == (
        f"python -I -S -c {ADD_SITE + HOOK} {site} hook session-start\n"
        f"python {tmp_path / 'on-path' / 'keeper'} hook --help\n"
        f"python {tmp_path / 'on-path' / 'keeper'} status --json\n"
    )


DOUBTS = {
    "another version": ("keeper", "claude_keeper-0.0.1.dist-info", *PACKAGES),
    "a dependency elsewhere": ("keeper", "claude_keeper-{version}.dist-info", "yaml", "platformdirs", "rapidfuzz"),
    "keeper elsewhere (editable)": ("claude_keeper-{version}.dist-info", *PACKAGES),
}


@pytest.mark.parametrize("doubt", [*DOUBTS, "two site-packages folders", "a shebang with an argument", "exit 75"])
def test_on_any_doubt_the_installed_keeper_runs_as_its_script_says(
    tmp_path: Path, base_env: dict[str, str], doubt: str
) -> None:
    version = bootstrap.plugin_version(str(REPO))
    layout = tuple(name.format(version=version) for name in DOUBTS.get(doubt, ()))
    script = installed_keeper(tmp_path / "venv", 'case $1 in -I) exit 75 ;; esac; echo "{}"', layout)
    if doubt == "two site-packages folders":
        (tmp_path / "venv" / "lib" / "python3.12" / "site-packages").mkdir(parents=True)
    if doubt == "a shebang with an argument":
        script.write_text(script.read_text().replace("\n", " -E\n", 1))
    done = run(["hook", "stop"], {**base_env, "PATH": f"{script.parent}:{SYSTEM_PATH}"})
    assert done.returncode == 0 and json.loads(done.stdout) == {}
    calls = (script.parent / "calls.log").read_text()
    assert calls.endswith(f"python {'-E ' if 'argument' in doubt else ''}{script} hook stop\n"), calls
    assert calls.startswith("python -I -S -c ") == (doubt == "exit 75"), calls  # 75: it cannot import Keeper


@pytest.mark.slow
@pytest.mark.needs("pip")
def test_a_pip_installed_keeper_answers_the_plugins_hooks_on_its_own_python_isolated(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    """The real thing: pip installs this tree's wheel into a virtualenv; the plugin's launcher, finding
    its ``keeper`` on PATH, runs it isolated (``PYTHON*`` variables have no effect: no import is timed)."""
    venv = pip_installed(tmp_path)
    project = tmp_path / "work" / "shop"
    (project / ".git").mkdir(parents=True)
    env = {**base_env, "PATH": f"{venv / 'bin'}:{SYSTEM_PATH}", "KEEPER_HOME": str(tmp_path / "store")}
    env["PYTHONPROFILEIMPORTTIME"] = "1"  # the console script honours it: stderr names every import
    start = json.dumps({"session_id": "s1", "cwd": str(project), "hook_event_name": "SessionStart"})
    through_launcher = run(["hook", "session-start"], env, stdin=start)
    assert "no memory yet for shop" in json.loads(through_launcher.stdout)["systemMessage"]
    assert through_launcher.stderr == ""
    as_script = subprocess.run(
        [str(venv / "bin" / "keeper"), "hook", "session-start"], input=start, env=env, capture_output=True, text=True
    )
    assert json.loads(as_script.stdout) == json.loads(through_launcher.stdout)
    assert "| re\n" in as_script.stderr  # what pip's script imports before Keeper, that the launcher spares
