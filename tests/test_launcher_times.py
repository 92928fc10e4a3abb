"""The launcher's file times: a Stop's or a prompt's record tells a file by a twin dated as Keeper found
it, and bash compares the two with ``-nt``/``-ot``. bash 4.3 and later compare to the nanosecond; 4.1
and 4.2 (which reach the launcher: bin/keeper runs its fast paths under 4.1+) compare whole seconds,
so there a file put in place with an mtime in the same second would pass for the one Keeper read: no
twin holds there, and Python decides. Checked by hand against a real bash 4.2 built from bash's own
repository (2026-11-28): without the guard the file put in place passed; with it no twin holds. No
package here ships a bash that old, so the tests below set what such a bash sets."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import REPO
from tests.test_launcher_counter import pytestmark as counter_marks

pytestmark = counter_marks
FOUND = 1_800_000_000_500_000_000  # the mtime Keeper read, half way through a second
HOLD = '. "$1/launcher/count.bash" || exit 2\n{}\nkeeper_files_hold "$2" @ <"$2" && echo holds || echo differs'


def record(folder: Path, replaced: bool) -> Path:
    """A record of one file and its twin, the file put in place since with an mtime a microsecond later."""
    held, twin, kept = folder / "memory.md", folder / "record.1a2b.0", folder / "record"
    for path in (held, twin):
        path.write_text("as Keeper read it\n", encoding="utf-8")
        os.utime(path, ns=(FOUND, FOUND))
    kept.write_text(f"+{held}\n@{twin}\nend\n", encoding="utf-8")
    os.utime(kept, ns=(FOUND + 5 * 10**9, FOUND + 5 * 10**9))
    if replaced:  # as mv, cp -p or rsync -a leave it: another file, dated within the same second
        other = folder / "other.md"
        other.write_text("written since\n", encoding="utf-8")
        os.utime(other, ns=(FOUND + 1000, FOUND + 1000))
        os.replace(other, held)
    return kept


def hold(bash: str, kept: Path, setup: str = "") -> str:
    done = subprocess.run(
        [bash, "-c", HOLD.format(setup), "hold", str(REPO), str(kept)], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_a_file_put_in_place_within_the_same_second_is_told_apart(tmp_path: Path) -> None:
    assert hold("bash", record(tmp_path, replaced=False)) == "holds"
    assert hold("bash", record(tmp_path, replaced=True)) == "differs"


def test_where_bash_compares_whole_seconds_no_twin_holds(tmp_path: Path) -> None:
    """As bash 4.1 and 4.2 set it (this bash compares to the nanosecond): even an unchanged file's
    twin does not hold, so the Stop and the prompt go to Python."""
    kept = record(tmp_path, replaced=False)
    assert hold("bash", kept, "keeper_ns_times=") == "differs"
    assert hold("bash", kept, "[[ -n $keeper_ns_times ]] || exit 3") == "holds"  # this bash is 4.3 or later
