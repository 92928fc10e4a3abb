"""Memory on every machine: ``keeper sync`` over a git remote the user brings.

Owns the git runner (``git``), the recorded remote and this machine's id (``remote``), how store
files map into the sync repository and which project a remote folder is (``mirror``), the merge of
this machine's memory with the remote's (``engine``) and the detached runs the hooks start
(``background``). May import ``keeper.store``, ``keeper.memory`` and the standard-library leaves.
"""
