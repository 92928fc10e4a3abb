"""``python -m keeper`` and the ``keeper`` console script (pyproject's entry point, ``command``).

A hook goes straight to the hook entry, so the console script an installer writes loads what the
launcher's Python loads and this small module, never the command line's parser; anything else is
the command line's.
"""

from __future__ import annotations

import sys


def command() -> int:
    args = sys.argv[1:]
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):
        from keeper.hooks import entry

        entry.main(args[1:])
    from keeper import cli

    return cli.main()


if __name__ == "__main__":
    raise SystemExit(command())
