"""Capture: the save format, saving what Claude sends, and reading what a session did from its transcript.

Imports ``keeper.store``, ``keeper.memory.document.document`` and the leaves; never recall, hooks or the hub.
"""
