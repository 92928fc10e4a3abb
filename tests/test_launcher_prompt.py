"""A prompt with nothing Keeper could recall costs no Python: bin/keeper answers it (launcher/prompt.bash)
when Keeper's record vouches for the memory as its gate saw it, and only when Keeper would answer it with
nothing too.

Two proofs, as for the counter and the Stop: the launcher's count of a prompt's held terms is never
below Python's (its own words, tried against random held terms in one bash), and random sessions
played through the launcher and through Keeper alone get the same replies and records.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from keeper.hooks import entry, prompts, quietprompt
from keeper.recall import gate, lexicon, stemmer, tokens
from tests.conftest import REPO
from tests.test_launcher_counter import LONG, World, python_starts
from tests.test_launcher_counter import pytestmark as counter_marks

pytestmark = counter_marks
SESSION = "s-1"
NOTE = "Fixed the flaky checkout test by freezing the clock; the invoice exporter keeps its retries."
QUIET = "rename the parser module please"  # none of NOTE's terms
RECALLS = "the flaky checkout test is back, freezing the clock again?"

# One bash that reads a held-keys line and a prompt (as a JSON string's inside) at a time and says
# whether the launcher would answer it with nothing, by the record's lines Keeper writes.
HARNESS = r"""
. "$1/launcher/count.bash" && . "$1/launcher/prompt.bash" || exit 1
LC_ALL=C
IFS= read -r limits && IFS= read -r stops && IFS= read -r dated && IFS= read -r respelled && IFS= read -r own || exit 1
mode=gate
while IFS= read -r held && IFS= read -r raw; do
  if keeper_prompt_quiet "$raw"; then printf '1\n'; else printf '0\n'; fi
done
"""


def launcher_says_quiet(cases: list[tuple[set[str], str]]) -> list[bool]:
    """For each (held terms, prompt): whether launcher/prompt.bash answers the prompt with nothing."""
    lines = list(quietprompt.record_words(entry.OWN_REQUEST))
    for held, prompt in cases:
        keys = quietprompt.keys_of(("\n" + "\n".join(held) + "\n").encode("utf-8", "surrogatepass"))
        lines += [" " + " ".join(sorted(keys)) + " ", json.dumps(prompt, ensure_ascii=False)[1:-1]]
    text = "".join(line + "\n" for line in lines)
    done = subprocess.run(
        ["bash", "-c", HARNESS, "harness", str(REPO)], input=text.encode("utf-8", "surrogatepass"), capture_output=True
    )
    assert done.returncode == 0, done.stderr
    said = done.stdout.decode().split()
    assert len(said) == len(cases), done.stderr
    return [s == "1" for s in said]


def python_says_quiet(held: set[str], prompt: str) -> bool:
    """Keeper's own answer: nothing for a command-less prompt too short, or holding too few held terms."""
    if prompt.startswith(entry.OWN_REQUEST) or prompts.slash_command(prompt) is not None:
        return False
    if prompt.lstrip().startswith("/") or len(prompt.split()) < prompts.AUTO_MIN_WORDS:
        return True
    return gate.holds_too_few(
        prompt, ("\n" + "\n".join(held) + "\n").encode("utf-8", "surrogatepass"), prompts.MIN_HITS
    )


def terms_of(text: str) -> list[str]:
    return [term for _, term in tokens.words(text)]


ENGLISH = sorted(lexicon.WORDS)
ODD = [*stemmer.IRREGULAR, *stemmer.EXCEPTIONS, "dying", "lying", "flying", "hoping", "rating", "capability"]
ODD += ["abbilities", "generalizations", "hopefulness", "yesterdy", "Yestrday", "last", "ago", "Janury", "may"]
CODE = ["getUserById", "order_service", "src/api/cache.py", "HTTPServer", "fooBAR", "ABc", "a.b", "x-y-z", "--flag"]
CODE += ["README.md", "snake_case_name", "kebab-case", "CamelCase", "aB", "lowerUPPER", ".hidden", "a_", "__init__"]
WORD = st.one_of(
    st.sampled_from(ENGLISH),
    st.sampled_from(ODD),
    st.sampled_from(CODE),
    st.sampled_from(sorted(tokens.STOP)),
    st.text(alphabet="abcdeilnorstuyABCDEY_.-/", min_size=1, max_size=12),
    st.text(min_size=1, max_size=6),  # anything: digits, letters of other scripts, controls
)
CASED = st.tuples(WORD, st.sampled_from(["as is", "lower", "upper", "title"])).map(
    lambda pair: {"as is": pair[0], "lower": pair[0].lower(), "upper": pair[0].upper(), "title": pair[0].title()}[
        pair[1]
    ]
)
GLUE = st.sampled_from([" ", " ", " ", ", ", ". ", "? ", "\n", "\t", ' "', "' ", " (", ") ", "\\", ": "])
PROMPT = st.lists(st.tuples(CASED, GLUE), min_size=1, max_size=14).map(lambda parts: "".join(w + g for w, g in parts))


@st.composite
def cases(draw: st.DrawFn) -> tuple[set[str], str]:
    """A prompt, and held terms drawn from its own terms and others (so that some are held)."""
    prompt = draw(st.one_of(PROMPT, st.sampled_from([QUIET, RECALLS, "/keeper:recall clock", "  /compact now"])))
    own = sorted(set(terms_of(prompt)))
    others = terms_of(" ".join(draw(st.lists(WORD, max_size=20))))
    held = set(draw(st.lists(st.sampled_from(own), max_size=3, unique=True))) if own else set()
    return held | set(others), prompt


@settings(max_examples=3000 if LONG else 150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(cases(), min_size=1, max_size=25))
@example([({"hope", "run"}, "hoping to keep running it"), ({"die", "fli"}, "dying birds were flying south")])
@example([({"abbl", "go"}, "abbilities went somewhere nice"), ({"yesterday", "clock"}, "what did Yesterdy clock")])
def test_the_launcher_answers_no_prompt_keeper_would_search(batch: list[tuple[set[str], str]]) -> None:
    """Whenever the launcher answers a prompt with nothing, Keeper's gate answers it with nothing too."""
    for (held, prompt), quiet in zip(batch, launcher_says_quiet(batch)):
        if quiet:
            assert python_says_quiet(held, prompt), (prompt, sorted(held))


def test_every_english_word_is_found_by_its_beginning() -> None:
    """Each word of the lexicon (and the stemmer's own tables), its term held beside one other: the
    launcher counts two and leaves the prompt to Keeper."""
    words = [w for w in [*ENGLISH, *ODD] if w.isascii() and w.isalpha() and tokens.term_of(w.lower())]
    words = [w for w in words if w.lower() not in tokens.STOP and w.lower() not in ("last", "ago")]
    words = [w for w in words if w.lower() != "checkout" and not quietprompt_respelled(w)]
    if not LONG:  # those whose term begins otherwise than the word, and a tenth of the rest
        words = [w for i, w in enumerate(words) if i % 10 == 0 or not _same_beginning(w)]
    batch = [({*terms_of(w), "checkout"}, f"{w} checkout zzqv qvzz") for w in words]
    said = launcher_says_quiet(batch)
    assert [w for w, quiet in zip(words, said) if quiet] == []


def _same_beginning(word: str) -> bool:
    term = tokens.term_of(word.lower()) or ""
    return quietprompt.normal(term)[:4] == quietprompt.normal(word.lower())[:4]


def quietprompt_respelled(word: str) -> bool:
    from keeper.recall import dates

    return dates.respelled(word) is not None


def test_the_launcher_answers_a_prompt_with_nothing_held() -> None:
    """The point of it: an ordinary prompt whose words the memory does not hold is answered by bash."""
    held = set(terms_of(NOTE))
    prompts_ = [QUIET, "Could you tidy up the README before we ship?", "yes", "go on", "Add a parser for the CLI flags"]
    assert launcher_says_quiet([(held, p) for p in prompts_]) == [True] * len(prompts_)
    assert launcher_says_quiet([(held, RECALLS), (held, "what happened yesterday with it")]) == [False, False]


def spelled(body: dict[str, Any]) -> str:
    """A payload as Claude Code writes it (JSON.stringify: compact, letters as they are)."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def prompt_payload(cwd: Path, text: str, session: str = SESSION) -> str:
    head = {"session_id": session, "transcript_path": "", "cwd": str(cwd), "permission_mode": "default"}
    return spelled({**head, "hook_event_name": "UserPromptSubmit", "prompt": text})


class Prompts:
    """One project's sessions driven through the launcher and through Keeper alone."""

    def __init__(self, base: Path, project: Path) -> None:
        self.project = project
        self.launcher = World(base / "launcher", project, launcher=True)
        self.alone = World(base / "alone", project, launcher=False)
        for world in (self.launcher, self.alone):
            world.save("s-0", NOTE)
        self.prompt("yes")  # the session's first call: its tally and the hook log

    def prompt(self, text: str, session: str = SESSION) -> tuple[dict[str, Any], bool]:
        """The same prompt through both; the replies agree. Returns the reply and whether bash answered."""
        body = prompt_payload(self.project, text, session)
        starts = python_starts(self.launcher.data)
        through = self.launcher.hook("user-prompt-submit", body)
        alone = self.alone.hook("user-prompt-submit", body)
        assert through == alone
        return through, python_starts(self.launcher.data) == starts

    def both(self, act: Any) -> None:
        for world in (self.launcher, self.alone):
            act(world)


@pytest.fixture
def sessions(tmp_path: Path, project_dir: Path) -> Prompts:
    return Prompts(tmp_path, project_dir)


def test_a_prompt_with_nothing_to_recall_starts_no_python(sessions: Prompts) -> None:
    for _ in range(2):  # the first searches and keeps the gate; the second finds it and vouches
        assert sessions.prompt(QUIET) == ({}, False)
        time.sleep(0.1)  # past the record's clock slack
    for text in (QUIET, "yes", "Please add a parser for the CLI flags"):
        assert sessions.prompt(text) == ({}, True)
    reply, alone = sessions.prompt(RECALLS)
    assert "hookSpecificOutput" in reply and not alone
    assert sessions.launcher.record() == sessions.alone.record()
    stats = next(sessions.launcher.store.glob("projects/*/state/hooks.stats")).read_text().splitlines()
    assert [line.split("\t")[0] for line in stats] == ["user-prompt-submit"] * 7  # keeper status counts each


def test_the_prompt_record_is_keepers_own(sessions: Prompts) -> None:
    for _ in range(2):
        sessions.prompt(QUIET)
        time.sleep(0.1)
    record = sessions.launcher.data / "counter" / f"{SESSION}.prompt"
    lines = record.read_bytes().split(b"\n")
    state = next(sessions.launcher.store.glob("projects/*/state"))
    assert lines[0] == b"keeper-prompt 1"
    assert lines[2:4] == [os.fsencode(state / "sessions" / f"{SESSION}.tally"), os.fsencode(state / "hooks.stats")]
    assert lines[5:8] == [b"", b"gate", b"4 2 4"]
    held = lines[12].decode().split()  # the index's terms: the note's, memory.md's, the session files' headings
    assert lines[12] == f" {' '.join(held)} ".encode() and held == sorted(held)
    assert quietprompt.keys_of(("\n" + "\n".join(terms_of(NOTE)) + "\n").encode()) <= set(held)
    assert lines[13] == os.fsencode(state.parent / "sessions")
    assert lines[14] == b"/".join(sorted(p.name.encode() for p in (state.parent / "sessions").glob("*.md")))
    assert b"+" + os.fsencode(state / "recall-gate") in lines
    assert lines[-2:] == [b"end", b""]


def test_a_session_file_dated_to_the_second_leaves_only_short_prompts_to_the_launcher(sessions: Prompts) -> None:
    """A file system that keeps whole seconds could hide a write from the launcher (as for the Stop's
    record): Keeper does not vouch for the gate over such a file, and still does for a short prompt."""
    second = int(time.time()) - 60
    sessions.both(lambda w: [os.utime(p, (second, second)) for p in w.store.glob("projects/*/sessions/*.md")])
    for _ in range(3):
        sessions.prompt(QUIET)
        time.sleep(0.1)  # past the record's clock slack
    assert sessions.prompt(QUIET) == ({}, False)
    assert sessions.prompt("yes, go on") == ({}, True)
    assert sessions.launcher.record() == sessions.alone.record()


def test_a_store_of_many_session_files_leaves_only_short_prompts_to_the_launcher(sessions: Prompts) -> None:
    """Bash lists the sessions folder on each prompt it answers by the gate: beyond
    ``quietprompt.MAX_LISTED`` files that costs more than Python's gate, so Keeper vouches for short
    prompts only."""

    def many(world: Any) -> None:
        folder = next(world.store.glob("projects/*/sessions"))
        for n in range(quietprompt.MAX_LISTED + 1):
            (folder / f"2020-01-01_{n:04d}.md").write_text(f"# Session {n}\n\nNothing of note.\n")
        # indexed whole now: a prompt indexes within a time budget, which a loaded machine can run past
        recall = [sys.executable, "-m", "keeper", "recall", "nothing", "note"]
        subprocess.run(recall, env=world.env, cwd=sessions.project, check=True, capture_output=True)

    sessions.both(many)
    for _ in range(3):
        sessions.prompt(QUIET)
        time.sleep(0.1)  # past the record's clock slack
    assert sessions.prompt(QUIET) == ({}, False)
    assert sessions.prompt("yes, go on") == ({}, True)
    assert sessions.launcher.record() == sessions.alone.record()


def test_with_automatic_recall_off_every_prompt_but_a_command_is_the_launchers(sessions: Prompts) -> None:
    _settings(sessions, "auto_recall: false\n")
    for _ in range(2):
        sessions.prompt(QUIET)
        time.sleep(0.1)  # past the record's clock slack
    assert sessions.prompt(RECALLS.replace("again", "2 times")) == ({}, True)
    reply, alone = sessions.prompt("/keeper:save")
    assert "hookSpecificOutput" in reply and not alone
    assert sessions.launcher.record() == sessions.alone.record()


def _touch_session_file(world: World) -> None:
    path = next(world.store.glob("projects/*/sessions/*.md"))
    os.utime(path)


def _another_session_saves(world: World) -> None:
    world.save("s-9", "Moved the parser module into the CLI package.")


def _settings(sessions: Prompts, text: str) -> None:
    config = sessions.project / ".claude" / "keeper.yaml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(text)


CHANGE = {
    "a save": lambda s: s.both(lambda w: w.save(SESSION, "Renamed the parser module.")),
    "another session saved": lambda s: s.both(_another_session_saves),
    "a session file touched": lambda s: s.both(_touch_session_file),
    "automatic recall turned off": lambda s: _settings(s, "auto_recall: false\n"),
    "another session's prompt": lambda s: s.prompt(RECALLS, "s-2"),
    "KEEPER_AUTO_RECALL": lambda s: s.both(lambda w: w.env.update(KEEPER_AUTO_RECALL="false")),
    "CLAUDE_CONFIG_DIR": lambda s: s.both(lambda w: w.env.update(CLAUDE_CONFIG_DIR=str(w.store.parent / "claude"))),
}


@pytest.mark.parametrize("how", list(CHANGE))
def test_what_the_record_rests_on_changed_reaches_keeper(sessions: Prompts, how: str) -> None:
    for _ in range(3):
        sessions.prompt("Renamed parser module yet again please")
        time.sleep(0.1)
    assert sessions.prompt("Renamed parser module yet again please")[1]
    CHANGE[how](sessions)
    time.sleep(0.1)
    assert not sessions.prompt("Renamed parser module yet again please")[1]
    assert sessions.launcher.record() == sessions.alone.record()


UNUSUAL = {
    "letters escaped": lambda body: json.dumps(json.loads(body), separators=(",", ":")).replace("e", "\\u0065", 1),
    "pretty-printed": lambda body: json.dumps(json.loads(body), indent=1),
    "another field first": lambda body: spelled({"cwd": json.loads(body)["cwd"], **json.loads(body)}),
    "the prompt twice": lambda body: body[:-1] + ',"prompt":"what did the flaky checkout test do"}',
    "a digit": lambda body: body.replace("please", "please 2"),
    "a command": lambda body: body.replace('"prompt":"', '"prompt":"/keeper:save '),
    "an escaped backslash": lambda body: body.replace("please", "please\\\\"),
    "not JSON at the end": lambda body: body[:-1],
}


@pytest.mark.parametrize("case", list(UNUSUAL))
def test_an_unusual_prompt_goes_to_keeper(sessions: Prompts, case: str) -> None:
    for _ in range(3):
        sessions.prompt(QUIET)
        time.sleep(0.1)
    body = UNUSUAL[case](prompt_payload(sessions.project, QUIET))
    starts = python_starts(sessions.launcher.data)
    assert sessions.launcher.hook("user-prompt-submit", body) == sessions.alone.hook("user-prompt-submit", body)
    assert python_starts(sessions.launcher.data) == starts + 1
    assert sessions.launcher.record() == sessions.alone.record()


TEXTS = [QUIET, RECALLS, "yes", "go on then", "/keeper:save", "what did we do yesterday about it"]
TEXTS += ["Tidy the README and the CLI flags", "freezing the clock in getUserById", "the invoice retries"]
STEPS = st.sampled_from(["prompt", "prompt", "prompt", "save", "other", "touch", "stop", "use", "settings", "sleep"])


@settings(
    max_examples=40 if LONG else 3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(st.tuples(STEPS, st.integers(0, len(TEXTS) - 1)), min_size=1, max_size=25 if LONG else 10))
def test_through_the_launcher_prompts_get_keepers_replies_and_records(
    tmp_path: Path, project_dir: Path, steps: list[tuple[str, int]]
) -> None:
    """Random sessions: prompts of every kind, saves (this session's and another's), session files touched,
    Stops, tool uses and settings changed; every reply and record is Keeper's alone."""
    sessions = Prompts(Path(tempfile.mkdtemp(dir=tmp_path)), project_dir)
    for kind, pick in steps:
        if kind == "prompt":
            sessions.prompt(TEXTS[pick], SESSION if pick % 3 else "s-2")
        elif kind == "save":
            sessions.both(lambda w, said=f"Step {pick}: {TEXTS[pick]}": w.save(SESSION, said))
        elif kind == "other":
            sessions.both(_another_session_saves)
        elif kind == "touch":
            sessions.both(_touch_session_file)
        elif kind in ("stop", "use"):
            sessions.both(lambda w, kind=kind, pick=pick: w.step(kind, SESSION, pick))
        elif kind == "settings":
            _settings(sessions, f"auto_recall: {'false' if pick % 2 else 'true'}\n")
        time.sleep(0.1)  # past the record's clock slack
        assert sessions.launcher.record() == sessions.alone.record()
    sessions.prompt(QUIET)
    assert sessions.launcher.record() == sessions.alone.record()
