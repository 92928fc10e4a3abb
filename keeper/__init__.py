"""Keeper: local, automatic per-project memory for Claude Code."""

from __future__ import annotations

__version__ = "0.4.0"
