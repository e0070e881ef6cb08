"""Self-contained HTML dashboard: one file, no network, all model output escaped.

The page's data (:mod:`callbench.report.payload`) is embedded as JSON in a
``<script type="application/json">`` element and rendered client-side (text nodes only), rows
lazily, so reports over 10,000 cases stay responsive. The script is the modules of
``templates/js`` joined in :data:`JS_MODULES` order inside one function scope; the style sheet is
``templates/css`` joined the same way.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from callbench.report.payload import build_payload, load_runs

JS_MODULES = (
    "core",
    "data",
    "overview",
    "reviews",
    "breakdowns",
    "charts",
    "cases",
    "panel",
    "export",
    "live",
    "main",
)
"""Script modules in the order they are joined (a later module may call an earlier one at load)."""
CSS_MODULES = ("core", "overview", "reviews", "breakdowns", "cases", "panel", "export", "live")
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
    """Render the dashboard page for a payload from :func:`build_payload`."""
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = env.from_string(_asset("report.html.j2"))
    return template.render(
        title=title,
        css=jinja2.utils.markupsafe.Markup(page_style()),
        js=jinja2.utils.markupsafe.Markup(page_script()),
        data_json=jinja2.utils.markupsafe.Markup(script_json(payload)),
    )


def write_report(run_dirs: Sequence[str | Path], output: str | Path, title: str | None = None) -> Path:
    """Write the self-contained report for one or more run directories.

    Raises:
        UserError: when no run directory is given or one is unreadable.
    """
    runs = load_runs(run_dirs)
    out = Path(output)
    page = render_html(build_payload(runs), title or "callbench report")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out
