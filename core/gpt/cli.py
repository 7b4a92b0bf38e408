"""The command line: ``python -m core.train --corpus FILE --run-dir DIR [flags]`` (``core/train.py``
calls :func:`main`), a thin argparse front over ``core.gpt.loop.train``.

Owns the flags, where the corpus and the tokenizer come from (``--corpus``, ``--tokenizer``,
``--merges``, ``--tokenizer-file``), the progress lines, and turning SIGTERM / Ctrl+C into a clean
stop.  Started under ``torchrun``, every rank runs it and rank 0 alone prints.  The page's runs
do not come through here: its GPT workers call the loop directly (``core.room.turn_runner``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from ..bpe import BPETokenizer, CharTokenizer, load_tokenizer
from ..corpus import read_corpus
from .config import PRESETS, TrainConfig, make_config
from .loop import Hooks, train

TOKENIZERS = ("char", "bpe")
SOURCE = {"corpus": None, "tokenizer": "char", "merges": 200, "tokenizer_file": None}  # defaults
HYPER_PARAMETERS = (("n_layer", int), ("n_head", int), ("n_embd", int), ("block_size", int),
                    ("dropout", float), ("batch_size", int), ("max_steps", int), ("lr", float),
                    ("min_lr", float), ("warmup_steps", int), ("weight_decay", float),
                    ("grad_clip", float), ("eval_interval", int), ("eval_iters", int),
                    ("log_interval", int), ("sample_interval", int), ("sample_tokens", int),
                    ("seed", int), ("threads", int))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m core.train",
                                description="Train a small GPT on a text corpus.")
    p.add_argument("--run-dir", required=True, help="folder for metrics, samples and checkpoints")
    p.add_argument("--corpus", help="UTF-8 text file to train on")
    p.add_argument("--tokenizer", choices=TOKENIZERS, help="char (default) or bpe")
    p.add_argument("--merges", type=int, help="BPE merges (with --tokenizer bpe)")
    p.add_argument("--tokenizer-file", help="a saved tokenizer JSON instead of --tokenizer")
    p.add_argument("--preset", choices=sorted(PRESETS), help="tiny (default) or small")
    p.add_argument("--config", help="JSON file of training settings (flags given here win)")
    p.add_argument("--device", help="auto (default), cpu, cuda or mps")
    p.add_argument("--resume", action="store_true", default=None,
                   help="continue from the checkpoint in --run-dir")
    for name, kind in HYPER_PARAMETERS:
        p.add_argument("--" + name.replace("_", "-"), type=kind, dest=name)
    p.add_argument("--bias", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None,
                   help="torch.compile the model (default: off; it pays only on long runs)")
    p.add_argument("--cuda-graph", action=argparse.BooleanOptionalAction, default=None,
                   help="record each step once as a CUDA graph and replay it (default: on CUDA)")
    return p


def settings_from_args(args: argparse.Namespace) -> tuple[TrainConfig, dict]:
    """(the config, where the text and tokenizer come from): preset defaults, then the --config
    file, then the flags given explicitly."""
    settings = {}
    if args.config:
        try:
            settings = json.loads(Path(args.config).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"Cannot read the config file {args.config}: {exc}") from None
    settings.update({k: v for k, v in vars(args).items()
                     if v is not None and k not in ("run_dir", "config")})
    source = {k: settings.pop(k, default) for k, default in SOURCE.items()}
    if source["tokenizer"] not in TOKENIZERS:
        raise ValueError(f"tokenizer must be one of {', '.join(TOKENIZERS)}, "
                         f"not {source['tokenizer']!r}.")
    return make_config(settings.pop("preset", None) or "tiny", **settings), source


def read_source(source: dict) -> tuple[str, object]:
    """The corpus text, and the tokenizer: a saved file, BPE trained on the corpus, or its
    characters."""
    if not source["corpus"]:
        raise ValueError("No corpus: give a corpus file with --corpus PATH.")
    text = read_corpus(source["corpus"])
    if source["tokenizer_file"]:
        return text, load_tokenizer(source["tokenizer_file"])
    if source["tokenizer"] == "bpe":
        return text, BPETokenizer.from_text(text, source["merges"])
    return text, CharTokenizer.from_text(text)


def format_record(record: dict, max_steps: int) -> str:
    line = (f"step {record['step']:>6}/{max_steps}  loss {record['train_loss']:.4f}  "
            f"lr {record['lr']:.2e}  {record['tokens_per_s']:,.0f} tok/s  {record['elapsed_s']:.1f}s")
    if "val_loss" in record:
        line += f"  | val {record['val_loss']:.4f}  {record['val_bpc']:.3f} bits/char"
    return line


def stop_on_signals() -> Callable[[], bool]:
    """Turn SIGTERM and Ctrl+C into a request to stop, answered by the returned function: the
    loop then saves a final checkpoint and ends ``RunStatus.STOPPED``."""
    stop = {"flag": False}

    def request_stop(signum, frame):
        stop["flag"] = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    return lambda: stop["flag"]


def main(argv=None) -> int:
    """Train as the flags say, printing progress on rank 0; a bad setting or file ends with
    ``error: ...`` on stderr and exit status 1."""
    args = _parser().parse_args(argv)
    should_stop = stop_on_signals()
    master = int(os.environ.get("RANK", "0")) == 0
    try:
        config, source = settings_from_args(args)
        text, tokenizer = read_source(source)
        if master:
            print(f"training {config.preset} GPT on {source['corpus']} -> {args.run_dir}", flush=True)
        on_step = (lambda r: print(format_record(r, config.max_steps), flush=True)) if master else None
        result = train(config, text, tokenizer, args.run_dir, Hooks(on_step, should_stop))
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 1
    if master:
        print(f"{result.status} at step {result.step}; checkpoint {result.checkpoint}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
