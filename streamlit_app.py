"""BPE Explorer: ``streamlit run streamlit_app.py``.

The frame (page list, corpus sidebar) is ``ui.plumbing.frame.run_app``; the pages are in ``app_pages/``.
"""

from ui.plumbing.frame import run_app

# Streamlit runs this file as ``__main__``; the worker processes of the room's job engine
# (``core.room.jobs``) import it under another name, as multiprocessing does, and must not run the app.
if __name__ == "__main__":
    run_app()
