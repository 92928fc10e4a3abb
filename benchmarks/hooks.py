"""Hook latency, whole process, as Claude Code runs it, against ``python -c pass``.

By default it times exactly what hooks.json runs after a plugin-only install: its exec form,
``${CLAUDE_PLUGIN_ROOT}/bin/keeper hook <event>`` spawned with no shell, the launcher starting the
environment Keeper set up for itself (built first, in a temporary plugin data folder, by
``keeper/plugin/bootstrap.py``). ``--codex`` times hooks/codex.json's commands as Codex CLI runs
them, ``bash -c '"$PLUGIN_ROOT/bin/keeper" hook <event>'``. ``--shell-form`` times the shell form
hooks.json used before, ``sh -c '"${CLAUDE_PLUGIN_ROOT}/bin/keeper" hook <event>'``, for comparison. ``--keeper PATH`` times a
``keeper`` console script instead (pip, pipx, uv). ``--on-path PATH`` times the pip route as the agents
run it: the plugin's launcher with no environment of its own and that script's folder first on PATH
(``bin/keeper``'s path 2). ``--against ROOT`` also times another checkout
of Keeper (main's, for "before"), through its own plugin environment and on copies of the same
stores, every variant of both interleaved. Every variant is run as a fresh process with its JSON on
stdin, interleaved round by round with the baseline (the same interpreter), so machine noise hits
all alike. Reports per variant the median and p90 of wall time, the median CPU time of the process
tree (user + system: what a loaded machine disturbs least), and both ratios to the baseline.

    python benchmarks/hooks.py [--rounds 30] [--shell-form | --codex | --keeper PATH | --on-path PATH] [--against ROOT]
                               [--json results.json] [--check]

Exit status 1 when a hook fails, or with --check when a ratio exceeds its must-not-exceed bound.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

# (target ratio, must-not-exceed ratio) from the issues; None where no bound was set.
TARGETS = {
    "post-tool-use": (0.5, 1.0),  # counted by the launcher while Keeper's allowance lasts (issue 33)
    "session-start (full memory)": (1.3, 4.0),  # issue 43's budgets, through the plugin launcher
    "session-start (10,000 session files)": (2.0, 4.0),
    "session-start (sync on)": (2.0, 4.0),
    "session-start (300 items, provenance)": (2.0, 4.0),
    "session-start (300 items, one changed)": (2.0, 4.0),
    "session-start (300 items, receipts)": (2.0, 4.0),
    "stop (nothing new)": (1.3, None),
    "user-prompt-submit": (1.1, 4.0),  # a prompt with nothing Keeper could recall
    "user-prompt-submit (recalls)": (1.5, 4.0),
}


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def plugin_command(
    base: str, shell_form: bool = False, codex: bool = False, root: str = REPO
) -> tuple[list[str], str, dict[str, str]]:
    """The hook command of hooks.json (exec form, the former shell form, or as Codex runs it) of the
    checkout ``root``, a plugin data folder set up for it by its own bootstrap, and its Python."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bootstrap", os.path.join(root, "keeper", "plugin", "bootstrap.py"))
    assert spec is not None and spec.loader is not None
    bootstrap = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bootstrap)
    data = os.path.join(base, "plugin-data" if root == REPO else "plugin-data-against")
    if bootstrap.setup(root, data) != 0:
        sys.exit(f"benchmarks/hooks.py: the plugin set-up failed; see {data}/setup.log")
    python = bootstrap.env_python(os.path.join(data, "env", bootstrap.env_key(root)))  # what the hooks run on
    launcher = os.path.join(root, "bin", "keeper")
    command = ["/bin/sh", "-c", f'"{launcher}" hook "$0"'] if shell_form else [launcher, "hook"]
    plugin = {"CLAUDE_PLUGIN_ROOT": root, "CLAUDE_PLUGIN_DATA": data}
    if codex:  # Codex runs hooks/codex.json's command under bash -c and sets PLUGIN_* beside CLAUDE_PLUGIN_*
        return ["/bin/bash", "-c"], python, {**plugin, "PLUGIN_ROOT": root, "PLUGIN_DATA": data}
    return command, python, plugin


def path_route(base: str, script: str, root: str = REPO) -> tuple[list[str], dict[str, str]]:
    """The launcher of the checkout ``root`` with an empty plugin data folder (no environment of its own)
    and ``script``'s folder first on PATH: a ``keeper`` installed with pip, pipx or uv runs every hook."""
    data = os.path.join(base, "path-data" if root == REPO else "path-data-against")
    os.makedirs(data, exist_ok=True)
    search = os.path.dirname(os.path.abspath(script)) + os.pathsep + os.environ.get("PATH", "")
    return [os.path.join(root, "bin", "keeper"), "hook"], {
        "CLAUDE_PLUGIN_ROOT": root,
        "CLAUDE_PLUGIN_DATA": data,
        "PATH": search,
    }


def codex_commands() -> dict[str, str]:
    """hooks/codex.json's shell command for each ``keeper hook`` event."""
    with open(os.path.join(REPO, "hooks", "codex.json"), encoding="utf-8") as fh:
        declared = json.load(fh)["hooks"]
    return {h["command"].rsplit(" ", 1)[1]: h["command"] for groups in declared.values() for h in groups[0]["hooks"]}


def keeper_command(explicit: str) -> tuple[str, str]:
    """The installed ``keeper`` script and the interpreter its shebang names."""
    script = explicit
    if not os.path.exists(script):
        sys.exit(f"benchmarks/hooks.py: no keeper script at {script}")
    python = sys.executable
    try:
        with open(script, "rb") as fh:
            first = fh.readline().decode("utf-8", "replace").strip()
        if first.startswith("#!") and os.path.exists(first[2:].split()[0]):
            python = first[2:].split()[0]
    except OSError:
        pass
    return script, python


def full_memory(project: str, env: dict[str, str]) -> None:
    """Fill memory.md past the default context bound (~9 KB), as a long-lived project would."""
    save = {
        "summary": "Reworked the pricing engine and the checkout flow.",
        "decisions": [f"Decision {i}: module_{i} keeps its own retry budget and logs to audit_{i}" for i in range(90)],
        "state": ["Pricing engine rewritten; checkout wired; refunds next", "CI green on all three OSes"],
        "issues": [f"Issue {i}: flaky test in tests/test_area_{i}.py under load" for i in range(12)],
    }
    subprocess.run(
        [sys.executable, "-m", "keeper", "save", "--project-dir", project],
        input=json.dumps(save).encode(),
        env=env,
        check=True,
        capture_output=True,
    )


def provenance_memory(project: str, env: dict[str, str], count: int = 300) -> None:
    """A project of ``count`` items, each naming a file of the repository and a constant it sets,
    saved by a session whose transcript edited 40 of them: what SessionStart checks for staleness
    (each file's claims; the kept verdicts compare each file's size and time, else its content)."""
    os.makedirs(os.path.join(project, "src"), exist_ok=True)
    for i in range(count):
        with open(os.path.join(project, "src", f"mod_{i}.py"), "w", encoding="utf-8") as fh:
            fh.write(f"X = {i}\n")
    transcript = os.path.join(os.path.dirname(project), "provenance.jsonl")
    with open(transcript, "w", encoding="utf-8") as fh:
        for i in range(40):
            use = {
                "type": "tool_use",
                "id": f"t{i}",
                "name": "Edit",
                "input": {"file_path": os.path.join(project, "src", f"mod_{i}.py")},
            }
            entry = {
                "type": "assistant",
                "timestamp": "2026-11-22T10:00:00Z",
                "message": {"role": "assistant", "content": [use]},
            }
            fh.write(json.dumps(entry) + "\n")
    hook = {"session_id": "bench-provenance", "transcript_path": transcript, "cwd": project, "source": "startup"}
    run_env = {**env, "CLAUDE_PROJECT_DIR": project, "CLAUDE_CODE_SESSION_ID": "bench-provenance"}
    subprocess.run(
        [sys.executable, "-m", "keeper", "hook", "session-start"],
        input=json.dumps(hook).encode(),
        env=run_env,
        check=True,
        capture_output=True,
    )
    save = {"decisions": [f"Decision {i}: src/mod_{i}.py keeps its own retry budget, X = {i}" for i in range(count)]}
    subprocess.run(
        [sys.executable, "-m", "keeper", "save", "--project-dir", project],
        input=json.dumps(save).encode(),
        env=run_env,
        check=True,
        capture_output=True,
    )


def receipts_tally(project: str, env: dict[str, str], used: int = 20, sessions: int = 8) -> None:
    """What ``sessions`` sessions that were shown every item of ``project`` left in its tally
    (``store.loads``), as their Stops record it: the first ``used`` items used now and then, the
    others never (left to recall at the next start)."""
    code = (
        "import sys\n"
        "from keeper.store import identity, loads, provenance\n"
        "project = identity.make_project(identity.find_project_root(sys.argv[1]))\n"
        "with open(project.memory, encoding='utf-8') as fh:\n"
        "    ids = [k for _, k, _, _ in provenance.listed(fh.read())]\n"
        "for n in range(int(sys.argv[3])):\n"
        "    loads.note(project, shown=ids, used=ids[: int(sys.argv[2])] if n % 3 == 0 else [])\n"
    )
    run_env = {**env, "CLAUDE_PROJECT_DIR": project}
    subprocess.run([sys.executable, "-c", code, project, str(used), str(sessions)], env=run_env, check=True)


def store_of(project: str, env: dict[str, str]) -> str:
    """The project's folder in the store."""
    status = subprocess.run(
        [sys.executable, "-m", "keeper", "status", "--json", "--project-dir", project],
        env=env,
        check=True,
        capture_output=True,
    )
    return str(json.loads(status.stdout)["store"])


def past_note(project: str, env: dict[str, str]) -> None:
    """An earlier session's file that automatic recall finds for a prompt about the flaky checkout test."""
    sessions = os.path.join(store_of(project, env), "sessions")
    os.makedirs(sessions, exist_ok=True)
    with open(os.path.join(sessions, "2026-11-20_1000.md"), "w", encoding="utf-8") as fh:
        fh.write(
            "# Session 2026-11-20 10:00 · shop-api\n\n- Session id: old-note\n\n## Saves\n\n### 10:30 save\n\n"
            "Flaky checkout test fixed by freezing the clock in tests/test_checkout.py.\n"
        )


def large_store(project: str, env: dict[str, str], count: int) -> None:
    """A project with ``count`` past sessions: their files and the state each one left behind."""
    store = store_of(project, env)
    sessions, state = os.path.join(store, "sessions"), os.path.join(store, "state", "sessions")
    os.makedirs(sessions, exist_ok=True)
    os.makedirs(state, exist_ok=True)
    for i in range(count):
        day = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}"
        name = f"{day}_{i % 10000:04d}-{i // 10000 + 1}.md"
        with open(os.path.join(sessions, name), "w", encoding="utf-8") as fh:
            fh.write(
                f"# Session {day} 10:00 · big\n\n- Session id: old-{i}\n\n## Saves\n\n### 10:30 save\n\nWork {i}.\n"
            )
        for suffix, text in ((".start", f"{day}T10:00:00\n"), (".end", ""), (".tally", "uuus")):
            with open(os.path.join(state, f"old-{i}{suffix}"), "w", encoding="utf-8") as fh:
                fh.write(text)
        with open(os.path.join(state, f"old-{i}.json"), "w", encoding="utf-8") as fh:
            fh.write(json.dumps({"file": name}))


def touched(path: str, data: bytes) -> bytes:
    """``data``, once ``path`` was just written to (before each run of a variant that needs it)."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("# edited\n")
    return data


def idle_transcript(path: str) -> str:
    """A short transcript that does not grow: what a Stop with nothing new reads."""
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(3):
            fh.write(
                json.dumps(
                    {"type": "user", "timestamp": f"2026-11-22T10:0{i}:00Z", "message": {"content": f"step {i}"}}
                )
            )
            fh.write("\n")
    return path


BEFORE = " [before]"  # a variant run through --against


class AfterStop:
    """A prompt's payload, each run after an untimed Stop of its session that rewrote the session's
    file (through the same launcher, store and environment): a person's next prompt after a turn."""

    def __init__(self, stop: Callable[[], bytes], prompt: bytes, tails: tuple[list[str], list[str]]) -> None:
        self.stop, self.prompt = stop, prompt
        self.stop_tail, self.prompt_tail = tails  # the two commands past the launcher's own words

    def turn(self, command: list[str], env: dict[str, str]) -> bytes:
        """The Stop run, then the prompt's payload."""
        stop = command[: len(command) - len(self.prompt_tail)] + self.stop_tail
        subprocess.run(stop, input=self.stop(), capture_output=True, env=env, check=True)
        return self.prompt


def run_interleaved(
    variants: dict[str, tuple[list[str], object, dict[str, str]]], env: dict[str, str], rounds: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Every variant once a round, in random order: wall times and the CPU times (user + system) of
    each process tree, in ms."""
    times: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for _ in range(rounds):
        random.shuffle(names)
        for name in names:
            command, stdin, extra = variants[name]
            if isinstance(stdin, AfterStop):
                data = stdin.turn(command, {**env, **extra})
            else:
                data = stdin() if callable(stdin) else stdin
            used = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(command, input=data, capture_output=True, env={**env, **extra}, check=False)
            times[name].append((time.perf_counter() - start) * 1000)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append((after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime) * 1000)
            if done.returncode != 0 or (name != "python -c pass" and not done.stdout.startswith(b"{")):
                sys.exit(f"{name} failed: rc={done.returncode} {done.stderr[-400:]!r}")
    return times, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30, help="rounds of every variant (default 30; use >= 20)")
    parser.add_argument("--keeper", help="time this keeper script instead of the plugin's launcher")
    parser.add_argument(
        "--on-path", help="time the plugin's launcher with no environment and this keeper script on PATH"
    )
    parser.add_argument("--shell-form", action="store_true", help="run the launcher under sh -c, as hooks.json did")
    parser.add_argument("--codex", action="store_true", help="run hooks/codex.json's commands as Codex does (bash -c)")
    parser.add_argument("--against", help="also time this checkout of Keeper (with --keeper: this script), interleaved")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--sessions", type=int, default=10_000, help="session files of the large store")
    parser.add_argument("--check", action="store_true", help="exit 1 when a ratio exceeds its bound")
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="keeper-bench-")
    if args.keeper:
        script, python = keeper_command(args.keeper)
        hook, plugin_env = [script, "hook"], {}
    elif args.on_path:
        script, python = keeper_command(args.on_path)
        hook, plugin_env = path_route(base, script)
        script = f"{hook[0]} hook, {script} on PATH"
    else:
        hook, python, plugin_env = plugin_command(base, args.shell_form, args.codex)
        script = "hooks.json's command: " + (hook[2].replace('"$0"', "<event>") if args.shell_form else " ".join(hook))
        script = "hooks/codex.json's commands under bash -c" if args.codex else script
    project = os.path.join(base, "shop-api")
    os.makedirs(os.path.join(project, ".git"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KEEPER_", "CLAUDE_"))}
    env.update(KEEPER_HOME=os.path.join(base, "store"), CLAUDE_PROJECT_DIR=project, **plugin_env)
    full_memory(project, env)
    past_note(project, env)
    quiet = os.path.join(base, "quiet-project")  # the same memory, for prompts of a session of its own
    os.makedirs(os.path.join(quiet, ".git"))
    full_memory(quiet, env)
    past_note(quiet, env)
    recalling = os.path.join(base, "recall-project")  # the same memory, for a recalling session's turns
    os.makedirs(os.path.join(recalling, ".git"))
    full_memory(recalling, env)
    past_note(recalling, env)
    big = os.path.join(base, "big-project")
    os.makedirs(os.path.join(big, ".git"))
    full_memory(big, env)
    large_store(big, env, args.sessions)
    items = os.path.join(base, "items-project")
    os.makedirs(os.path.join(items, ".git"))
    provenance_memory(items, env)
    receipted = os.path.join(base, "receipted-project")  # the same, with what eight sessions used of it
    os.makedirs(os.path.join(receipted, ".git"))
    provenance_memory(receipted, env)
    receipts_tally(receipted, env)
    edited = os.path.join(base, "edited-project")  # the same, with a file written before each start
    os.makedirs(os.path.join(edited, ".git"))
    provenance_memory(edited, env)
    idle = idle_transcript(os.path.join(base, "idle.jsonl"))
    synced = os.path.join(base, "store-synced")  # a store with a remote: the hooks start background syncs
    sync_env = {**env, "KEEPER_HOME": synced}
    full_memory(project, sync_env)
    subprocess.run(["git", "init", "-q", "--bare", os.path.join(base, "remote.git")], check=True)
    subprocess.run(
        [sys.executable, "-m", "keeper", "sync", "--remote", os.path.join(base, "remote.git")],
        env=sync_env,
        check=True,
        capture_output=True,
    )
    memory_bytes = sum(
        os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(env["KEEPER_HOME"]) for f in fs if f == "memory.md"
    )

    def payload(event: str, **fields: object) -> bytes:  # compact, in Claude Code's order
        name = "".join(part.capitalize() for part in event.split("-"))  # hook_event_name: Codex reads the event here
        base = {"session_id": "bench-session", "transcript_path": "", "cwd": project, "hook_event_name": name}
        return json.dumps({**base, **fields}, separators=(",", ":")).encode()

    shell = codex_commands() if args.codex else {}

    def cmd(event: str) -> list[str]:
        return [*hook, shell[event]] if args.codex else [*hook, event]

    counter = iter(range(10**9))
    variants: dict[str, tuple[list[str], object, dict[str, str]]] = {
        "python -c pass": ([python, "-c", "pass"], b"", {}),
        "post-tool-use": (
            cmd("post-tool-use"),
            payload(
                "post-tool-use",
                tool_name="Bash",
                tool_input={"command": "pytest -q"},
                tool_response={"stdout": "ok"},
                tool_use_id="toolu_01",
            ),
            {"KEEPER_SAVE_EVERY": "1000000"},
        ),
        "post-tool-use (save due)": (  # a session of its own: another KEEPER_SAVE_EVERY voids the other's allowance
            cmd("post-tool-use"),
            payload("post-tool-use", session_id="bench-due", tool_name="Edit", tool_input={"file_path": "a.py"}),
            {"KEEPER_SAVE_EVERY": "1"},
        ),
        "session-start (full memory)": (cmd("session-start"), payload("session-start", source="startup"), {}),
        "session-start (10,000 session files)": (
            cmd("session-start"),
            payload("session-start", source="startup", cwd=big),
            {"CLAUDE_PROJECT_DIR": big},
        ),
        "session-start (300 items, provenance)": (
            cmd("session-start"),
            payload("session-start", source="startup", cwd=items),
            {"CLAUDE_PROJECT_DIR": items},
        ),
        "session-start (300 items, receipts)": (  # 20 used, 280 left to recall
            cmd("session-start"),
            payload("session-start", source="startup", cwd=receipted),
            {"CLAUDE_PROJECT_DIR": receipted},
        ),
        "session-start (300 items, one changed)": (  # the kept verdicts cannot be used: a full check
            cmd("session-start"),
            lambda: touched(
                os.path.join(edited, "src", "mod_100.py"), payload("session-start", source="startup", cwd=edited)
            ),
            {"CLAUDE_PROJECT_DIR": edited},
        ),
        "user-prompt-submit": (  # nothing Keeper could recall, in a session whose prompts all recall nothing
            cmd("user-prompt-submit"),
            payload(
                "user-prompt-submit",
                session_id="bench-quiet",
                cwd=quiet,
                prompt="rename the invoice exporter module please",
            ),
            {"CLAUDE_PROJECT_DIR": quiet},
        ),
        "user-prompt-submit (recalls)": (  # after the Stop of its turn, in a project and session of its own
            cmd("user-prompt-submit"),
            AfterStop(
                lambda: payload(
                    "stop",
                    session_id="bench-recall",
                    cwd=recalling,
                    last_assistant_message=f"Reply {next(counter)} done.",
                ),
                payload(
                    "user-prompt-submit",
                    session_id="bench-recall",
                    cwd=recalling,
                    prompt="the flaky checkout test is back, freezing the clock again?",
                ),
                (cmd("stop")[len(hook) :], cmd("user-prompt-submit")[len(hook) :]),
            ),
            {"CLAUDE_PROJECT_DIR": recalling},
        ),
        "user-prompt-submit (/keeper:recall)": (
            cmd("user-prompt-submit"),
            payload("user-prompt-submit", prompt="/keeper:recall retry budgt module_42"),
            {},
        ),
        "stop (session file updated)": (
            cmd("stop"),
            lambda: payload("stop", stop_hook_active=True, last_assistant_message=f"Reply {next(counter)} done."),
            {},
        ),
        "stop (nothing new)": (
            cmd("stop"),
            payload("stop", session_id="bench-idle", transcript_path=idle, last_assistant_message="All tests pass."),
            {},
        ),
        "pre-compact": (cmd("pre-compact"), payload("pre-compact", trigger="auto"), {}),
        "session-end": (cmd("session-end"), payload("session-end", reason="other"), {}),
        "session-start (sync on)": (
            cmd("session-start"),
            payload("session-start", source="startup"),
            {"KEEPER_HOME": synced},
        ),
        "session-end (sync on)": (cmd("session-end"), payload("session-end", reason="other"), {"KEEPER_HOME": synced}),
    }
    if args.against:  # the same variants through the other checkout (or script), on copies of the stores
        other = {}
        for home in (env["KEEPER_HOME"], synced):
            shutil.copytree(home, home + "-against", symlinks=True)
            other[home] = home + "-against"
        if args.keeper:
            against_hook, against_plugin = [keeper_command(args.against)[0], "hook"], {}
        elif args.on_path:
            against_hook, against_plugin = path_route(base, args.on_path, args.against)
        else:
            against_hook, _, against_plugin = plugin_command(base, args.shell_form, args.codex, args.against)
        for name, (command, stdin, extra) in list(variants.items())[1:]:
            runs = {**extra, **against_plugin, "KEEPER_HOME": other[extra.get("KEEPER_HOME", env["KEEPER_HOME"])]}
            variants[name + BEFORE] = (against_hook + command[len(hook) :], stdin, runs)
    times, cpu = run_interleaved(variants, env, args.rounds)
    base_median, base_cpu = statistics.median(times["python -c pass"]), statistics.median(cpu["python -c pass"])
    results = []
    print(f"keeper hook latency: {args.rounds} interleaved rounds, memory.md {memory_bytes} bytes")
    print(f"script {script} on {python}" + (f"; before: {args.against}" if args.against else ""))
    print(f"{'variant':38} {'median ms':>9} {'p90 ms':>8} {'ratio':>6} {'cpu ms':>7} {'ratio':>6}  target")
    for name in variants:
        values = sorted(times[name])
        median, cpu_median = statistics.median(values), statistics.median(cpu[name])
        p90 = values[int(0.9 * (len(values) - 1))]
        ratio = median / base_median
        target, bound = TARGETS.get(name, (None, None))
        verdict = ""
        if bound is not None:
            verdict = f"<= {target}x (must <= {bound}x): " if target else f"must <= {bound}x: "
            verdict += "met" if ratio <= (target or bound) else ("within bound" if ratio <= bound else "MISSED")
        cpu_ratio = cpu_median / base_cpu
        print(f"{name:38} {median:9.1f} {p90:8.1f} {ratio:6.2f} {cpu_median:7.1f} {cpu_ratio:6.2f}  {verdict}")
        results.append(
            {
                "variant": name,
                "median_ms": round(median, 2),
                "p90_ms": round(p90, 2),
                "ratio": round(ratio, 3),
                "cpu_ms": round(cpu_median, 2),
                "cpu_ratio": round(cpu_ratio, 3),
            }
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"rounds": args.rounds, "memory_bytes": memory_bytes, "results": results}, fh, indent=1)
    shutil.rmtree(base, ignore_errors=True)
    missed = [r for r in results if (b := TARGETS.get(r["variant"], (None, None))[1]) is not None and r["ratio"] > b]
    return 1 if missed and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())
