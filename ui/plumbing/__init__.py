"""Streamlit plumbing every page shares.

- ``state``: every session-state key, with typed accessors; the shared corpus and settings;
- ``cache``: cached wrappers around ``core``, bounded (``ui.serving.bounded_cache``) and shared by sessions;
- ``heavy_jobs``: work on a large corpus handed to the room's job engine, and its progress bar;
- ``navigation``: the pages, in order (data the tests and the room benchmarks read too);
- ``frame``: the navigation and the sidebar every page runs inside;
- ``corpus_sidebar``: the corpus sidebar (samples, paste, upload, Tiny Shakespeare, server folder);
- ``controls``: the variant / marker / regex / merges controls both BPE pages show;
- ``render``: token spans as escaped HTML (every user string goes through ``html.escape``);
- ``charts``: Vega-Lite specs built with Altair once and refilled per step;
- ``identity``: who is at this browser (owner id in the URL, instructor mode).
"""
