"""A repository's ``redact_patterns`` never stall a hook or a save, whatever the pattern (issue 23, family 7)."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from keeper import redact as redact_module
from keeper import user_patterns
from keeper.redact import unsafe
from keeper.store import config
from tests.transcripts import Transcript

# Known catastrophic shapes (exponential or high-degree polynomial backtracking).
REDOS = [
    r"(a+)+$",
    r"(a|a)*$",
    r"(a|aa)+$",
    r"(\w+\s?)+!",
    r"^(\w+\s?)*$",
    r"(.*a){12}",
    r"^(([a-z])+.)+[A-Z]([a-z])+$",
    r"(x+x+)+y",
    r"(\d+)*$",
    r"([a-zA-Z]+)*$",
    r"(.*)*x",
    r"(a*)*b",
    r"(.+)+x",
    r"(a?){30}a{30}",
    r"(\s*\w+\s*)+:",
    r"(?:\S+\s*)+$",
    r"(?:[a-z]+|[a-z0-9]+)+!",
    r"(?:e|[a-z]e)+!",
    r"\s*\s*$",
    r"\w+\w+x",
    r".*.*=.*",
    r"(\w+)\1",
    r"(?=(\w+))\w*!",
]
SAFE = [
    r"ACME-INTERNAL-\d+",
    r"[a-z]{3}",
    r"[0-9]+",
    r"sk-[A-Za-z0-9]{20,}",
    r"\w+@\w+\.com",
    r"(?:foo|bar)+",
    r"\bTICKET-\d{4,}\b",
    r"(?i)internal[_-]?key=\S+",
    r"(\w|\d)+$",
]


def prose(size: int) -> str:
    """Ordinary lines of prose: what the patterns above backtrack on."""
    rng = random.Random(7)
    words = "the staging deploy failed because a migration ran twice and the cache was warm so we rolled back".split()  # noqa: SIM905
    lines = []
    while sum(map(len, lines)) < size:
        lines.append(" ".join(rng.choice(words) for _ in range(rng.randint(5, 40))) + " " + "a" * rng.randint(20, 40))
    return "\n".join(lines)[:size]


@pytest.mark.parametrize("pattern", REDOS)
def test_a_pattern_that_can_backtrack_without_bound_is_refused(pattern: str) -> None:
    assert unsafe(pattern)


@pytest.mark.parametrize("pattern", SAFE)
def test_ordinary_patterns_pass_the_check(pattern: str) -> None:
    assert unsafe(pattern) is None


def test_config_refuses_them_with_a_message_naming_file_key_and_why(project_dir: Path) -> None:
    (project_dir / ".claude").mkdir()
    (project_dir / ".claude" / "keeper.yaml").write_text("redact_patterns: ['ACME-\\d+', '(a+)+$']\n", encoding="utf-8")
    cfg = config.load(str(project_dir))
    assert cfg.redact_patterns == []
    assert any(
        "keeper.yaml" in w and "redact_patterns" in w and "repetition inside a repetition" in w for w in cfg.warnings
    )


def test_the_redactor_skips_them_even_when_handed_them_directly() -> None:
    assert redact_module.redact("a" * 40 + "!", [r"(a+)+$", r"!"]) == "a" * 40 + "[REDACTED:custom]"


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no interval timer: the parse-tree check bounds")
def test_a_pattern_that_slips_through_is_stopped_by_the_budget_and_its_piece_redacted_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(user_patterns.RESERVE, "seconds", 0.2)
    text = "fine line\n" + "a" * 40 + "!"
    spans = user_patterns.spans(text, [re.compile(r"(a+)+$")])  # compiled past the check
    assert spans == [(0, len(text))]
    assert user_patterns.RESERVE.seconds == 0.0
    text = "ordinary words " * 4000 + "ACME-1"  # spent: a linear pattern still fits what its text earns
    assert user_patterns.spans(text, [re.compile(r"ACME-\d")]) == [(len(text) - 6, len(text))]


def _project_with(project_dir: Path, patterns: list[str]) -> None:
    (project_dir / ".claude").mkdir(exist_ok=True)
    (project_dir / ".claude" / "keeper.yaml").write_text(
        "redact_patterns: " + json.dumps(patterns) + "\n", encoding="utf-8"
    )


def test_hooks_and_save_finish_on_100_kb_of_prose_with_every_known_redos_pattern(
    project_dir: Path, tmp_path: Path
) -> None:
    _project_with(project_dir, [r"(\w+\s?)+!", r"(a+)+$", r"(.*a){12}", r"(?:\S+\s*)+$"])
    text = prose(100_000)
    transcript = tmp_path / "t.jsonl"
    Transcript(transcript, cwd=str(project_dir)).prompt(text).tool("Bash", {"command": "make"}).reply(text[:20_000])
    event = {"session_id": "s1", "transcript_path": str(transcript), "cwd": str(project_dir)}
    for hook in ("stop", "pre-compact", "session-end"):
        done = subprocess.run(
            [sys.executable, "-m", "keeper", "hook", hook],
            input=json.dumps(event).encode(),
            capture_output=True,
            cwd=project_dir,
            timeout=60,  # generous: before, each held its hook for seconds to minutes
            check=False,
        )
        assert done.returncode == 0 and done.stdout.strip().startswith(b"{"), (hook, done.stderr[-500:])
    done = subprocess.run(
        [sys.executable, "-m", "keeper", "save"],
        input=("summary: " + text.replace("\n", " ") + "\n").encode(),
        capture_output=True,
        cwd=project_dir,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-500:]
