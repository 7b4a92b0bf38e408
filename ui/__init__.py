"""The app's Streamlit side; the algorithms live in ``core`` and nothing here computes BPE.

- ``views``     what one page draws: ``step_view`` (+ ``assets/step_view.js``) and ``token_view``
  for Learn BPE, ``compare_view`` for Compare tokenizers, ``run_view`` for Train a GPT,
  ``lesson_view`` for the lessons' stations, ``insights_view`` for Tokenizer questions;
- ``plumbing``  what every page shares: session state, caches, the corpus sidebar, the tokenizer
  controls, HTML rendering, chart specs, who is at this browser, the frame each page runs in;
- ``serving``   running the app for a room: ``python -m ui.serve`` (N processes behind HAProxy),
  giving memory back, the offline Vega bundle.

Views import plumbing; plumbing imports no view (the architecture test checks it).
"""
