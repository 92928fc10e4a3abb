"""Recall: search terms, the memory sources and scopes, the derived index and ranking.

Imports ``keeper.store``, ``keeper.memory.document.document`` and the leaves; never capture, hooks or the hub.
"""
