"""The house rules, checked: modules in floors with imports only downward, and each says its job."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "keeper"

# Lowest floor first. A module may import only modules on lower floors (or its own).
FLOORS: list[set[str]] = [
    {"stemmer", "lexicon", "dates"},
    {"errors", "jsonio", "markdown", "redact", "tokens", "saveformat", "shell", "bootstrap", "hubpage"},
    {"paths"},
    {"fsutil"},
    {"log", "config", "counters", "transcript", "memory", "install"},
    {"migrate", "sessions", "pins", "archive"},
    {"resolve", "record", "chunks", "projects"},
    {"saving", "index"},
    {"search", "briefing", "trash", "hub"},
    {"context"},
    {"prompts", "status", "doctor"},
    {"hooks", "demo"},
    {"cli"},
    {"__main__"},
]


def _floor(module: str) -> int:
    return next(i for i, floor in enumerate(FLOORS) if module in floor)


def _runtime_imports(path: Path) -> set[str]:
    """Keeper modules a file imports at run time (anywhere in it; ``if TYPE_CHECKING:`` blocks excepted)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
        for stmt in block.body
        for node in ast.walk(stmt)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "keeper":
                found.update(alias.name for alias in node.names if alias.name != "__version__")
            elif node.module.startswith("keeper."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("keeper."))
    return found


MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")


def test_every_module_has_a_floor() -> None:
    placed = set().union(*FLOORS)
    assert set(MODULES) == placed, (set(MODULES) - placed, placed - set(MODULES))


@pytest.mark.parametrize("module", MODULES)
def test_imports_only_go_down(module: str) -> None:
    upward = {
        name for name in _runtime_imports(PACKAGE / f"{module}.py") if name != module and _floor(name) >= _floor(module)
    }
    assert not upward, f"{module} (floor {_floor(module)}) imports {upward} from its own floor or above"


@pytest.mark.parametrize("module", [*MODULES, "__init__"])
def test_every_module_opens_with_its_job(module: str) -> None:
    doc = ast.get_docstring(ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8")))
    assert doc and len(doc.split()) >= 5, module


def test_the_package_init_holds_only_the_version() -> None:
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    assert not [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)) and n.module != "__future__"]
