"""Claims about a tree, taken mechanically, and judged against another tree: git is the truth.

Three classes, as bench/rot defines them: a path exists; a top-level function or class is defined in
a named file; a module constant holds a literal. Each becomes a memory item citing it the way a
developer writes one (`parse_order` in `src/x/y.py` ...).
"""

from __future__ import annotations

import ast
import random
import re
from dataclasses import asdict, dataclass
from typing import Any

from drive import files_at, show

CLASSES = ("path", "symbol", "literal")
MAX_LITERAL = 60  # a constant's repr longer than this is not one a developer would cite
WROTE_LINES = 30  # lines of a definition (or a file's head) the saving session wrote, at most


@dataclass(frozen=True)
class Claim:
    kind: str
    path: str
    name: str = ""
    value: str = ""  # the literal's repr
    wrote: str = ""  # what the saving session wrote at t0: the definition, the assignment, the file's head

    def text(self) -> str:
        """The memory item: a decision citing the claim."""
        if self.kind == "path":
            return f"`{self.path}` is where this code lives; change it there."
        if self.kind == "symbol":
            return f"`{self.name}` in `{self.path}` is the one place that does this; call it, do not copy it."
        return f"`{self.name} = {self.value}` in `{self.path}`; the callers assume this value."

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "text": self.text()}


def _tree(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _symbols(module: ast.Module) -> dict[str, tuple[int, int]]:
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {node.name: _span(node) for node in module.body if isinstance(node, kinds)}


def _span(node: ast.stmt) -> tuple[int, int]:
    """A statement's first line (its decorators included) and last line, 1-based."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return first, node.end_lineno or node.lineno


def _literals(module: ast.Module) -> dict[str, tuple[str, tuple[int, int]]]:
    found: dict[str, tuple[str, tuple[int, int]]] = {}
    for node in module.body:
        target = _assigned(node)
        value = getattr(node, "value", None)
        if target is None or not isinstance(value, ast.Constant) or value.value is Ellipsis:
            continue
        shown = repr(value.value)
        if len(shown) <= MAX_LITERAL and "\n" not in shown:
            found[target] = (shown, _span(node))
    return found


def _assigned(node: ast.stmt) -> str | None:
    """The name a module-level assignment binds: ``NAME = value`` or ``NAME: Final = value``."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _block(lines: list[str], span: tuple[int, int]) -> str:
    return "\n".join(lines[span[0] - 1 : min(span[1], span[0] - 1 + WROTE_LINES)])


def extract(mirror: str, commit: str, under: str) -> dict[str, list[Claim]]:
    """Every claim of each class the tree at ``commit`` makes under the folder ``under``."""
    found: dict[str, list[Claim]] = {kind: [] for kind in CLASSES}
    for path in files_at(mirror, commit, under):
        source = show(mirror, commit, path)
        if source is None or "\0" in source:
            continue
        lines = source.splitlines()
        found["path"].append(Claim("path", path, wrote=_block(lines, (1, len(lines)))))
        module = _tree(source) if path.endswith(".py") else None
        if module is None:
            continue
        for name, span in _symbols(module).items():
            if not (name.startswith("__") and name.endswith("__")):
                found["symbol"].append(Claim("symbol", path, name, wrote=_block(lines, span)))
        for name, (value, span) in _literals(module).items():
            found["literal"].append(Claim("literal", path, name, value, wrote=_block(lines, span)))
    return found


def sample(found: dict[str, list[Claim]], limit: int, seed: int) -> list[Claim]:
    """At most ``limit`` claims, a third of them per class where a class has enough (seeded)."""
    rng = random.Random(seed)
    share = {kind: min(len(found[kind]), limit // len(CLASSES)) for kind in CLASSES}
    spare = limit - sum(share.values())
    for kind in CLASSES:  # what a small class leaves goes to the others
        extra = min(spare, len(found[kind]) - share[kind])
        share[kind] += extra
        spare -= extra
    return [c for kind in CLASSES for c in sorted(rng.sample(found[kind], share[kind]), key=lambda c: (c.path, c.name))]


def holds(claim: Claim, mirror: str, commit: str, cache: dict[str, str | None]) -> bool:
    """Whether the claim is still true in the tree at ``commit``."""
    if claim.path not in cache:
        cache[claim.path] = show(mirror, commit, claim.path)
    source = cache[claim.path]
    if source is None:
        return False
    if claim.kind == "path":
        return True
    module = _tree(source)
    if module is None:  # unparsable at t1: fall back to the line itself
        return re.search(rf"^(async\s+def|def|class)\s+{re.escape(claim.name)}\b", source, re.M) is not None
    if claim.kind == "symbol":
        return claim.name in _symbols(module)
    now = _literals(module).get(claim.name)
    return now is not None and now[0] == claim.value
