"""Every test gets its own store, home and working directory, and no leaked Keeper/Claude settings.

Hooks fail open for users (any error is logged and the hook still answers), which would also
hide bugs from tests: a handler that crashed and one that rightly did nothing both reply ``{}``.
So every test fails when Keeper logs an ERROR, in-process or in a subprocess it started, unless
the test says which errors it expects (it proves that those failures are survived).

Being isolated, the tests run in parallel by themselves (pytest-xdist, one worker per core, a file's
tests together on one worker), and everything they keep between runs lives outside the clone: a
clone added as a local marketplace is copied whole into Claude Code's plugin cache.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from keeper.store import log

REPO = Path(__file__).resolve().parent.parent


def _test_cache() -> Path:
    """Where the tests keep what outlives a run (pinned CLIs, hypothesis' examples, screenshots):
    the user's cache folder, read at import, before the fixtures point HOME elsewhere."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("keeper-tests"))


TEST_CACHE = _test_cache()
# the long variants of the property and stress tests: more examples, more rounds (the README names it)
LONG = os.environ.get("KEEPER_LONG_TESTS") == "1"


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """pyproject's ``cache_dir`` stays a known key when the cache is off (``-p no:cacheprovider``, the
    Windows lane), which ``--strict-config`` would otherwise refuse."""
    if not pluginmanager.hasplugin("cacheprovider"):
        parser.addini("cache_dir", "where pytest's cache would be (unused: -p no:cacheprovider)")


def pytest_configure(config: pytest.Config) -> None:
    """Hypothesis keeps its examples under the tests' cache, not in a ``.hypothesis`` in the clone."""
    from hypothesis import configuration

    configuration.set_hypothesis_home_dir(TEST_CACHE / "hypothesis")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """``python -m pytest`` runs on every core when pytest-xdist is installed (``-n 0``: one process).

    A file's tests stay on one worker (``--dist loadfile``): its module fixtures (a Wine prefix, a
    Codex install) are made once and its tests run in their order. A run of a single file stays in
    one process, where workers would only add their start-up, and so does a run given a path that is
    not there, so that pytest says which. The Windows lane has no xdist.
    """
    option = config.option
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return
    if option.numprocesses is None and not option.tx and option.dist == "no":
        files = {str(arg).split("::")[0] for arg in config.args}
        if not all(Path(name).exists() for name in files):
            return  # pytest itself names the one that is not there; xdist's workers only said "no tests ran"
        if len(files) == 1 and Path(files.pop()).is_file():
            return
        option.numprocesses = "auto"
    if option.numprocesses and option.dist == "no":
        option.dist = "loadfile"
        option.loadscopereorder = False  # xdist would put the files of most tests first: the order below


SECONDS = "keeper/seconds-per-file"  # pytest's cache: how long each test file took when it last ran
SPENT: dict[str, float] = {}  # this run's seconds per file, as the reports come in


def file_weight(path: str, slow: bool, seen: dict[str, float]) -> float:
    """How long a test file is expected to take: as long as it last took, else a guess (an end-to-end
    file a minute, one holding a slow test 20 s, any other a second)."""
    return seen.get(path, 60.0 if path.startswith("tests/e2e/") else 20.0 if slow else 1.0)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On xdist's workers the longest files are handed out first, so the run ends on short ones and not
    with one worker alone on a long file while the other waits; each file's tests keep their order."""
    if not hasattr(config, "workerinput"):
        return
    cache = getattr(config, "cache", None)
    seen = cache.get(SECONDS, {}) if cache is not None else {}
    slow = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow")}

    def weight(item: pytest.Item) -> float:
        path = item.nodeid.split("::")[0]
        return -file_weight(path, path in slow, seen)

    items.sort(key=weight)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = report.nodeid.split("::")[0]
    SPENT[path] = SPENT.get(path, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The seconds each file took, kept for the next run's dealing (by the controller alone)."""
    cache = getattr(session.config, "cache", None)
    if cache is not None and SPENT and not hasattr(session.config, "workerinput"):
        cache.set(SECONDS, {**cache.get(SECONDS, {}), **{path: round(s, 2) for path, s in SPENT.items()}})


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith(("KEEPER_", "CLAUDE_", "XDG_", "CODEX_")) or name in (
            "CLAUDECODE",
            "PLUGIN_ROOT",
            "PLUGIN_DATA",
        ):
            monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.setenv("KEEPER_HOME", str(tmp_path / "store"))
    project = tmp_path / "work" / "api"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    return project


def _logged_errors(tmp_path: Path) -> list[str]:
    found = []
    for path in sorted(tmp_path.rglob("keeper.log*")):
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        found += [f"{path.name}: {line}" for line in lines if " ERROR " in line]
    return found


class LoggedErrors:
    """The ERROR lines Keeper logged during a test, and the fragments the test says to expect."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.allowed: list[str] = []

    def allow(self, *fragments: str) -> None:
        """Expect errors holding any of ``fragments`` (e.g. ``"[Errno 28]"``): the test proves they are survived."""
        self.allowed.extend(fragments)

    def unexpected(self, tmp_path: Path) -> list[str]:
        errors = self.seen or _logged_errors(tmp_path)
        return [e for e in errors if not any(fragment in e for fragment in self.allowed)]


@pytest.fixture(autouse=True)
def keeper_errors(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[LoggedErrors]:
    """Fail the test if Keeper logged an ERROR (a swallowed crash) that the test did not expect.

    A test that proves fail-open behaviour says which errors it causes, with
    ``@pytest.mark.fails_open("fragment")`` or ``keeper_errors.allow("fragment")``; any other error
    still fails it, so a handler broken in another way is seen.
    """
    errors = LoggedErrors()
    marker = request.node.get_closest_marker("fails_open")
    if marker is not None:
        assert marker.args, "fails_open needs the fragments of the errors the test expects"
        errors.allow(*marker.args)
    real_write = log.write

    def spy(event: str, level: str, message: str) -> None:
        if level == "ERROR":
            errors.seen.append(f"{event} {message}")
        real_write(event, level, message)

    monkeypatch.setattr(log, "write", spy)
    yield errors
    unexpected = errors.unexpected(tmp_path)
    if unexpected:
        pytest.fail("Keeper logged errors (a crash that fail-open would hide):\n" + "\n".join(unexpected[:10]))


@pytest.fixture
def project_dir(isolated: Path) -> Path:
    """A git project folder named ``api`` (the working directory)."""
    return isolated


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"
