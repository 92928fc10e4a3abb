"""What the CLI writes to a console or pipe (UTF-8, whatever the code page) and how it reads stdin.

On Windows a piped stdout is in the ANSI code page (cp1252 for Western Europe), and the launchers
start Python with ``-I``, so ``PYTHONUTF8`` cannot help: a reply holding ``→`` or ``日本`` would
crash part-way. Claude Code, Git Bash and PowerShell 7 read a program's output as UTF-8, so every
command writes UTF-8. Input is the other way round: ``echo Zoë café | keeper save`` in cmd sends
the console's code page, which is decoded as such rather than stored as U+FFFD.
"""

from __future__ import annotations

import os
import sys

from keeper.errors import KeeperError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn


def utf8_output() -> None:
    """Make stdout and stderr UTF-8 (their error handling kept), once, before the first print."""
    for stream in (sys.stdout, sys.stderr):
        encoding = str(getattr(stream, "encoding", "") or "")
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and encoding.lower().replace("-", "").replace("_", "") != "utf8":
            reconfigure(encoding="utf-8", errors=stream.errors)


def input_encodings() -> list[str]:
    """The encodings stdin may be in besides UTF-8, as the system says: on Windows the console's
    input code page (what ``chcp`` set, what cmd's ``echo`` writes into a pipe) when there is a
    console, else the ANSI code page; elsewhere the locale's encoding."""
    import locale

    found: list[str] = []
    if sys.platform == "win32":
        import ctypes

        page = int(ctypes.windll.kernel32.GetConsoleCP())
        if page:
            found.append(f"cp{page}")
    found.append(locale.getpreferredencoding(False))
    return found


def decode_input(data: bytes, what: str) -> str:
    """``data`` read from stdin as text: UTF-8, else the console's or system's code page; refused,
    with what to do, when neither decodes it (never turned into U+FFFD without a word)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem = exc
    for encoding in input_encodings():
        try:
            if encoding.lower().replace("-", "").replace("_", "") != "utf8":
                return data.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
    byte = data[problem.start : problem.start + 1].hex()
    raise KeeperError(
        f"{what} is not UTF-8 (byte 0x{byte} at offset {problem.start}) nor in this system's code page "
        f"({', '.join(input_encodings())}); nothing was saved. "
        "Send the text as UTF-8, or use flags such as --summary TEXT."
    )


def end(code: int) -> NoReturn:
    """End the process at once, stdout and stderr flushed: without the interpreter's teardown (every
    module freed, the cycle collector's last passes), a tenth of a hook's or a recall's instructions.
    Only for a process that leaves nothing open: each file Keeper writes is closed where it is written
    (tests/test_startup.py checks every hook), and Keeper registers no exit handler."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the reader went away, or the stream was closed: nothing to keep
            pass
    os._exit(code)
