"""Configuration: built-in defaults, then the global file, the project file, then ``KEEPER_*``.

Hooks load this on every call, so it stats before it imports: with no config file nothing but
the standard library runs, and a parsed file is cached as JSON keyed by ``(mtime_ns, size)`` so
pyyaml (~15 ms) loads only when a file has changed. A bad file or value never raises: it yields a
warning that names the file, the key and the default used instead.
"""

from __future__ import annotations

import os

from keeper import jsonio
from keeper.records import Record
from keeper.store import identity, paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# key: (default, kind, help). ``kind`` drives validation; the README documents every key.
KEYS: dict[str, tuple[Any, str, str]] = {
    "save_every": (15, "posint", "tool uses between prompts asking Claude to save"),
    "final_save_min": (3, "nonneg", "unsaved tool uses at which Stop asks once for a final save (0: never)"),
    "recent_sessions": (3, "posint", "session summaries kept in memory.md's Recent Context"),
    "context_chars": (
        6000,
        "context",
        "most characters of memory put into Claude's context at session start",
    ),
    "recall_limit": (5, "posint", "results `keeper recall` and /keeper:recall show by default"),
    "auto_recall": (True, "bool", "show Claude relevant past sessions with each prompt (false: only on request)"),
    "clear_older_than": (30, "days", "days after which `keeper clear old` removes session files"),
    "trash_days": (14, "days", "days cleared files stay restorable with `keeper restore`"),
    "enabled": (True, "bool", "false turns every hook into a no-op (the CLI still works)"),
    "notices": (
        True,
        "bool",
        "one line for you when Keeper recalls on its own, answers /keeper:recall or asks for a save",
    ),
    "debug": (False, "bool", "log one line per hook call: event, time taken, bytes put into context"),
    "team": (
        True,
        "bool",
        "read the repository's team memory (.claude/keeper/team.md) at session start and in recall (false: never)",
    ),
    "sync": (
        True,
        "bool",
        "with a remote recorded (keeper sync --remote URL): pull at session start, push at session end, "
        "in the background (false: only when you run keeper sync)",
    ),
    "redact_patterns": (
        [],
        "patterns",
        "extra regular expressions whose matches are redacted before writing",
    ),
    "project": (
        None,
        "pin",
        "project file only: pin this project's memory folder name (share it between clones)",
    ),
}
DEFAULTS: dict[str, Any] = {key: spec[0] for key, spec in KEYS.items()}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class Config:
    """The merged settings as typed attributes (a misspelt key is a mypy error), plus the warnings
    met while reading them. Every attribute is a key of ``KEYS``; a test holds the two together."""

    __slots__ = (*KEYS, "warnings")
    save_every: int
    final_save_min: int
    recent_sessions: int
    context_chars: int
    recall_limit: int
    auto_recall: bool
    clear_older_than: int
    trash_days: int
    enabled: bool
    notices: bool
    debug: bool
    sync: bool
    team: bool
    redact_patterns: list[str]
    project: str | None

    def __init__(self, values: dict[str, Any], warnings: list[str]) -> None:
        for key in KEYS:
            setattr(self, key, values[key])
        self.warnings = warnings

    def as_dict(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in KEYS}


MAX_FILE_BYTES = 64 << 10  # a config file is a dozen lines; anything bigger is not one
MAX_NESTING = 64
_BOUNDS = {  # kind: (lowest, highest, what to write)
    "posint": (1, 1_000_000, "a positive whole number"),
    "nonneg": (0, 1_000_000, "a whole number, 0 or more"),
    "days": (1, 36_500, "a whole number of days from 1 to 36500"),
    "context": (500, 9500, "a whole number from 500 to 9500"),
}


def _shown(value: Any) -> str:
    """A value as a message may quote it: short, whatever its size or nesting."""
    import reprlib

    short = reprlib.Repr()
    short.maxlevel, short.maxstring, short.maxother = 2, 40, 40
    text = short.repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _check(key: str, value: Any, where: str) -> tuple[Any, str | None]:
    """Return ``(value, None)`` if valid, else ``(default, warning)``. Any value of any type is answered."""
    default, kind, _ = KEYS[key]
    ok = False
    need = "a folder name"
    if kind in _BOUNDS:
        low, high, need = _BOUNDS[kind]
        if isinstance(value, str):
            text = value.strip()
            digits = text[1:] if text.startswith("-") else text
            if digits.isascii() and digits.isdigit() and len(digits) <= 9:  # not "²", not 10**100
                value = int(text)
        ok = isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
    elif kind == "bool":
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            value = value.strip().lower() in _TRUE
        ok = isinstance(value, bool)
        need = "true or false"
    elif kind == "patterns":
        if isinstance(value, str):
            try:
                value = jsonio.loads(value) if value.strip().startswith("[") else [value]
            except (ValueError, RecursionError):
                value = None
        ok = isinstance(value, list) and len(value) <= 50 and all(isinstance(p, str) and len(p) <= 500 for p in value)
        if ok:
            import re

            from keeper.redact import unsafe

            try:
                for pattern in value:
                    re.compile(pattern)
                    why = unsafe(pattern)
                    if why:
                        return default, (
                            f"{where}: redact_patterns: {_shown(pattern)} could take exponential time "
                            f"({why}); write it without that (see docs/SECURITY.md); ignoring these patterns"
                        )
            except (re.error, RecursionError, OverflowError) as exc:
                return default, f"{where}: redact_patterns: {exc}; ignoring these patterns"
        need = "a list of at most 50 regular expressions"
    else:  # pin
        ok = value is None or (isinstance(value, str) and len(value) <= 200)
    if ok:
        return value, None
    return default, f"{where}: {key} must be {need} (got {_shown(value)}); using {default!r}"


def _flow_depth(text: str) -> int:
    """How deep ``[`` and ``{`` nest, counted in one pass: PyYAML takes seconds on 30,000 levels
    before it fails, so such a file is turned away first (Keeper's settings nest at most twice)."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(depth - 1, 0)
    return deepest


def _parse_yaml_file(path: str) -> tuple[dict[str, Any], list[str]]:
    """A config file's valid values and warnings. The file is untrusted input: a cloned repository
    brings its own ``.claude/keeper.yaml``. So it is read only up to ``MAX_FILE_BYTES``, and YAML
    anchors and aliases (which Keeper's settings never need, and which make "billion laughs"
    bombs) are refused before anything is built; deep nesting fails cleanly."""
    import yaml

    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return {}, [f"{path}: cannot read it ({exc.strerror or exc}); using the defaults for its keys"]
    if len(raw) > MAX_FILE_BYTES:
        return {}, [f"{path}: larger than {MAX_FILE_BYTES // 1024} KB, so not a Keeper config; ignoring the file"]
    try:
        text = raw.decode("utf-8-sig")
        if _flow_depth(text) > MAX_NESTING:
            return {}, [f"{path}: nested more than {MAX_NESTING} levels deep; ignoring the file"]
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(token, (yaml.AliasToken, yaml.AnchorToken)):
                return {}, [f"{path}: YAML anchors and aliases (& and *) are not supported; ignoring the file"]
        data = yaml.safe_load(text)
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError, ValueError) as exc:
        reason = " ".join(str(exc).split())[:200] if not isinstance(exc, RecursionError) else "nested too deeply"
        return {}, [f"{path}: cannot read it ({reason}); using the defaults for its keys"]
    if data is None:
        return {}, []
    if not isinstance(data, dict):
        return {}, [f"{path}: expected key: value lines, got {type(data).__name__}; ignoring the file"]
    values: dict[str, Any] = {}
    warnings: list[str] = []
    for key, raw_value in data.items():
        if key not in KEYS:
            known = ", ".join(KEYS)
            warnings.append(f"{path}: unknown key {_shown(key)} ignored (known keys: {known})")
            continue
        value, warning = _check(key, raw_value, path)
        if warning:
            warnings.append(warning)
        else:
            values[key] = value
    return values, warnings[:20]


def _cache_file(path: str) -> str:
    return paths.cache_file(f"config-{identity.project_id(path)}.json")


class Cached(Record):
    """A config file as parsed, cached in ``cache/config-<id>.json``: the file's ``[mtime_ns, size]``
    when it was parsed, its valid values and its warnings. An entry of any other shape has no stamp,
    so the file is parsed again (the values are checked again on use: a cache is never trusted)."""

    __slots__ = ("stamp", "values", "warnings")

    def __init__(
        self, stamp: list[int] | None = None, values: dict[str, Any] | None = None, warnings: list[str] | None = None
    ) -> None:
        self.stamp, self.values, self.warnings = stamp, values or {}, warnings or []

    @classmethod
    def parse(cls, data: object) -> Cached:
        found = data if isinstance(data, dict) else {}
        stamp, values, warnings = found.get("stamp"), found.get("values"), found.get("warnings")
        if not (
            isinstance(stamp, list)
            and len(stamp) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) for n in stamp)
            and isinstance(values, dict)
            and isinstance(warnings, list)
            and all(isinstance(w, str) for w in warnings)
        ):
            return cls()
        return cls(stamp, values, warnings)

    def dump(self) -> str:
        return jsonio.dumps({"stamp": self.stamp, "values": self.values, "warnings": self.warnings})


def read_file(path: str) -> tuple[dict[str, Any], list[str]] | None:
    """A config file's valid values and warnings, or None when it does not exist."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    import stat as stat_module

    if not stat_module.S_ISREG(st.st_mode):  # a FIFO or a device would hang or flood the hook
        return {}, [f"{path}: not a regular file; ignoring it"]
    stamp = [st.st_mtime_ns, st.st_size]
    cache = _cache_file(path)
    from keeper.store.fsutil import atomic_write, read_json

    cached = Cached.parse(read_json(cache))
    if cached.stamp == stamp:
        checked = {k: v for k, v in cached.values.items() if k in KEYS and _check(k, v, path)[1] is None}
        if len(checked) == len(cached.values):
            return checked, list(cached.warnings)  # a damaged cache entry is re-parsed, never trusted
    values, warnings = _parse_yaml_file(path)
    try:
        atomic_write(cache, Cached(stamp, values, warnings).dump())
    except OSError:
        pass  # the cache is an optimisation; a read-only store still works
    return values, warnings


def files(project_root: str | None) -> list[str]:
    """The settings files ``load`` reads, lowest layer first (existing or not)."""
    layers = [paths.global_config_file()]
    if project_root is not None:
        layers.append(os.path.join(project_root, paths.PROJECT_CONFIG))
    return layers


def load(project_root: str | None) -> Config:
    """Merge the layers for a project (``None``: global file and environment only)."""
    values = dict(DEFAULTS)
    warnings: list[str] = []
    for index, path in enumerate(files(project_root)):
        found = read_file(path)
        if found is None:
            continue
        file_values, file_warnings = found
        if index == 0 and file_values.get("project") is not None:
            file_warnings.append(
                f"{path}: project: belongs in a project's .claude/keeper.yaml, not the global file; ignored"
            )
            file_values.pop("project")
        if index == 1 and file_values.get("team") is True and values["team"] is False:
            file_values.pop("team")  # a repository may turn its team notes off, never on against the user
            file_warnings.append(f"{path}: team: true ignored; your own config turned team notes off")
        values.update(file_values)
        warnings.extend(file_warnings)
    for key in KEYS:
        raw = os.environ.get("KEEPER_" + key.upper())
        if raw is None or key == "project":
            continue
        try:
            value, warning = _check(key, raw, "environment variable KEEPER_" + key.upper())
        except ValueError:
            value, warning = KEYS[key][0], f"KEEPER_{key.upper()}: not valid JSON; using the default"
        if warning:
            warnings.append(warning)
        else:
            values[key] = value
    return Config(values, warnings)
