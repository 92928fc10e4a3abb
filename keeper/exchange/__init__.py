"""Memory that arrives from elsewhere (``keeper import``, ``keeper sync``) and how it lands here once.

Owns the one landing path every arrival goes through (``landing``), what decides whether what
arrives is already here: the one identity of a session file, whichever road brought it
(``sessions``), how each kind of durable file merges with another machine's copy (``kinds``), what
a folder removed since it last sent its files (``removed``), and which arriving lines of memory.md
are Keeper's (``owned``). May import ``keeper.store``, ``keeper.memory`` and the standard-library
leaves; ``keeper.sync`` and the commands import it.
"""
