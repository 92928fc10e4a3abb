"""``keeper hub``: write the Memory Hub page, print its path, and open it on request."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def run(args: argparse.Namespace) -> int:
    from keeper.hub import build

    path = build.write(args.out)
    print(path)
    if args.open:
        import webbrowser
        from pathlib import Path

        webbrowser.open(Path(path).as_uri())
    return 0
