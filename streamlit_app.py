"""BPE Explorer: ``streamlit run streamlit_app.py``.

The frame (page list, corpus sidebar) is ``ui.frame.run_app``; the pages are in ``app_pages/``.
"""

from ui.frame import run_app

run_app()
