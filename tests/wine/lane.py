"""The Windows lane's pytest plugin (``-p tests.wine.lane``, loaded there only): skip the tests
that need a tool the lane does not have, saying which.

The lane is the embeddable Windows CPython under Wine with no git for Windows, no browser and no
pip (nor Node: ``tests/e2e``, which drives Claude Code, is not collected there). A test says what
it needs with ``@pytest.mark.needs("git")``; everywhere else those tests run (CI has every tool).
"""

from __future__ import annotations

import pytest

MISSING = {
    "git": "the Windows lane has no git for Windows",
    "chromium": "the Windows lane has no browser",
    "pip": "the embeddable Windows CPython has no pip",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for marker in item.iter_markers("needs"):
            missing = [MISSING[tool] for tool in marker.args if tool in MISSING]
            if missing:
                item.add_marker(pytest.mark.skip(reason="; ".join(missing)))
