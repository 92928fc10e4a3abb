"""Configuration layers, and bad values that say what is wrong and what is used instead."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from keeper import config


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_any_file() -> None:
    cfg = config.load(None)
    assert cfg["save_every"] == 15 and cfg["final_save_min"] == 3 and cfg["recent_sessions"] == 3
    assert cfg.warnings == []


def test_layers_apply_in_order_global_project_environment(
    project_dir: Path, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(store / "config.yaml", "save_every: 7\nrecent_sessions: 5\ncontext_chars: 4000\n")
    write(project_dir / ".claude" / "keeper.yaml", "save_every: 9\n")
    monkeypatch.setenv("KEEPER_RECENT_SESSIONS", "2")
    cfg = config.load(str(project_dir))
    assert (cfg["save_every"], cfg["recent_sessions"], cfg["context_chars"]) == (9, 2, 4000)


@pytest.mark.parametrize(
    ("text", "key", "default"),
    [
        ("save_every: 0\n", "save_every", 15),
        ("save_every: ten\n", "save_every", 15),
        ("final_save_min: -1\n", "final_save_min", 3),
        ("context_chars: 50000\n", "context_chars", 6000),
        ("enabled: maybe\n", "enabled", True),
        ("redact_patterns: '([unclosed'\n", "redact_patterns", []),
        ("recent_sessions: true\n", "recent_sessions", 3),
    ],
)
def test_an_invalid_value_names_file_key_and_default(project_dir: Path, text: str, key: str, default: object) -> None:
    path = write(project_dir / ".claude" / "keeper.yaml", text)
    cfg = config.load(str(project_dir))
    assert cfg[key] == default
    assert len(cfg.warnings) == 1
    assert str(path) in cfg.warnings[0] and key in cfg.warnings[0]


def test_a_broken_yaml_file_is_reported_not_fatal(project_dir: Path) -> None:
    path = write(project_dir / ".claude" / "keeper.yaml", "save_every: [1,\n  nope")
    cfg = config.load(str(project_dir))
    assert cfg["save_every"] == 15
    assert str(path) in cfg.warnings[0] and "cannot read it" in cfg.warnings[0]


def test_unknown_keys_and_non_mappings_are_reported(project_dir: Path, store: Path) -> None:
    write(store / "config.yaml", "- a list\n")
    write(project_dir / ".claude" / "keeper.yaml", "save_evry: 5\n")
    warnings = config.load(str(project_dir)).warnings
    assert any("expected key: value lines" in w for w in warnings)
    assert any("unknown key 'save_evry'" in w for w in warnings)


def test_bad_environment_values_fall_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEEPER_SAVE_EVERY", "often")
    monkeypatch.setenv("KEEPER_ENABLED", "off")
    cfg = config.load(None)
    assert cfg["save_every"] == 15 and cfg["enabled"] is False
    assert cfg.warnings == [
        "environment variable KEEPER_SAVE_EVERY: save_every must be a positive whole number (got 'often'); using 15"
    ]


def test_project_pin_is_ignored_in_the_global_file(store: Path) -> None:
    write(store / "config.yaml", "project: shared\n")
    cfg = config.load(None)
    assert cfg["project"] is None
    assert "belongs in a project's .claude/keeper.yaml" in cfg.warnings[0]


def test_parsed_files_are_cached_and_the_cache_follows_edits(project_dir: Path) -> None:
    path = write(project_dir / ".claude" / "keeper.yaml", "save_every: 4\n")
    assert config.load(str(project_dir))["save_every"] == 4
    cache = config._cache_file(str(path))
    assert os.path.exists(cache)
    write(path, "save_every: 12\n")
    os.utime(path, ns=(1, 1))  # a different mtime even on coarse clocks
    assert config.load(str(project_dir))["save_every"] == 12


def test_a_corrupt_cache_is_rebuilt(project_dir: Path) -> None:
    path = write(project_dir / ".claude" / "keeper.yaml", "save_every: 4\n")
    config.load(str(project_dir))
    Path(config._cache_file(str(path))).write_text("{not json")
    assert config.load(str(project_dir))["save_every"] == 4
