"""BPE Explorer: ``streamlit run streamlit_app.py``.

The frame (page list, corpus sidebar) is ``ui.plumbing.frame.run_app``; the pages are in ``app_pages/``.
"""

from ui.plumbing.frame import run_app

run_app()
