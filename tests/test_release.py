"""One version from one place: every spelling of it, the changelog and the package digest agree."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from keeper import __version__
from keeper.hub import build
from keeper.plugin import bootstrap
from tests.conftest import REPO
from tests.releases import RELEASES


def test_every_spelling_of_the_version_is_keepers() -> None:
    plugin = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    marketplace = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    codex = json.loads((REPO / ".codex-plugin" / "plugin.json").read_text(encoding="utf-8"))
    gemini = json.loads((REPO / "gemini-extension.json").read_text(encoding="utf-8"))
    opencode = json.loads((REPO / "opencode" / "package.json").read_text(encoding="utf-8"))
    launcher = (REPO / "bin" / "keeper").read_text(encoding="utf-8")
    windows = (REPO / "launcher" / "keeper.c").read_text(encoding="utf-8")  # bin/keeper.exe is built from it
    assert plugin["version"] == codex["version"] == gemini["version"] == opencode["version"] == __version__
    assert [entry["version"] for entry in marketplace["plugins"]] == [__version__]
    assert f"\nKEEPER_VERSION={__version__}\n" in launcher
    assert f'\n#define KEEPER_VERSION L"{__version__}"\n' in windows
    opencode_js = (REPO / "opencode" / "keeper.js").read_text(encoding="utf-8")
    assert f'\nconst VERSION = "{__version__}"' in opencode_js
    assert bootstrap.plugin_version(str(REPO)) == __version__
    assert build.collect()["version"] == __version__  # the Memory Hub's footer
    done = subprocess.run([sys.executable, "-m", "keeper", "--version"], capture_output=True, text=True, check=True)
    assert done.stdout == f"keeper {__version__}\n"


def test_the_changelog_names_every_release_and_its_top_one_is_this_version() -> None:
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert headings[0] == "Unreleased"
    released = headings[1:]
    assert released[0] == __version__
    assert released == sorted(released, key=lambda v: tuple(int(n) for n in v.split(".")), reverse=True)
    assert set(RELEASES) <= set(released)  # the top one too once released: this code is its Unreleased sequel
    for version, commit in RELEASES.items():  # the commit each release's tag points at
        entry = text.split(f"## [{version}]", 1)[1].split("\n## ", 1)[0]
        if f"Commit `{commit[:7]}`" not in entry:  # 0.3.0's and 0.4.0's entries name none: their release commits
            subject = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%s", commit], capture_output=True)
            assert subject.stdout.decode().startswith(f"Release {version}:"), (version, commit, subject.stderr)


def test_the_committed_digest_is_the_digest_of_the_package() -> None:
    """The launchers key the plugin environment by it: a stale one would run old code."""
    assert bootstrap.recorded_digest(str(REPO)) == bootstrap.package_digest(str(REPO)), (
        "keeper/ changed: run `python keeper/plugin/bootstrap.py --root . --write-digest` and commit the result"
    )


def test_any_change_of_the_code_or_its_dependencies_changes_the_digest(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    root = tmp_path / "plugin"
    shutil.copytree(REPO / "keeper", root / "keeper", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    first = bootstrap.package_digest(str(root))
    (root / "keeper" / "__pycache__").mkdir(exist_ok=True)
    (root / "keeper" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (root / "keeper" / "notes.txt").write_text("not part of the package")
    assert bootstrap.package_digest(str(root)) == first  # what a run leaves behind is not code
    crlf = (root / "keeper" / "text.py").read_bytes().replace(b"\n", b"\r\n")
    (root / "keeper" / "text.py").write_bytes(crlf)
    assert bootstrap.package_digest(str(root)) == first  # a Windows checkout has the same digest
    with open(root / "keeper" / "text.py", "ab") as fh:
        fh.write(b"# changed\r\n")
    changed = bootstrap.package_digest(str(root))
    assert changed != first
    pyproject = (root / "pyproject.toml").read_text().replace('"filelock>=3.12"', '"filelock>=3.13"')
    (root / "pyproject.toml").write_text(pyproject)
    assert bootstrap.package_digest(str(root)) not in (first, changed)
    bootstrap.write_digest(str(root))
    assert bootstrap.env_key(str(root)) == f"{__version__}-{bootstrap.package_digest(str(root))}"
