"""One table of save keys (keeper/memory/savekeys.py): the parser, keeper save's flags and memory.md's
sections all take their keys from it, so a new key is one row (and its merge rule)."""

from __future__ import annotations

import argparse

from keeper import cli
from keeper.capture import saveformat
from keeper.memory import document, savekeys


def _save_parser() -> argparse.ArgumentParser:
    parser = cli.build_parser("save")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found = sub.choices["save"]
    assert isinstance(found, argparse.ArgumentParser)
    return found


def test_every_key_of_the_table_is_read_by_the_parser_the_flags_and_memory_md() -> None:
    flags = {option: action for action in _save_parser()._actions for option in action.option_strings}
    for key in savekeys.KEYS:
        parsed = saveformat.parse(f"{key.name}: a value\n")
        assert not parsed.unknown and key.name in parsed.values, key.name
        if key.flag:
            assert flags[key.flag].help == key.help
        assert (key.name in document.TYPED) == (key.merge == "typed")
        if key.merge == "typed":
            assert document.SECTIONS[key.name] == (key.title, key.headings)
            assert key.headings[0] == " ".join("".join(c if c.isalnum() else " " for c in key.title.lower()).split())


def test_every_flag_that_can_be_given_again_says_so_in_its_help() -> None:
    """``keeper save --help``: each list key's flag appends, and its help says "(repeatable)"."""
    flags = {option: action for action in _save_parser()._actions for option in action.option_strings}
    for key in savekeys.KEYS:
        if key.flag:
            repeats = isinstance(flags[key.flag], argparse._AppendAction)
            assert repeats == (key.kind == "list") and ("(repeatable)" in key.help) == repeats, key.flag
