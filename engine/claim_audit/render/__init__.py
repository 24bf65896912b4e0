"""The report rendered from what it is given: the audit dict, the documents' figures.

`documents` (what a document supplies: its source, section, figures and their data), `table`
(the terminal's tables, through rich), `markdown` (audit.md, the one source of the report),
`html` (audit.html: audit.md rendered, figures inlined), `robustness` (the robustness
section checked, its rows), `drawing` (the figures drawn into a folder, reused through
`figure_cache`), `canvas` (a figure to draw on, and how each is saved), `robustness_figure`.
It imports no document, no experiment, and not JAX: the documents' packages import it.
"""
