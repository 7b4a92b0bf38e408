"""The known split patterns (GPT-2, GPT-4, cl100k, o200k, Llama 3, Qwen 3) cut by compiled
scanners exactly as ``regex`` cuts them, and a long text encoded in compiled kernels over the
whole of it (a short one in plain Python).  Any other pattern goes through ``regex``
(``core.bpe.pretokenize``).

Modules, bottom to top:

- ``char_classes``: the Unicode classes the patterns test, one byte of flags per code point,
  taken from ``regex`` itself;
- ``known_patterns``: which pattern runs which scanner, a text's pieces as byte ranges, and the
  chunk counts training starts from;
- ``piece_encoding``: encoding a split text, in plain Python or in compiled kernels, and which
  pays.

The compiled scanners and the table of pieces are ``core.bpe.kernels.scanners`` and
``core.bpe.kernels.piece_table``, with the tokenizer's other kernels.
"""
