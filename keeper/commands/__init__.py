"""Keeper's commands, one module each (or a close pair), beside the parser in ``keeper.cli``.

The top rank: may import every package below it, the leaves and each other (``common`` holds what
they share), never ``keeper.cli``, which loads each command by name only when it runs.
"""
