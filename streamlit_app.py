"""BPE Explorer: ``streamlit run streamlit_app.py``.

The frame (page list, corpus sidebar) is ``ui.plumbing.frame.run_app``; the pages are in ``app_pages/``.
"""

# Streamlit runs this file as ``__main__``; the job workers of the room's job engine
# (``core.room.jobs``) import it under another name, as multiprocessing does, and must neither run
# the app nor import Streamlit (the import below would bring it into every job worker).
if __name__ == "__main__":
    from ui.plumbing.frame import run_app

    run_app()
