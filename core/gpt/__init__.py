"""Training a small GPT on a corpus and a tokenizer from ``core.bpe`` (PyTorch), and managing
training runs as background processes.  Imports ``core.bpe``, never the reverse.

Importing this package loads nothing (the scheduler process must stay free of torch); import the
module you need.  Read bottom-up:

- ``model``       the GPT (nanoGPT's shape, ``scaled_dot_product_attention``, tied embeddings);
- ``device``      CUDA -> MPS -> CPU, and the speed-ups only CUDA gets;
- ``step``        **where a training step runs**: forward, backward, clipping, AdamW; eager or
  replayed as a CUDA graph; the learning-rate schedule; timing a step;
- ``config``      ``TrainConfig`` (hyper-parameters), the presets, ``make_config``;
- ``data``        the 90/10 split, batches, bits per character;
- ``evaluate``    loss on fixed windows, sampling text;
- ``ddp``         DDP under ``torchrun``;
- ``checkpoint``  verified, atomic checkpoints;
- ``rundir``      a run folder: every file name, JSON lines, status (no torch; writes through
  ``core.atomic``);
- ``loop``        ``train(config, text, tokenizer, run_dir, hooks)``; ``Training``, a run in
  memory trained a turn at a time;
- ``cli``         ``python -m core.train`` (flags);
- ``owners``, ``identical``, ``registry``, ``runs``  who may do what; identical launches trained
  once; reading runs; launch / stop / resume / share / sample / delete (``runs`` re-exports what
  a caller needs);
- ``turns``, ``scheduler``, ``trainers``, ``dask_trainers``, ``worker``  runs taking turns, fair
  between owners; the queue's process; its trainer processes, or a Dask cluster's workers; a
  run's turn in a trainer;
- ``spawn``, ``locks``  starting child processes, file locks;
- ``limits``, ``probe``  the device's bounds, runs at once, a turn's length; timing and sampling in
  a capped child process.

From Launch to a training step: ``runs.launch_run`` -> ``scheduler`` -> ``worker.run_turn`` ->
``loop.Training.advance`` -> ``step``.
"""
