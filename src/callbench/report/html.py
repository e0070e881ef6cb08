"""Self-contained HTML dashboard: one file, no network, all model output escaped.

The page's data (:mod:`callbench.report.payload`) is embedded as JSON in a
``<script type="application/json">`` element and rendered client-side (text nodes only), rows
lazily, so reports over 10,000 cases stay responsive. :func:`write_report` streams: the records
are read one at a time and the page is written piece by piece (its big arrays copied from
temporary files), so memory does not grow with the page. The script is the modules of
``templates/js`` joined in :data:`JS_MODULES` order inside one function scope; the style sheet is
``templates/css`` joined the same way.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import IO, Any

import jinja2

from callbench.harness.runfolder import bulk_load
from callbench.report.payload import PageBuilder, Spool, open_runs

JS_MODULES = (
    "core",
    "data",
    "overview",
    "reviews",
    "judgeaudit",
    "breakdowns",
    "failures",
    "charts",
    "costchart",
    "cases",
    "panel",
    "export",
    "live",
    "main",
)
"""Script modules in the order they are joined (a later module may call an earlier one at load)."""
CSS_MODULES = (
    "core",
    "overview",
    "reviews",
    "judgeaudit",
    "breakdowns",
    "failures",
    "cases",
    "panel",
    "export",
    "live",
)
"""Style sheets in the order they are joined (missing ones are skipped)."""

# JSON inside <script> must not contain "</script>" or "<!--"; escaping <, > and & as \u
# sequences keeps the JSON identical after parsing and makes breaking out impossible.
_SCRIPT_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def script_json(value: Any) -> str:
    """Serialise ``value`` for embedding inside a ``<script>`` element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.translate(_SCRIPT_ESCAPES)


def _asset(name: str) -> str:
    templates = resources.files("callbench.report").joinpath("templates")
    return templates.joinpath(name).read_text(encoding="utf-8")


def page_script() -> str:
    """The page's script: every module of ``templates/js`` inside one function scope."""
    body = "\n".join(_asset(f"js/{name}.js") for name in JS_MODULES)
    return f'"use strict";\n(function () {{\n{body}\n}})();\n'


def page_style() -> str:
    """The page's style sheet: the ``templates/css`` files that exist, in :data:`CSS_MODULES` order."""
    folder = resources.files("callbench.report").joinpath("templates", "css")
    return "\n".join(
        folder.joinpath(f"{name}.css").read_text(encoding="utf-8")
        for name in CSS_MODULES
        if folder.joinpath(f"{name}.css").is_file()
    )


def render_html(payload: dict[str, Any], title: str = "callbench report") -> str:
    """Render the dashboard page for a payload from :func:`~callbench.report.payload.build_payload`."""
    return _render(title, script_json(payload))


def _render(title: str, data_json: str) -> str:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = env.from_string(_asset("report.html.j2"))
    return template.render(
        title=title,
        css=jinja2.utils.markupsafe.Markup(page_style()),
        js=jinja2.utils.markupsafe.Markup(page_script()),
        data_json=jinja2.utils.markupsafe.Markup(data_json),
    )


def write_report(run_dirs: Sequence[str | Path], output: str | Path, title: str | None = None) -> Path:
    """Write the self-contained report for one or more run directories.

    The records are streamed (:meth:`~callbench.report.payload.PageBuilder.read_run`) and the
    page written in pieces to a temporary file beside ``output``, renamed into place when whole.

    Raises:
        UserError: when no run directory is given or one is unreadable.
    """
    runs = open_runs(run_dirs)
    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        with PageBuilder(runs) as builder, bulk_load():
            for index in range(len(runs)):
                builder.read_run(index)
            with tmp.open("wb") as handle:
                write_page(handle, builder, title or "callbench report")
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def write_page(handle: IO[bytes], builder: PageBuilder, title: str) -> None:
    """Write the page of ``builder``'s data to ``handle``: the small part of the data serialised
    at once, each big array copied from its temporary file in place of a placeholder."""
    token = secrets.token_hex(8)  # placeholders no page text can contain
    spools: list[Spool] = []

    def placeholder(spool: Spool) -> str:
        spools.append(spool)
        return f"\x00{token}:{len(spools) - 1}"

    data = script_json(builder.data(placeholder))
    marker = f"\x00{token}:page"
    head, tail = _render(title, marker).split(marker)
    handle.write(head.encode())
    # script_json writes a placeholder as the JSON string "\u0000<token>:<n>".
    pieces = re.split(r'"\\u0000' + token + r':(\d+)"', data)
    for i, piece in enumerate(pieces):
        if i % 2:
            spools[int(piece)].write_array(handle)
        else:
            handle.write(piece.encode())
    handle.write(tail.encode())
