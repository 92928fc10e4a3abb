"""Run the real Claude Code CLI (pinned) against the local fake Messages API, with this plugin loaded."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.conftest import REPO, TEST_CACHE

CLAUDE_VERSION = "2.1.330"
# the user's pip cache (read before the test fixtures point HOME elsewhere), so a plugin's set-up runs offline
PIP_CACHE = os.environ.get("PIP_CACHE_DIR") or os.path.expanduser(os.path.join("~", ".cache", "pip"))
PLUGIN_ENVS = TEST_CACHE / "plugin-env"  # the one plugin environment the agents' set-ups start from


def _cache() -> Path:
    """Where the pinned Claude Code is installed: outside the repository, because a clone added as a
    local marketplace is copied whole into Claude Code's plugin cache (it honours no ignore file)."""
    explicit = os.environ.get("KEEPER_TEST_CACHE")
    return Path(explicit) if explicit else TEST_CACHE / "claude-code"


CACHE = _cache()


def _version(binary: str) -> str:
    done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60, check=False)
    return done.stdout.strip()


def pinned_cli(name: str, package: str, version: str, cache: Path, variable: str) -> str:
    """A pinned npm CLI: $variable, the cache's copy of that version, or installed there from npm."""
    explicit = os.environ.get(variable)
    if explicit:
        return explicit
    from filelock import FileLock

    cache.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache.with_name(cache.name + ".lock"))):  # parallel workers install it once
        return _installed(name, package, version, cache, variable)


def _installed(name: str, package: str, version: str, cache: Path, variable: str) -> str:
    bin_dir = cache / "node_modules" / ".bin"
    found = shutil.which(name, path=str(bin_dir))
    if found and version in _version(found).split():
        return found
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(
            f"the end-to-end tests need {package} and npm is not on PATH: install Node.js/npm, or point "
            f"{variable} at a {name} binary, or deselect them with -m 'not e2e'"
        )
    try:
        subprocess.run(
            [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", f"{package}@{version}"],
            check=True,
            timeout=600,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        said = exc.stderr if isinstance(exc.stderr, str) else ""
        pytest.fail(
            f"the end-to-end tests need {package}@{version} and `npm install` of it into {cache} failed "
            f"({'timed out' if isinstance(exc, subprocess.TimeoutExpired) else said.strip()[-600:]}): check that "
            f"npm reaches its registry (`npm ping`), or point {variable} at a {name} binary, or deselect them "
            "with -m 'not e2e'"
        )
    found = shutil.which(name, path=str(bin_dir))
    assert found, f"npm installed {package} but no {name} binary is in {bin_dir}"
    return found


def _built_environment() -> Path:
    """A plugin environment built by bootstrap.py once for this Python and these dependencies, kept in the
    tests' cache (under a lock: workers build it once) and brought to this code as an update brings it."""
    import hashlib

    from filelock import FileLock

    from keeper.plugin import bootstrap

    deps = bootstrap.dependencies(str(REPO))
    key = hashlib.sha256("\0".join([sys.version, os.path.realpath(sys.executable), *deps]).encode()).hexdigest()[:12]
    data = PLUGIN_ENVS / key
    data.mkdir(parents=True, exist_ok=True)
    with FileLock(str(data) + ".lock", timeout=900):
        set_up = [sys.executable, "-B", "-I", str(REPO / "keeper" / "plugin" / "bootstrap.py"), "--foreground"]
        env = {**os.environ, "PIP_CACHE_DIR": PIP_CACHE}
        subprocess.run(
            [*set_up, "--root", str(REPO), "--data", str(data)],
            cwd="/",
            env=env,
            capture_output=True,
            check=True,
            timeout=300,
        )
    return data / "env" / bootstrap.env_key(str(REPO))


@pytest.fixture(scope="session")
def claude_bin() -> str:
    """The pinned ``claude`` binary: $KEEPER_TEST_CLAUDE, the repo's cache, or installed there from npm."""
    return pinned_cli("claude", "@anthropic-ai/claude-code", CLAUDE_VERSION, CACHE, "KEEPER_TEST_CLAUDE")


@pytest.fixture(scope="session")
def keeper_bin_dir() -> str:
    """The folder holding the installed ``keeper`` console script, which the hooks run."""
    folder = os.path.dirname(sys.executable)
    if not shutil.which("keeper", path=folder):
        pytest.fail(f"no `keeper` console script next to {sys.executable}: run `pip install -e .` first")
    return folder


def without_keeper(path: str) -> str:
    """PATH without every folder that holds a ``keeper``, for an agent whose own launcher must run Keeper.

    Not only this interpreter's folder: a ``keeper`` anywhere on PATH (an outer virtualenv still
    active in the shell that started the tests, pipx's folder, a pyenv shim) takes the launcher's
    second road, where Keeper's own SessionEnd completes Gemini's hooks and no set-up ever runs."""
    return os.pathsep.join(p for p in path.split(os.pathsep) if p and not shutil.which("keeper", path=p))


class Claude:
    """Runs ``claude -p`` sessions in one throwaway HOME and store, like one user's machine."""

    def __init__(self, binary: str, keeper_dir: str, base: Path) -> None:
        self.binary, self.keeper_dir, self.base = binary, keeper_dir, base
        self.home = base / "home"
        self.store = base / "store"
        self.home.mkdir(parents=True, exist_ok=True)
        self.runs = 0

    def env(self, api_url: str, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC", "KEEPER_"))}
        env.update(
            HOME=str(self.home),
            USERPROFILE=str(self.home),
            ANTHROPIC_BASE_URL=api_url,
            ANTHROPIC_API_KEY="sk-ant-test-key",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            CLAUDE_CODE_MAX_RETRIES="0",
            CLAUDE_CODE_DISABLE_AUTO_MEMORY="1",
            KEEPER_HOME=str(self.store),
            PATH=self.keeper_dir + os.pathsep + env.get("PATH", ""),
        )
        env.update(extra or {})
        return env

    def run(
        self, prompt: str | list[str], cwd: Path, api_url: str, extra_env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """One ``claude -p`` process; a list of prompts is sent as successive user turns (stream-json)."""
        self.runs += 1
        debug = self.base / f"debug-{self.runs}.log"
        args = [self.binary, "-p", "--plugin-dir", str(REPO), "--allowedTools", "Bash", "--debug-file", str(debug)]
        stdin = None
        if isinstance(prompt, str):
            args.insert(2, prompt)
        else:
            args += ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
            turns = [{"type": "user", "message": {"role": "user", "content": text}} for text in prompt]
            stdin = "".join(json.dumps(turn) + "\n" for turn in turns)
        return subprocess.run(
            args,
            cwd=cwd,
            env=self.env(api_url, extra_env),
            capture_output=True,
            text=True,
            timeout=180,
            input=stdin if stdin is not None else "",
            check=False,
        )

    def keeper(self, args: list[str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [shutil.which("keeper", path=self.keeper_dir) or "keeper", *args],
            cwd=cwd,
            env=self.env("http://127.0.0.1:9"),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def memory_of(self, cwd: Path) -> str:
        status = json.loads(self.keeper(["status", "--json"], cwd).stdout)
        path = Path(status["memory"]["path"])
        return path.read_text(encoding="utf-8") if path.exists() else ""


@pytest.fixture
def claude(claude_bin: str, keeper_bin_dir: str, tmp_path: Path) -> Claude:
    return Claude(claude_bin, keeper_bin_dir, tmp_path / "machine")


def set_up_plugin(root: Path, data: Path, env: dict[str, str]) -> None:
    """The set-up the plugin's first hook starts in the background, here waited for: bootstrap.py in the
    agent's data folder, starting from a copy of the environment the tests built once, as an update starts
    from the earlier build's (a second, no pip: a fresh set-up per agent cost ~20 s; test_plugin_install
    and test_gemini's fresh install still set Keeper up from nothing)."""
    (data / "env").mkdir(parents=True, exist_ok=True)
    shutil.copytree(_built_environment(), data / "env" / "earlier-build", symlinks=True)
    bootstrap = [sys.executable, "-B", "-I", str(root / "keeper" / "plugin" / "bootstrap.py")]
    subprocess.run(
        [*bootstrap, "--root", str(root), "--data", str(data), "--foreground"],
        cwd="/",
        env={**env, "PIP_CACHE_DIR": PIP_CACHE},
        capture_output=True,
        check=True,
        timeout=300,
    )
    pending = data / "pending"  # the hooks kept meanwhile, run by a process of their own: waited for too
    for _ in range(600):  # at most a minute
        if not pending.is_dir() or not any(pending.iterdir()):
            break
        time.sleep(0.1)
    assert "starting from a copy of" in (data / "setup.log").read_text(encoding="utf-8")
    assert not (data / "env" / "earlier-build").exists()  # tidied away once the new one worked


def claude_installed(claude: Claude) -> Claude:
    """Claude Code with Keeper installed as the README says (marketplace add, plugin install) and set up."""
    for args in (["plugin", "marketplace", "add", str(REPO)], ["plugin", "install", "keeper@keeper"]):
        done = subprocess.run(
            [claude.binary, *args], env=claude.env("http://127.0.0.1:9"), capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stdout + done.stderr
    plugin = next((claude.home / ".claude" / "plugins" / "cache" / "keeper" / "keeper").iterdir())
    set_up_plugin(plugin, claude.home / ".claude" / "plugins" / "data" / "keeper-keeper", claude.env(""))
    return claude


def save_follower(
    request: str, texts_of: Callable[[dict[str, Any]], str], shell: Callable[[str], Any]
) -> Callable[[str], Callable[[dict[str, Any]], Any]]:
    """A scripted model that follows Keeper's save request literally: the command line the latest
    request gave (``request`` matches it, the heredoc's end marker its second group), with the
    session's own values (``body``). ``texts_of`` and ``shell`` are the fake API's own."""
    pattern = re.compile(request, re.MULTILINE)

    def follows(body: str) -> Callable[[dict[str, Any]], Any]:
        def turn(sent: dict[str, Any]) -> Any:
            asked = pattern.findall(texts_of(sent))
            assert asked, "no save request reached the model"
            command, end = asked[-1]
            return shell(f"{command}\n{body}\n{end}")

        return turn

    return follows


CLAUDE_SAVE = """keeper save <<'KEEPER'
summary: Planned refunds
decisions:
  - Refunds go back to the original card
KEEPER"""


def claude_takes_over(claude: Claude, project: Path, agent: str, decision: str) -> None:
    """Claude Code in the same store: its session is shown ``decision``, which ``agent`` saved, and it
    saves one of its own (refunds go back to the original card) for the agent's next session."""
    from tests.e2e.fakeapi import FakeAPI, bash, text, texts_of

    with FakeAPI([bash(CLAUDE_SAVE), text("Noted.")]) as api:
        done = claude.run(f"what did {agent} decide about checkout?", project, api.url)
    assert done.returncode == 0, done.stderr
    assert decision in texts_of(api.requests[0])


def keeper_errors(store: Path) -> list[str]:
    """The ERROR lines Keeper logged in ``store`` (its hooks fail open: a test reads the log)."""
    logs = sorted((store / "logs").glob("*.log"))
    return [line for log in logs for line in log.read_text(encoding="utf-8").splitlines() if " ERROR " in line]


def git_project(base: Path, *parts: str) -> Path:
    folder = base.joinpath(*parts)
    (folder / ".git").mkdir(parents=True)
    return folder


# -- Codex CLI ---------------------------------------------------------------------------------

CODEX_VERSION = "0.169.0"
CODEX_CACHE = CACHE.parent / "codex"  # beside Claude Code's, outside the repository for the same reason


@pytest.fixture(scope="session")
def codex_bin() -> str:
    """The pinned ``codex`` binary: $KEEPER_TEST_CODEX, the cache, or installed there from npm."""
    return pinned_cli("codex", "@openai/codex", CODEX_VERSION, CODEX_CACHE, "KEEPER_TEST_CODEX")


class Codex:
    """Runs ``codex exec`` sessions with Keeper installed as a Codex user installs it, in one HOME and store.

    The sandbox is Codex's ``workspace-write`` with Keeper's store added to its writable roots, the
    one line docs/codex.md asks a Codex user to add, so the model's ``keeper save`` can write.
    """

    def __init__(self, binary: str, keeper_dir: str, home: Path, store: Path) -> None:
        self.binary, self.keeper_dir, self.home, self.store = binary, keeper_dir, home, store
        self.codex_home = home / ".codex"
        self.fresh: tuple[list[dict[str, Any]], str] = ([], "")  # hooks/list and keeper doctor right after install
        self.codex_home.mkdir(parents=True, exist_ok=True)
        config = self.codex_home / "config.toml"
        if not config.exists():
            roots = json.dumps([str(store)])
            config.write_text(
                f'sandbox_mode = "workspace-write"\n\n[sandbox_workspace_write]\nwritable_roots = {roots}\n'
            )
        store.mkdir(parents=True, exist_ok=True)  # a writable root must exist for Codex's sandbox to start

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CODEX", "OPENAI", "KEEPER_"))}
        env.update(
            HOME=str(self.home),
            CODEX_HOME=str(self.codex_home),
            FAKE_API_KEY="test-key",
            KEEPER_HOME=str(self.store),
            PATH=self.keeper_dir + os.pathsep + env.get("PATH", ""),
        )
        env.update(extra or {})
        return env

    def installed(self) -> Codex:
        """Keeper installed as the README says and set up as its first session sets it up."""
        self.install()
        plugin = next((self.codex_home / "plugins" / "cache" / "keeper" / "keeper").iterdir())
        set_up_plugin(plugin, self.codex_home / "plugins" / "data" / "keeper-keeper", self.env())
        return self

    def cli(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [self.binary, *args], cwd=cwd, env=self.env(), capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, f"codex {' '.join(args)}: {done.stderr}"
        return done

    def install(self, marketplace: Path = REPO) -> None:
        """``codex plugin marketplace add`` and ``codex plugin add``, the two lines of the README."""
        self.cli("plugin", "marketplace", "add", str(marketplace))
        self.cli("plugin", "add", "keeper@keeper")

    def hooks(self, cwd: Path) -> list[dict[str, Any]]:
        """Every hook Codex finds for ``cwd``, from its app-server's ``hooks/list`` (what /hooks shows)."""
        calls = [
            {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "keeper-tests", "version": "0"}}},
            {"method": "initialized"},
            {"id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
        ]
        server = subprocess.Popen(
            [self.binary, "app-server"],
            cwd=cwd,
            env=self.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert server.stdin is not None and server.stdout is not None
            server.stdin.write("".join(json.dumps(c) + "\n" for c in calls))
            server.stdin.flush()
            for line in server.stdout:
                reply = json.loads(line)
                if reply.get("id") == 2:
                    return [hook for entry in reply["result"]["data"] for hook in entry.get("hooks", [])]
        finally:
            server.kill()
            server.wait(timeout=10)
        raise AssertionError("codex app-server gave no answer to hooks/list")

    def trust(self, cwd: Path) -> list[str]:
        """Trust every hook not trusted yet, writing the ``hooks.state`` tables /hooks writes; the keys."""
        config = self.codex_home / "config.toml"
        tables, keys = [], []
        for hook in self.hooks(cwd):
            if hook["trustStatus"] == "trusted":
                continue
            hook_hash, _, content_hash = hook["currentHash"].partition("/")  # plugins: hook/plugin content
            table = f"\n[hooks.state.{json.dumps(hook['key'])}]\ntrusted_hash = {json.dumps(hook_hash)}\n"
            if content_hash:
                table += f"trusted_content_hash = {json.dumps(content_hash)}\n"
            tables.append(table)
            keys.append(hook["key"])
        with config.open("a", encoding="utf-8") as fh:
            fh.writelines(tables)
        return keys

    def run(
        self, prompt: str, cwd: Path, api_url: str, extra_env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """One ``codex exec`` against the fake Responses API at ``api_url``."""
        provider = (
            f'{{name="fake", base_url="{api_url}", wire_api="responses", env_key="FAKE_API_KEY", '
            "request_max_retries=0, stream_max_retries=0}"
        )
        args = [self.binary, "exec", "--skip-git-repo-check", "-m", "gpt-5.5"]
        args += ["-c", 'model_provider="fake"', "-c", f"model_providers.fake={provider}", prompt]
        return subprocess.run(
            args,
            cwd=cwd,
            env=self.env(extra_env),
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            check=False,
        )


# -- Gemini CLI --------------------------------------------------------------------------------

GEMINI_VERSION = "0.61.0"
GEMINI_CACHE = CACHE.parent / "gemini"  # beside Claude Code's, outside the repository for the same reason


@pytest.fixture(scope="session")
def gemini_bin() -> str:
    """The pinned ``gemini`` binary: $KEEPER_TEST_GEMINI, the cache, or installed there from npm."""
    return pinned_cli("gemini", "@google/gemini-cli", GEMINI_VERSION, GEMINI_CACHE, "KEEPER_TEST_GEMINI")


class Gemini:
    """Runs ``gemini -p`` sessions with Keeper installed as a Gemini user installs it, in one HOME and store.

    ``security.auth.selectedType`` is the one setting the offline runs need: with only an API key and
    ``GOOGLE_GEMINI_BASE_URL``, 0.61.0's headless mode refuses the auth type the base URL implies.
    """

    def __init__(self, binary: str, home: Path, store: Path) -> None:
        self.binary, self.home, self.store = binary, home, store
        self.gemini_home = home / ".gemini"
        self.gemini_home.mkdir(parents=True, exist_ok=True)
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
        (self.gemini_home / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        self.extension = self.gemini_home / "extensions" / "keeper"

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        drop = ("CLAUDE", "CODEX", "GEMINI", "GOOGLE", "KEEPER_")
        env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
        env.update(HOME=str(self.home), GEMINI_API_KEY="test-key", KEEPER_HOME=str(self.store))
        env["PATH"] = without_keeper(env.get("PATH", ""))  # the extension's own launcher runs it
        env.update(extra or {})
        return env

    def install(self, source: Path = REPO) -> subprocess.CompletedProcess[str]:
        """``gemini extensions install SOURCE --consent``, the README's line (a local folder asks to be
        trusted first; a user answers yes, the test says so with GEMINI_CLI_TRUST_WORKSPACE)."""
        done = subprocess.run(
            [self.binary, "extensions", "install", str(source), "--consent"],
            cwd=self.home,
            env=self.env({"GEMINI_CLI_TRUST_WORKSPACE": "true"}),
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done

    def installed(self) -> Gemini:
        """Keeper installed as the README says and set up as its first session's end sets it up (in the
        background, the set-up's first step completing the extension's hooks; here waited for)."""
        self.install()
        set_up_plugin(self.extension, self.gemini_home / "keeper", self.env())
        return self

    def run(
        self, prompt: str, cwd: Path, api_url: str, extra_env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """One ``gemini -p`` against the fake Gemini API at ``api_url``."""
        env = self.env({"GOOGLE_GEMINI_BASE_URL": api_url, **(extra_env or {})})
        return subprocess.run(
            [self.binary, "-p", prompt, "--yolo", "--skip-trust"],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
            check=False,
        )


# -- OpenCode ----------------------------------------------------------------------------------

OPENCODE_VERSION = "1.18.33"
OPENCODE_CACHE = CACHE.parent / "opencode"
OPENCODE_PLUGIN_API = CACHE.parent / "opencode-plugin"  # @opencode-ai/plugin, which OpenCode installs for plugins


@pytest.fixture(scope="session")
def opencode_bin() -> str:
    """The pinned ``opencode`` binary: $KEEPER_TEST_OPENCODE, the cache, or installed there from npm."""
    return pinned_cli("opencode", "opencode-ai", OPENCODE_VERSION, OPENCODE_CACHE, "KEEPER_TEST_OPENCODE")


def _locked_install(cache: Path, install: Callable[[], str]) -> str:
    """``install()`` under a lock file beside the cache: two test workers never run npm into it at once."""
    import filelock

    cache.parent.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(cache) + ".lock", timeout=900):
        return install()


def _plugin_api() -> Path:
    """``@opencode-ai/plugin`` at OpenCode's version, installed once into the test cache.

    OpenCode installs it into a config folder that holds a plugin before it starts, and offline
    waits ~70 s for that to fail; a user's machine does it once, online. The tests give it ready,
    node_modules, package.json and npm's package-lock.json (which OpenCode takes as installed).
    """

    def install() -> str:
        found = OPENCODE_PLUGIN_API / "node_modules" / "@opencode-ai" / "plugin" / "package.json"
        ready = found.exists() and (OPENCODE_PLUGIN_API / "package-lock.json").exists()
        if not ready or json.loads(found.read_text(encoding="utf-8")).get("version") != OPENCODE_VERSION:
            npm = shutil.which("npm") or "npm"
            package = f"@opencode-ai/plugin@{OPENCODE_VERSION}"
            args = [npm, "install", "--prefix", str(OPENCODE_PLUGIN_API), "--no-audit", "--no-fund", package]
            subprocess.run(args, check=True, timeout=600, capture_output=True)
        return str(OPENCODE_PLUGIN_API)

    return Path(_locked_install(OPENCODE_PLUGIN_API, install))


class OpenCode:
    """Runs ``opencode run`` sessions with Keeper's plugin installed as a user installs it, in one HOME and store."""

    def __init__(self, binary: str, home: Path, store: Path) -> None:
        self.binary, self.home, self.store = binary, home, store
        self.config = home / ".config" / "opencode"
        self.data = home / ".local" / "share" / "opencode" / "keeper"  # where the plugin sets Keeper up
        self.config.mkdir(parents=True, exist_ok=True)
        api = _plugin_api()
        shutil.copytree(api / "node_modules", self.config / "node_modules", dirs_exist_ok=True)
        for name in ("package.json", "package-lock.json"):  # without the lock, OpenCode's first run installs
            shutil.copy2(api / name, self.config / name)  # it all again: ~35 s at each new HOME

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        drop = ("CLAUDE", "CODEX", "GEMINI", "OPENCODE", "OPENAI", "KEEPER_", "XDG_")
        env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
            OPENCODE_DISABLE_MODELS_FETCH="1",
            OPENCODE_DISABLE_AUTOUPDATE="1",
            OPENCODE_DISABLE_LSP_DOWNLOAD="1",
            OPENCODE_DISABLE_SHARE="1",
            KEEPER_HOME=str(self.store),
        )
        env["PATH"] = without_keeper(env.get("PATH", ""))  # the plugin's launcher runs it
        env.update(extra or {})
        return env

    def install(self, plugin: Path = REPO / "opencode") -> None:
        """``opencode plugin <folder> -g``, the README's line."""
        done = subprocess.run(
            [self.binary, "plugin", str(plugin), "-g"],
            cwd=self.home,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr

    def installed(self) -> OpenCode:
        """Keeper's plugin installed as the README says and set up as its first hook's launcher sets it up."""
        self.install()
        set_up_plugin(REPO, self.data, self.env())
        return self

    def run(
        self, prompt: str, cwd: Path, api_url: str, extra_env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """One ``opencode run`` against the fake Chat Completions API at ``api_url``."""
        model = {"name": "Fake model", "tool_call": True, "limit": {"context": 100000, "output": 4096}}
        provider = {"npm": "@ai-sdk/openai-compatible", "name": "Fake", "options": {"baseURL": api_url, "apiKey": "x"}}
        config = {
            "model": "fake/fake-model",
            "small_model": "fake/fake-model",
            "autoupdate": False,
            "share": "disabled",
        }
        config["provider"] = {"fake": {**provider, "models": {"fake-model": model}}}
        (self.config / "opencode.json").write_text(json.dumps(config), encoding="utf-8")
        return subprocess.run(
            [self.binary, "run", prompt],
            cwd=cwd,
            env=self.env({"PWD": str(cwd), **(extra_env or {})}),  # OpenCode takes its folder from PWD
            capture_output=True,
            text=True,
            timeout=240,
            stdin=subprocess.DEVNULL,
            check=False,
        )
