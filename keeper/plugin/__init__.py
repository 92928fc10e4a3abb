"""The plugin install: the one-time set-up of Keeper's own environment and what the launchers share.

``bootstrap`` runs as a script with the standard library only; ``install`` reads Claude Code's
plugin records. May import store and the leaves.
"""
