"""What one page draws, one module per view: ``step_view`` (Learn BPE's step-by-step view, drawn
in the browser by ``assets/step_view.js``), ``token_view`` (a token's merge tree), ``compare_view``
(Compare tokenizers), ``run_view`` (Train a GPT), ``lesson_view`` (a lesson's station)."""
