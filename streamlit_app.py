"""BPE Explorer: ``streamlit run streamlit_app.py``.

The frame (page list, corpus sidebar) is ``ui.plumbing.frame.run_app``; the pages are in ``app_pages/``.
"""

# Streamlit runs this file as ``__main__``; a child that an app process spawns (the probe's one-call
# workers, ``core.room.probe``) runs it again under another name, as multiprocessing does, and must
# neither run the app nor import Streamlit (the import below would bring it into every such child).
if __name__ == "__main__":
    from ui.plumbing.frame import run_app

    run_app()
