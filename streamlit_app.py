"""BPE Explorer: the frame every page sits in (the corpus sidebar) and the page list.

Run with ``streamlit run streamlit_app.py``.
"""

from pathlib import Path

import streamlit as st

from ui.corpus import corpus_sidebar

ROOT = Path(__file__).resolve().parent

st.set_page_config(page_title="BPE Explorer", page_icon="🔤", layout="wide")

pages = [
    st.Page("pages/learn_bpe.py", title="Learn BPE", icon="🎞️", default=True),
    st.Page("pages/char_vs_bpe.py", title="Char vs BPE", icon="⚖️"),
]
if (ROOT / "pages" / "train_gpt.py").is_file():
    pages.append(st.Page("pages/train_gpt.py", title="Train a GPT", icon="🧠"))

page = st.navigation(pages)
corpus_sidebar()
page.run()
