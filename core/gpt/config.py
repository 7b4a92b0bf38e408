"""A training run's settings: :class:`TrainConfig` (hyper-parameters and where to run them, saved as
JSON), the model's shape (:class:`GPTConfig`), the presets, and :func:`make_config`.  Torch-free:
a page checks settings without loading torch (``core.gpt.machine`` says why).

Leaves out what a run trains on: the corpus and the tokenizer are arguments of
``core.gpt.loop.train``, chosen by its caller (the command line, or the page through the files it
saves in a run folder), so no setting here can be silently overridden by another.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

# quick: what a room trains on a CPU, the page's default there: well under a minute alone on one
# core of a 2-core machine, and far apart in bits per character with characters and with BPE
# tokens at every evaluation (the page's built-in English sample, BPE with 300 merges; why:
# docs/benchmarks.md, "Time-per-step estimate").  tiny: a CPU learns something in minutes.  small:
# nanoGPT's shakespeare_char shape, the default on a CUDA GPU; its cosine schedule ends at 2,000
# steps, not nanoGPT's 5,000: on Tiny Shakespeare validation loss is lowest before then and only
# rises after (why: docs/benchmarks.md, "GPT training to a target loss").
PRESETS: dict[str, dict] = {
    "quick": dict(n_layer=3, n_head=4, n_embd=96, block_size=64, batch_size=32, dropout=0.0,
                  lr=3e-3, min_lr=3e-4, max_steps=300, warmup_steps=30, eval_interval=50,
                  eval_iters=5, log_interval=10, sample_interval=150),
    "tiny": dict(n_layer=4, n_head=4, n_embd=128, block_size=64, batch_size=32, dropout=0.0,
                 lr=1e-3, min_lr=1e-4, max_steps=1000, warmup_steps=50, eval_interval=100,
                 eval_iters=20, log_interval=10, sample_interval=250),
    "small": dict(n_layer=6, n_head=6, n_embd=384, block_size=256, batch_size=64, dropout=0.2,
                  lr=1e-3, min_lr=1e-4, max_steps=2000, warmup_steps=100, eval_interval=250,
                  eval_iters=200, log_interval=10, sample_interval=500),
}
# The page's first choice on each kind of device (a room's run on a CPU, nanoGPT's on a GPU).
DEFAULT_PRESETS = {"cpu": "quick", "mps": "quick", "cuda": "small"}


def default_preset(device: str) -> str:
    """The preset the page offers first on ``device`` (e.g. ``"cpu"``, ``"cuda:0"``)."""
    return DEFAULT_PRESETS.get(device.split(":")[0], "quick")


@dataclass(frozen=True)
class Measured:
    """One measured speed of a preset (never extrapolated)."""

    ms_per_step: float            # steady state: the median of a run's logged blocks of steps
    run_s: float | None = None    # the preset's default steps from launch, evaluation included
    load: float | None = None     # a CPU's load average then (others' work on the same cores)
    note: str = ""


# What the Model size help states (preset_help).  "cpu": the project's 2-core Xeon, char tokenizer
# on Tiny Shakespeare, bench/bench_estimate.py with the load average it printed (four other
# engineers shared the machine): tiny on 2026-11-23 with 2 torch threads, quick (--full) on
# 2026-11-24 with 1, what the page gives a run there now (one GPT worker per core);
# "gpu": one H100 80GB lent on 2026-11-22, bench/bench_gpt_step.py (CUDA graphs) and
# bench/bench_gpt.py --target 0; one H200 lent on 2026-11-30, bench/bench_gpt_step.py and
# bench/bench_estimate.py --launched (from Launch to finished, as the page launches it, samples
# included).  The tables: docs/benchmarks.md, "Time-per-step estimate" and "One optimizer step by
# mode".  Empty: not measured.
MEASURED: dict[str, dict[str, tuple[Measured, ...]]] = {
    "quick": {"a 2-core CPU": (Measured(99, run_s=37.4, load=1.1),), "one GPU": ()},
    "tiny": {"a 2-core CPU": (Measured(114, load=0.7), Measured(367, run_s=432, load=4)),
             "one GPU": ()},
    "small": {"a 2-core CPU": (Measured(21_900, load=3.8,
                                        note="over a CPU's bound: not offered there"),),
              "one H100 GPU": (Measured(8.57, run_s=28.6),),
              "one H200 GPU": (Measured(7.85, run_s=41.8, note="timed from the page's Launch, a GPT "
                                                              "worker's start and samples included"),)},
}


def _speed(m: Measured, steps: int) -> str:
    ms = m.ms_per_step
    text = f"~{ms / 1000:,.1f} s" if ms >= 1000 else f"~{ms:,.0f} ms" if ms >= 10 else f"~{ms:.1f} ms"
    text += " a step" + ("" if m.load is None else " on an otherwise idle machine" if m.load < 1
                         else f" beside other work (load average {m.load:g})")
    if m.run_s is not None:
        took = f"{m.run_s / 60:,.0f} min" if m.run_s >= 90 else f"{m.run_s:,.0f} s"
        text += f", its {steps:,} steps {took} from launch with evaluation"
    return text + (f"; {m.note}" if m.note else "")


def preset_help(name: str) -> str:
    """The preset's shape and measured speeds, for the Model size help, e.g. "tiny: 4 layers ×
    128 wide, context 64, batch 32 · a 2-core CPU: ... · one GPU: not measured" (from
    :data:`MEASURED`)."""
    p = PRESETS[name]
    speeds = " · ".join(
        f"{machine}: " + ("; ".join(_speed(m, p["max_steps"]) for m in rows) or "not measured")
        for machine, rows in MEASURED[name].items())
    return (f"{name}: {p['n_layer']} layers × {p['n_embd']} wide, context {p['block_size']}, "
            f"batch {p['batch_size']} · {speeds}")


# Keys run folders launched before the corpus and tokenizer left the config still hold; the files
# they named are the run folder's own corpus and tokenizer, which the GPT worker reads.
SUPERSEDED = ("corpus", "tokenizer", "merges", "tokenizer_file")


@dataclass
class GPTConfig:
    vocab_size: int
    block_size: int = 64   # the longest context, in tokens
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0
    bias: bool = True      # biases in Linear and LayerNorm layers (False: a bit faster, as good)

    def __post_init__(self) -> None:
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive whole number, not {value!r}.")
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head}): "
                             f"each head gets n_embd / n_head channels.")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), not {self.dropout!r}.")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class TrainConfig:
    """Everything a run needs besides its corpus and tokenizer; saved in ``config.json`` and in
    every checkpoint."""

    preset: str = "tiny"
    # the model
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    block_size: int = 64
    dropout: float = 0.0
    bias: bool = True
    # optimisation
    batch_size: int = 32               # the global batch, split across processes under DDP
    max_steps: int = 1000
    lr: float = 1e-3
    min_lr: float = 1e-4
    warmup_steps: int = 50             # capped at a fifth of max_steps, so short runs still peak
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.99
    grad_clip: float = 1.0             # 0 turns clipping off
    # reporting
    eval_interval: int = 100
    eval_iters: int = 20
    log_interval: int = 10
    sample_interval: int = 250
    sample_tokens: int = 200
    # where and how
    device: str = "auto"
    compile: bool | None = None        # torch.compile; None: see core.gpt.device.should_compile
    cuda_graph: bool | None = None     # replay steps as a CUDA graph; None: on CUDA, one process
    seed: int = 1337
    threads: int = 0                   # CPU threads for torch; 0 leaves torch's default
    resume: bool = False               # carry on from the run folder's checkpoint

    def __post_init__(self) -> None:
        for name in ("max_steps", "batch_size", "eval_interval", "eval_iters", "log_interval",
                     "sample_interval", "n_layer", "n_head", "n_embd", "block_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive whole number, not {value!r}.")
        for name in ("warmup_steps", "sample_tokens"):
            if int(getattr(self, name)) < 0:
                raise ValueError(f"{name} must not be negative, not {getattr(self, name)!r}.")
        if not (self.lr > 0 and 0 <= self.min_lr <= self.lr):
            raise ValueError(f"Need lr > 0 and 0 <= min_lr <= lr (got lr={self.lr}, "
                             f"min_lr={self.min_lr}).")
        self.model_config(vocab_size=1)  # the model's own checks, before any work is done

    def model_config(self, vocab_size: int) -> GPTConfig:
        return GPTConfig(vocab_size=vocab_size, block_size=self.block_size, n_layer=self.n_layer,
                         n_head=self.n_head, n_embd=self.n_embd, dropout=self.dropout, bias=self.bias)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, settings: dict) -> TrainConfig:
        """The config saved in a run folder (superseded keys of older folders dropped)."""
        return make_config(**{k: v for k, v in settings.items() if k not in SUPERSEDED})


def make_config(preset: str = "tiny", **overrides) -> TrainConfig:
    """A preset's config with any field overridden: ``make_config("tiny", n_layer=2)``."""
    if preset not in PRESETS:
        raise ValueError(f"Unknown preset {preset!r}: choose one of {', '.join(PRESETS)}.")
    known = {f.name for f in fields(TrainConfig)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ValueError(f"Unknown training setting(s): {', '.join(unknown)}.")
    return TrainConfig(**{**PRESETS[preset], "preset": preset, **overrides})
