"""keeper/windows.py: which shell Claude Code gives its Bash tool on Windows, a Store Python, and
whether `keeper` resolves there. Plain inputs (environment, PATH, a set of existing files), so the
Windows rules run on any OS."""

from __future__ import annotations

import pytest

from keeper.commands import doctor
from keeper.plugin import windows

PROGRAM_FILES_BASH = "C:\\Program Files\\Git\\bin\\bash.exe"
PLUGIN_BIN = "C:\\Users\\Zoë K\\.claude\\plugins\\cache\\keeper\\keeper\\0.2.0\\bin"


def files(*paths: str) -> windows.Exists:
    folded = {p.lower() for p in paths}
    return lambda path: path.lower() in folded


@pytest.mark.parametrize(
    ("env", "existing", "expected"),
    [
        ({"CLAUDE_CODE_GIT_BASH_PATH": "D:\\Git\\bin\\bash.exe"}, ["D:\\Git\\bin\\bash.exe"], "D:\\Git\\bin\\bash.exe"),
        # not a bash (or missing): Claude Code warns and looks for Git Bash itself
        ({"CLAUDE_CODE_GIT_BASH_PATH": "D:\\Git\\bin\\git.exe"}, ["D:\\Git\\bin\\git.exe"], None),
        ({"CLAUDE_CODE_GIT_BASH_PATH": "D:\\nowhere\\bash.exe"}, [PROGRAM_FILES_BASH], PROGRAM_FILES_BASH),
        ({}, ["C:\\Program Files (x86)\\Git\\bin\\bash.exe"], "C:\\Program Files (x86)\\Git\\bin\\bash.exe"),
        (
            {"Path": "C:\\Windows;D:\\Tools\\Git\\cmd"},
            ["D:\\Tools\\Git\\cmd\\git.exe", "D:\\Tools\\Git\\bin\\bash.exe"],
            "D:\\Tools\\Git\\bin\\bash.exe",
        ),
        ({"PATH": "D:\\Tools\\Git\\cmd"}, ["D:\\Tools\\Git\\cmd\\git.exe"], None),  # git without its bash
        ({}, [], None),
    ],
)
def test_git_bash_is_found_as_claude_code_finds_it(
    env: dict[str, str], existing: list[str], expected: str | None
) -> None:
    assert windows.git_bash(env, files(*existing)) == expected


@pytest.mark.parametrize(
    ("env", "existing", "expected"),
    [
        ({}, [PROGRAM_FILES_BASH], (PROGRAM_FILES_BASH, False)),
        ({}, [], (None, True)),  # no Git Bash: PowerShell
        ({"CLAUDE_CODE_USE_POWERSHELL_TOOL": "1"}, [PROGRAM_FILES_BASH], (PROGRAM_FILES_BASH, True)),
        ({"CLAUDE_CODE_USE_POWERSHELL_TOOL": "0"}, [], (None, False)),  # no shell tool at all
    ],
)
def test_the_shell_tools_claude_code_turns_on(
    env: dict[str, str], existing: list[str], expected: tuple[str | None, bool]
) -> None:
    assert windows.shells(env, files(*existing)) == expected


def test_git_bash_runs_the_plugins_sh_launcher_and_powershell_its_exe() -> None:
    exists = files(f"{PLUGIN_BIN}\\keeper", f"{PLUGIN_BIN}\\keeper.exe")
    pathext = windows.DEFAULT_PATHEXT
    assert windows.keeper_for_shell("bash", ["C:\\Windows"], PLUGIN_BIN, pathext, exists) == f"{PLUGIN_BIN}\\keeper"
    found = windows.keeper_for_shell("powershell", ["C:\\Windows"], PLUGIN_BIN, pathext, exists)
    assert found == f"{PLUGIN_BIN}\\keeper.exe"
    only_script = files(f"{PLUGIN_BIN}\\keeper")  # PowerShell cannot run the extensionless sh script
    assert windows.keeper_for_shell("powershell", [], PLUGIN_BIN, pathext, only_script) is None
    pipx = files("C:\\Users\\z\\.local\\bin\\keeper.exe", f"{PLUGIN_BIN}\\keeper.exe")
    found = windows.keeper_for_shell("powershell", ["C:\\Users\\z\\.local\\bin"], PLUGIN_BIN, pathext, pipx)
    assert found == "C:\\Users\\z\\.local\\bin\\keeper.exe"  # the plugin's bin comes last on PATH


@pytest.mark.parametrize(
    ("python", "store"),
    [
        ("C:\\Users\\z\\AppData\\Local\\Microsoft\\WindowsApps\\python.exe", True),
        (
            "C:\\Program Files\\WindowsApps\\PythonSoftwareFoundation.Python.3.12_3.12.2032.0_x64__qbz5n2kfra8p0"
            "\\python3.12.exe",
            True,
        ),
        ("C:\\Users\\z\\AppData\\Local\\Programs\\Python\\Python312\\python.exe", False),
        ("C:/Python39/python.exe", False),
    ],
)
def test_a_store_python_is_recognised(python: str, store: bool) -> None:
    assert windows.is_store_python(python) is store


def test_findings_without_git_bash_name_powershell_and_the_store_python() -> None:
    store = "C:\\Users\\z\\AppData\\Local\\Microsoft\\WindowsApps\\python.exe"
    found = windows.findings({"PATH": "C:\\Windows"}, files(f"{PLUGIN_BIN}\\keeper.exe"), store, PLUGIN_BIN)
    assert [(name, ok) for name, ok, _, _ in found] == [("shell", True), ("python", False), ("bash-tool", True)]
    assert "PowerShell" in found[0][2] and f"{PLUGIN_BIN}\\keeper.exe" in found[2][2]
    assert "python.org" in found[1][3]


def test_findings_say_when_claude_has_no_shell_or_keeper_does_not_resolve() -> None:
    python = "C:\\Python312\\python.exe"
    none = windows.findings({"CLAUDE_CODE_USE_POWERSHELL_TOOL": "false"}, files(), python, PLUGIN_BIN)
    assert [(name, ok) for name, ok, _, _ in none] == [("shell", False)]
    lost = windows.findings({}, files(PROGRAM_FILES_BASH), python, None)
    assert [(name, ok) for name, ok, _, _ in lost] == [("shell", True), ("bash-tool", False)]
    assert "Git Bash" in lost[1][2]


def test_doctor_shows_them_on_windows_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor.os, "name", "posix")
    assert doctor._windows() == []  # nothing about Windows elsewhere
    monkeypatch.setattr(doctor.os, "name", "nt")
    monkeypatch.setattr(windows, "installed_plugin_bin", lambda: PLUGIN_BIN)
    monkeypatch.setattr(windows.os.path, "exists", files(f"{PLUGIN_BIN}\\keeper.exe"))
    found = doctor._windows()
    assert [c.name for c in found] == ["shell", "bash-tool"] and all(c.ok for c in found)
