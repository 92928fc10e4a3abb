"""``python -m keeper``: the same as the ``keeper`` console script."""

from __future__ import annotations

from keeper.cli import main

raise SystemExit(main())
