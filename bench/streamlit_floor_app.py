"""Streamlit's own cost of a page like Learn BPE, for ``bench_page_cpu.py``: the same kinds of
elements in about the same number (26 messages a run against Learn BPE's 37), nothing computed and
no component.  What a rerun of this page costs the server is the floor that no change to the app's
own code can go below.  Its sockets send at once, as the app's do (``ui.serving.sockets``): else
its wall time is Nagle's 40 ms wait, not Streamlit's work."""

import streamlit as st

from ui.serving import sockets

sockets.start()

with st.sidebar:
    st.header("Corpus")
    st.selectbox("Corpus", ["a", "b", "c"], key="corpus")
    st.text_area("Or paste your own text", key="paste")
    st.file_uploader("Or upload", key="upload")
    with st.expander("More"):
        st.button("Download")
    st.markdown("**A sample**")
    st.markdown("| a | b |\n|--|--|\n| 1 | 2 |")
    st.header("Settings")
    st.radio("Variant", ["char", "byte", "word"], key="variant")
    st.radio("Start", ["scratch", "gpt2"], key="start")
    st.number_input("Merges", 0, 5000, 300, key="merges")
st.title("Learn BPE")
st.caption("Byte-pair encoding starts from single characters")
st.number_input("Window", 0, 100, 0, key="window")
st.html("<div>the step view's place</div>")
st.subheader("How was a token built?")
st.selectbox("Token", list(range(300)), key="token")
st.html("<div>the token tree's place</div>")
st.caption("Each merged token points down")
with st.expander("The same tree as text"):
    pass
