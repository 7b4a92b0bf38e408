"""The app's pages, in the navigation's order, the first opening at ``/``: each its file in
``app_pages/``, its title and its icon.  Data only, importable without Streamlit: the frame
(``ui.plumbing.frame``) builds the navigation from it, and the accessibility test and the room
benchmarks read it, so a page added here is checked and visited by them too."""

PAGES = (
    ("start_here", "Start here", "🧭"),
    ("learn_bpe", "Learn BPE", "🎞️"),
    ("char_vs_bpe", "Char vs BPE", "⚖️"),
    ("compare_tokenizers", "Compare tokenizers", "🔍"),
    ("insights", "Tokenizer questions", "❓"),
    ("chat", "Chat templates", "💬"),
    ("train_gpt", "Train a GPT", "🧠"),
)
