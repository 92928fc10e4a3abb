"""Keeper's commands, one module each (or a close pair), beside the parser in ``keeper.cli``.

The top rank: may import every package below it and the leaves; nothing imports a command but
``keeper.cli``, which loads each one only when it runs.
"""
