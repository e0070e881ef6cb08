"""What ``fetch_url_content`` makes of a page in its ``truncate`` and ``markdown`` modes.

BFCL's backend uses BeautifulSoup for ``truncate`` and html2text for ``markdown``; neither is a
dependency of callbench (html2text is GPL-licensed), so both modes are written here on the standard
library's HTML parser:

* :func:`page_text` (``truncate``) follows BeautifulSoup's rule exactly as BFCL calls it: ``script``
  and ``style`` elements removed, then every text node (CDATA included, comments and declarations
  not) stripped of surrounding whitespace, empty ones dropped, the rest joined with newlines;
* :func:`page_markdown` (``markdown``) writes Markdown in html2text's default style (``#`` headings,
  ``**bold**``, ``_italic_``, ``[text](href)`` links, ``  * `` and ``  1. `` list items, ``> ``
  quotes, four-space code blocks, ``* * *`` rules, ``a | b`` tables, paragraphs wrapped at 78
  columns, ``head``, ``script`` and ``style`` left out). It is not byte-identical to html2text's
  output: the model reads the same content, laid out alike.
"""

from __future__ import annotations

import html
import re
import textwrap
from html.parser import HTMLParser

WRAP = 78
"""html2text's default body width."""
_SPACE = re.compile(r"\s+")
_BLOCKS = frozenset(
    {"p", "div", "section", "article", "header", "footer", "main", "nav", "aside", "figure", "form",
     "dl", "dt", "dd", "address", "center", "fieldset", "details", "summary", "caption", "figcaption"}
)  # fmt: skip
_HIDDEN = frozenset({"head", "script", "style", "template", "noscript"})
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
)


class _TextNodes(HTMLParser):
    """Text nodes outside ``script`` and ``style``, each the run of text between two tags; character
    references read as BeautifulSoup reads them (an unknown ``&name;`` stays ``&name``; a number
    below 256 is a windows-1252 byte where that decodes)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.nodes: list[str] = []
        self.pending: list[str] = []
        self.skipping: str | None = None
        self.template = 0

    def _flush(self) -> None:
        if self.pending:
            if not self.template:  # text inside <template> is not the page's text
                self.nodes.append("".join(self.pending))
            self.pending = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._flush()
        if tag in ("script", "style") and self.skipping is None:
            self.skipping = tag
        elif tag == "template":
            self.template += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._flush()

    def handle_endtag(self, tag: str) -> None:
        self._flush()
        if tag == self.skipping:
            self.skipping = None
        elif tag == "template" and self.template:
            self.template -= 1

    def handle_data(self, data: str) -> None:
        if self.skipping is None:
            self.pending.append(data)

    def handle_entityref(self, name: str) -> None:
        known = html.unescape(f"&{name};")
        self.handle_data(f"&{name}" if known == f"&{name};" else known)

    def handle_charref(self, name: str) -> None:
        try:
            number = int(name[1:], 16) if name[:1] in ("x", "X") else int(name)
        except ValueError:
            number = -1
        text = ""
        if 0 <= number < 256:
            try:
                text = bytes([number]).decode("windows-1252")
            except UnicodeDecodeError:
                text = ""
        if not text:
            try:
                text = chr(number)
            except (ValueError, OverflowError):
                text = ""
        self.handle_data(text or "\N{REPLACEMENT CHARACTER}")

    def handle_comment(self, data: str) -> None:
        self._flush()

    def handle_decl(self, decl: str) -> None:
        self._flush()

    def handle_pi(self, data: str) -> None:
        self._flush()

    def unknown_decl(self, data: str) -> None:
        self._flush()
        if data.startswith("CDATA[") and self.skipping is None and not self.template:
            self.nodes.append(data[len("CDATA[") :])


def page_text(html: str) -> str:
    """The ``truncate`` mode: the page's text, one stripped text node a line (see the module doc)."""
    parser = _TextNodes()
    parser.feed(html)
    parser.close()
    parser._flush()
    return "\n".join(node.strip() for node in parser.nodes if node.strip())


class _Markdown(HTMLParser):
    """An HTML-to-Markdown writer in html2text's default style (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[tuple[str, bool]] = []  # (text, a list item)
        self.line: list[str] = []
        self.hidden = 0
        self.pre = 0
        self.quote = 0
        self.lists: list[str] = []  # the open lists' tags
        self.counters: list[int] = []  # items so far per open list
        self.prefix = ""
        self.heading = 0
        self.links: list[str | None] = []
        self.row: list[str] | None = None
        self.rows: list[list[str]] = []
        self.cell: list[str] | None = None

    # -- output ------------------------------------------------------------------------------
    def _text(self, text: str) -> None:
        if self.cell is not None:
            self.cell.append(text)
        else:
            self.line.append(text)

    def _end_block(self, wrap: bool = True) -> None:
        text = "".join(self.line)
        self.line = []
        if not text.strip():
            return
        text = _SPACE.sub(" ", text).strip()
        quote = "> " * self.quote
        prefix = self.prefix
        if wrap and not self.heading and len(text) > WRAP - len(prefix) - len(quote):
            indent = " " * len(prefix)
            text = "\n".join(
                textwrap.wrap(
                    text,
                    width=WRAP,
                    initial_indent=quote + prefix,
                    subsequent_indent=quote + indent,
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )
        else:
            text = quote + prefix + text
        item = bool(self.prefix)
        self.prefix = ""
        self.blocks.append((text, item))

    # -- parser callbacks --------------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            if tag not in _VOID:
                self.hidden += 1
            return
        if self.hidden:
            return
        found = dict(attrs)
        if tag in _BLOCKS:
            self._end_block()
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._end_block()
            self.heading = int(tag[1])
            self.line.append("#" * self.heading + " ")
        elif tag == "br":
            if self.pre:
                self.line.append("\n")
            else:
                self._end_block()
        elif tag == "hr":
            self._end_block()
            self.blocks.append(("* * *", False))
        elif tag in ("ul", "ol"):
            self._end_block()
            self.lists.append(tag)
            self.counters.append(0)
        elif tag == "li":
            self._end_block()
            depth = max(len(self.lists) - 1, 0)
            if self.lists and self.lists[-1] == "ol":
                self.counters[-1] += 1
                self.prefix = "  " * depth + f"  {self.counters[-1]}. "
            else:
                self.prefix = "  " * depth + "  * "
        elif tag == "blockquote":
            self._end_block()
            self.quote += 1
        elif tag == "pre":
            self._end_block()
            self.pre += 1
        elif tag == "code" and not self.pre:
            self._text("`")
        elif tag in ("strong", "b"):
            self._text("**")
        elif tag in ("em", "i"):
            self._text("_")
        elif tag == "a":
            href = found.get("href")
            self.links.append(href)
            if href:
                self._text("[")
        elif tag == "img":
            alt = found.get("alt") or ""
            src = found.get("src") or ""
            if src:
                self._text(f"![{alt}]({src})")
        elif tag == "table":
            self._end_block()
            self.rows = []
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = []

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            if tag not in _VOID:
                self.hidden = max(self.hidden - 1, 0)
            return
        if self.hidden:
            return
        if tag in _BLOCKS or tag == "li":
            self._end_block()
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._end_block(wrap=False)
            self.heading = 0
        elif tag in ("ul", "ol"):
            self._end_block()
            if self.lists:
                self.lists.pop()
                self.counters.pop()
        elif tag == "blockquote":
            self._end_block()
            self.quote = max(self.quote - 1, 0)
        elif tag == "pre":
            text = "".join(self.line).strip("\n")
            self.line = []
            if text:
                self.blocks.append(("\n".join("    " + row for row in text.split("\n")), False))
            self.pre = max(self.pre - 1, 0)
        elif tag == "code" and not self.pre:
            self._text("`")
        elif tag in ("strong", "b"):
            self._text("**")
        elif tag in ("em", "i"):
            self._text("_")
        elif tag == "a":
            href = self.links.pop() if self.links else None
            if href:
                self._text(f"]({href})")
        elif tag in ("td", "th") and self.cell is not None:
            if self.row is not None:
                self.row.append(_SPACE.sub(" ", "".join(self.cell)).strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.rows.append(self.row)
            self.row = None
        elif tag == "table":
            self._table()

    def _table(self) -> None:
        rows, self.rows = self.rows, []
        if not rows:
            return
        out = [" | ".join(rows[0]), "---|" * (len(rows[0]) - 1) + "---"]
        out += [" | ".join(row) for row in rows[1:]]
        self.blocks.append(("\n".join(out), False))

    def handle_data(self, data: str) -> None:
        if self.hidden:
            return
        if self.pre:
            self.line.append(data)
        else:
            self._text(data)

    def result(self) -> str:
        if self.rows:
            self._table()
        self._end_block()
        out = ""
        for index, (text, item) in enumerate(self.blocks):
            if index:  # list items of one list follow each other line by line
                out += "\n" if item and self.blocks[index - 1][1] else "\n\n"
            out += text
        return out + "\n\n"


def page_markdown(html: str) -> str:
    """The ``markdown`` mode: the page as Markdown (see the module docstring)."""
    writer = _Markdown()
    writer.feed(html)
    writer.close()
    return writer.result()
