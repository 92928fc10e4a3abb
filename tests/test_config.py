"""Configuration layers, and bad values that say what is wrong and what is used instead."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keeper.store import config


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_any_file() -> None:
    cfg = config.load(None)
    assert cfg.save_every == 15 and cfg.final_save_min == 3 and cfg.recent_sessions == 3
    assert cfg.warnings == []


def test_layers_apply_in_order_global_project_environment(
    project_dir: Path, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(store / "config.yaml", "save_every: 7\nrecent_sessions: 5\ncontext_chars: 4000\n")
    write(project_dir / ".claude" / "keeper.yaml", "save_every: 9\n")
    monkeypatch.setenv("KEEPER_RECENT_SESSIONS", "2")
    cfg = config.load(str(project_dir))
    assert (cfg.save_every, cfg.recent_sessions, cfg.context_chars) == (9, 2, 4000)


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
    assert getattr(cfg, key) == default
    assert len(cfg.warnings) == 1
    assert str(path) in cfg.warnings[0] and key in cfg.warnings[0]


def test_a_broken_yaml_file_is_reported_not_fatal(project_dir: Path) -> None:
    path = write(project_dir / ".claude" / "keeper.yaml", "save_every: [1,\n  nope")
    cfg = config.load(str(project_dir))
    assert cfg.save_every == 15
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
    assert cfg.save_every == 15 and cfg.enabled is False
    assert cfg.warnings == [
        "environment variable KEEPER_SAVE_EVERY: save_every must be a positive whole number (got 'often'); using 15"
    ]


def test_project_pin_is_ignored_in_the_global_file(store: Path) -> None:
    write(store / "config.yaml", "project: shared\n")
    cfg = config.load(None)
    assert cfg.project is None
    assert "belongs in a project's .claude/keeper.yaml" in cfg.warnings[0]


def test_parsed_files_are_cached_and_the_cache_follows_edits(project_dir: Path) -> None:
    path = write(project_dir / ".claude" / "keeper.yaml", "save_every: 4\n")
    assert config.load(str(project_dir)).save_every == 4
    cache = config._cache_file(str(path))
    assert os.path.exists(cache)
    write(path, "save_every: 12\n")
    os.utime(path, ns=(1, 1))  # a different mtime even on coarse clocks
    assert config.load(str(project_dir)).save_every == 12


def test_a_corrupt_cache_is_rebuilt(project_dir: Path) -> None:
    path = write(project_dir / ".claude" / "keeper.yaml", "save_every: 4\n")
    config.load(str(project_dir))
    Path(config._cache_file(str(path))).write_text("{not json")
    assert config.load(str(project_dir)).save_every == 4


# -- untrusted files: any YAML document, any value type ------------------------------------------

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True),
    st.text(max_size=30),
    st.sampled_from(["²", "١٢", "0x1F", "1e9", "999999", "-0", "yes", "~", "[", "{a", "&a", "*a", "!!python/object"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=15,
)
keys = st.one_of(st.sampled_from(sorted(config.KEYS)), st.text(max_size=12))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=st.dictionaries(keys, values, max_size=6), raw=st.sampled_from(["", "---\n", "%YAML 1.1\n---\n"]))
def test_any_document_gives_valid_settings_and_one_message_per_problem(
    project_dir: Path, document: dict, raw: str
) -> None:
    import yaml

    try:
        text = raw + yaml.safe_dump(document, allow_unicode=True)
    except yaml.YAMLError:
        return
    write(project_dir / ".claude" / "keeper.yaml", text)
    cfg = config.load(str(project_dir))
    for key, (_, kind, _) in config.KEYS.items():
        value = getattr(cfg, key)
        if kind in ("posint", "nonneg", "days", "context"):
            assert isinstance(value, int) and not isinstance(value, bool)
        elif kind == "bool":
            assert isinstance(value, bool)
    assert all(isinstance(w, str) and len(w) < 600 and "\n" not in w for w in cfg.warnings)


@pytest.mark.parametrize(
    "text",
    [
        "a: &a [1, 2]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
        "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\nsave_every: 7\n",
        "save_every: " + "[" * 5000 + "]" * 5000 + "\n",
        "a: " + "[" * 30000 + "]" * 30000 + "\n",  # under 64 KB: PyYAML took ~10 s on it
        "save_every: ²\n",
        "clear_older_than: 999999\n",
        "x: " + "y" * (70 << 10) + "\n",
        "latin-1: caf\xe9\n",
    ],
    ids=["alias bomb", "deep nesting", "deeper nesting", "superscript two", "huge days", "oversized", "bad encoding"],
)
def test_hostile_config_files_are_answered_with_a_message_and_the_defaults(
    project_dir: Path, text: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.helpers import run_hook

    path = project_dir / ".claude" / "keeper.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        text.encode("utf-8", "surrogateescape") if text.startswith("\xff") is False else b"\xff\xfe not utf-8"
    )
    cfg = config.load(str(project_dir))
    assert cfg.save_every == 15 and cfg.clear_older_than == 30
    assert cfg.warnings and str(path) in cfg.warnings[0]
    cache = list((Path(os.environ["KEEPER_HOME"]) / "cache").glob("config-*.json"))
    assert cache, "a failed parse is cached like a success"
    reply = run_hook(
        "session-start", {"session_id": "s1", "cwd": str(project_dir), "source": "startup"}, monkeypatch, capsys
    )
    assert "config problem" in reply["systemMessage"]


def test_deep_nesting_is_turned_away_before_yaml_reads_it(project_dir: Path) -> None:
    path = write(project_dir / ".claude" / "keeper.yaml", "a: " + "[" * 30000 + "]" * 30000 + "\n")
    cfg = config.load(str(project_dir))
    assert cfg.warnings == [f"{path}: nested more than {config.MAX_NESTING} levels deep; ignoring the file"]
    write(project_dir / ".claude" / "keeper.yaml", "redact_patterns: ['[a-z]{3}', '[0-9]+']\nsave_every: 5\n")
    assert config.load(str(project_dir)).save_every == 5  # ordinary brackets are fine


def test_the_typed_settings_name_every_key_and_nothing_else() -> None:
    """``Config``'s annotations are what mypy checks uses against: they must be exactly ``KEYS``."""
    assert set(config.Config.__annotations__) == set(config.KEYS)
    assert config.load(None).as_dict() == config.DEFAULTS
