"""Claude Code's hooks: the entry point, prompt-time answers, and what a session starts with.

The top of the data flow (hook JSON -> event -> store -> reply): may import capture, recall,
store, memory and the leaves, never the command line.
"""
