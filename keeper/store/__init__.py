"""The store: where memory lives on this machine, which project a folder is, and how files are written.

Owns the layout (every path classified durable, machine-local or derived), project identity,
configuration, pins, session files, counters, the trash and migrations. Imports only the
standard-library leaves of ``keeper`` and ``keeper.memory.document.document``.
"""
