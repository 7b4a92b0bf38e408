"""Streamlit helpers the pages share; the algorithms live in ``core`` and nothing here computes BPE.

- ``state``: every session-state key, with typed accessors; ``keep`` carries a widget's value
  across pages; the shared corpus and the tokenizer settings.
- ``cache``: cached wrappers around ``core`` with explicit arguments (trained tokenizers, corpus
  statistics, GPT-2, the server's settings), bounded and shared by every session.
- ``frame``: the page list and the corpus sidebar every page runs inside.
- ``corpus``: the corpus sidebar (samples, paste, upload, Tiny Shakespeare, server folder) and
  ``require_corpus`` for the top of a page.
- ``samples``: sample names and the English corpus built from ``pydoc_data`` at run time.
- ``controls``: the variant / marker / regex / merges controls both BPE pages show.
- ``render``: token spans as escaped HTML (every user string goes through ``html.escape``).
- ``charts``: Vega-Lite specs built with Altair once and refilled per step.
- ``identity``: who is at this browser (owner id in the URL, instructor mode).
- ``run_view``: the Train a GPT page's helpers: runs folder, device bounds, step-time probe, charts.
- ``serve``: ``python -m ui.serve``, the app as N processes behind HAProxy for a workshop room.
"""
