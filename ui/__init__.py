"""Streamlit helpers the pages share; the algorithms live in ``core`` and nothing here computes BPE.

- ``state``: session-state keys and defaults, the shared corpus and settings, cached training
  (``get_corpus``, ``get_tokenizer_settings``, ``get_trained_tokenizer`` for other pages).
- ``corpus``: the corpus sidebar (samples, paste, upload, Tiny Shakespeare, local path) and
  ``require_corpus`` for the top of a page.
- ``samples``: sample names and the English corpus built from ``pydoc_data`` at run time.
- ``controls``: the variant / marker / regex / merges controls both BPE pages show.
- ``render``: token spans as escaped HTML (every user string goes through ``html.escape``).
- ``charts``: Vega-Lite specs built with Altair once and refilled per step.
"""
