"""Memory documents: what an item is, memory.md's sections, merging a save, merging two or three documents.

Pure text in, text out: no files, no clock of its own. Imports only the standard-library leaves
of ``keeper``.
"""
