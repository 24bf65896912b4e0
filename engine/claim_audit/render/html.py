"""report/audit.html: audit.md's Markdown rendered (markdown-it-py) into one self-contained
page, figures inlined, so that it can be attached to a CI run or mailed as it is."""

from __future__ import annotations

import base64
from collections.abc import Mapping

from markdown_it import MarkdownIt

from . import markdown

_CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328;
       max-width: 1180px; margin: 0 auto; padding: 1.2em 1.5em 4em; }
h2 { margin-top: 2em; border-bottom: 1px solid #d0d7de; }
h3 { margin: 1.6em 0 .4em; font-size: 1.05em; }
table { border-collapse: collapse; width: 100%; font-size: .9em; margin-bottom: 1em; }
th, td { border: 1px solid #d0d7de; padding: .3em .5em; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
tr:has(a:target) { outline: 2px solid #0969da; }
img { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
"""

# Raw HTML on: audit.md writes its anchors as <a id>; everything else it escapes itself.
_PARSER = MarkdownIt("commonmark", {"html": True, "xhtmlOut": False}).enable("table")


def render(audit: dict, figures: Mapping[str, bytes]) -> str:
    """The audit as one HTML page of audit.md's content, each of `figures` (PNG bytes by file
    name, in display order) inlined as a data URI: it loads nothing from elsewhere."""
    inline = {name: "data:image/png;base64," + base64.b64encode(png).decode("ascii") for name, png in figures.items()}  # fmt: skip
    body = _PARSER.render(markdown.render(audit, list(figures), source=inline.__getitem__))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Claims audit</title><style>{_CSS}</style></head>\n<body>\n{body}</body></html>\n"
    )
