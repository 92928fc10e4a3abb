"""What a session start keeps so that the next one does not redo or rewrite it, and why that never
changes what the start shows (speed itself is measured in benchmarks/hooks.py)."""

from __future__ import annotations

import os
from pathlib import Path

from keeper.hooks import marks
from keeper.store import identity, paths, provenance


def project_of(root: Path) -> paths.Project:
    return identity.make_project(identity.find_project_root(str(root)))


def test_a_start_that_shows_the_same_items_again_leaves_the_shown_list_alone(project_dir: Path) -> None:
    project = project_of(project_dir)
    os.makedirs(project.state)
    marks.remember_shown(project, "s1", {"0000abcd", "1234beef"})
    path = provenance.shown_file(project, "s1")
    os.utime(path, (1_000_000_000, 1_000_000_000))
    marks.remember_shown(project, "s1", {"1234beef", "0000abcd"})  # a resume that shows the same items
    assert os.stat(path).st_mtime == 1_000_000_000
    assert Path(path).read_text(encoding="utf-8") == "0000abcd 1234beef"


def test_other_items_shown_replace_the_list_with_a_new_file_not_a_rewrite_in_place(project_dir: Path) -> None:
    project = project_of(project_dir)
    os.makedirs(project.state)
    marks.remember_shown(project, "s1", {"0000abcd"})
    path = provenance.shown_file(project, "s1")
    earlier = os.path.join(project.state, "earlier")
    os.link(path, earlier)  # sees the old file's data, whatever happens to its name
    marks.remember_shown(project, "s1", {"1234beef", "5678cafe"})
    assert Path(path).read_text(encoding="utf-8") == "1234beef 5678cafe"
    assert Path(earlier).read_text(encoding="utf-8") == "0000abcd"  # not truncated and rewritten in place
