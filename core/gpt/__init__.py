"""Training a small GPT on a corpus and a tokenizer from ``core.bpe`` (PyTorch).  Imports
``core.bpe``, never the reverse; the room's runs, queue and GPT workers are ``core.room``'s.

Importing this package loads nothing; import the module you need.  Read bottom-up:

- ``model``       the GPT (nanoGPT's shape, ``scaled_dot_product_attention``, tied embeddings);
- ``device``      CUDA -> MPS -> CPU, and the speed-ups only CUDA gets;
- ``optimizer_step`` **where a training step runs**: forward, backward, clipping, AdamW; eager or
  replayed as a CUDA graph; the learning-rate schedule; timing a step;
- ``config``      ``TrainConfig`` (hyper-parameters), the presets, ``make_config``;
- ``data``        the 90/10 split, batches, bits per character;
- ``evaluate``    loss on fixed windows, sampling text;
- ``ddp``         DDP under ``torchrun``;
- ``checkpoint``  verified, atomic checkpoints;
- ``loop``        ``train(config, text, tokenizer, run_dir, hooks)``; ``Training``, a run in
  memory trained a turn at a time; it writes a run folder in ``core.runfolder.layout``'s layout and
  ``core.runfolder.status``'s status;
- ``cli``         ``python -m core.train`` (flags).
"""
