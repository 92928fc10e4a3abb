"""The Memory Hub's page: its HTML around ``page.css`` and ``page.js`` (package data), with the data put in.

One self-contained file that works from ``file://``: system fonts, no images, no requests of any
kind, and a Content-Security-Policy saying so (``default-src 'none'``, the script allowed by its
hash only, so even text that slipped through as markup could not run). The script builds every
element with ``textContent``; memory text is never parsed as HTML. Markdown is rendered by a small
renderer here (headings, lists, code, bold, links shown as text).

The data (``<script type="application/json" id="data">``): ``projects`` (see ``projects.Info``,
plus ``memory``, ``hooks``, ``days``), ``sessions`` as rows ``[project, file, start, summary,
first prompt, files, saves, tool uses, branch, record]`` newest first, ``records`` (whole session
files, newest first), ``events`` as ``[project, when, kind, text, file]``, ``left_out`` counts.

The URL fragment drives the page, so a link or a test can open any view: ``#q=words`` searches,
``#project=ID`` opens a project (``&session=FILE`` a session in it, ``&day=YYYY-MM-DD`` one
day), ``#day=YYYY-MM-DD`` lists a day, and ``theme=dark`` or ``theme=light`` overrides the
system's colour scheme. Timings land on ``<html>`` for ``benchmarks/hub.py``: ``data-ready-ms``
(navigation start to the first view drawn), ``data-script-ms`` (this script's own share of it),
``data-index-ms`` and ``data-search-ms``.
"""

from __future__ import annotations

import os


def _asset(name: str) -> str:
    """One of the page's files shipped beside this module (package data)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), name), encoding="utf-8") as fh:
        return fh.read()


def page(data: str, sessions: str, records: str) -> str:
    """The whole page around its data, each part already escaped for a script element (``hub.script_json``)."""
    import base64
    import hashlib

    script = _asset("page.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    policy = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'; form-action 'none'"
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="color-scheme" content="light dark">\n'
        f"<title>Keeper · Memory Hub</title>\n<style>{_asset('page.css')}</style>\n</head>\n<body>\n"
        f'<script type="application/json" id="data">{data}</script>\n'
        f"<script>{script}</script>\n"  # before the sessions: the overview is drawn while they load
        f'<script type="application/json" id="sessions">{sessions}</script>\n'
        f'<script type="application/json" id="records">{records}</script>\n'
        "</body>\n</html>\n"
    )
