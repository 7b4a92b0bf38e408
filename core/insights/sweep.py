"""The model side of the vocabulary question: small GPTs trained on one corpus at a few vocabulary
sizes, each scored in validation bits per character (comparable across tokenizers), with its
parameter count and the share of them its token embeddings take.

One byte-level BPE training on the training part of the corpus (the part a GPT trains on; the
held-out part is what it validates on) gives every size by truncation.  The runs go through the
room's launcher with ``room=True``: a sweep someone launched already (same corpus, tokenizer,
settings, seed) is joined, not trained again, and the runs are shared with the room.

Leaves out: training itself (the room's scheduler and GPT workers do it).  Torch is imported only
when launching.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

from ..bpe import BPETokenizer
from ..bpe.checks import ArgumentError
from ..gpt.config import PRESETS, make_config
from ..gpt.split import short_parts
from ..room.limits import detect_device
from ..room.queries import RunInfo, is_run, read_metrics, run_info
from ..settings import ServerSettings
from .vocab_curve import split_held_out

SEED = 1337
MAX_SIZES = 5


def sweep_tokenizers(text: str, sizes, pattern: str = "gpt4", progress=None) -> dict[int, BPETokenizer]:
    """A byte-level tokenizer of each vocabulary size, all cut from one training on the training
    part of ``text`` (``progress(done, total)`` as the merges are learned): work that grows with
    the corpus, which a page leaves to a job worker on a large one
    (``core.insights.question_jobs.sweep``)."""
    sizes = sorted({int(s) for s in sizes})
    if not 1 <= len(sizes) <= MAX_SIZES or sizes[0] < 256:
        raise ArgumentError(f"Give 1 to {MAX_SIZES} vocabulary sizes of at least 256 (the bytes).")
    train, _ = split_held_out(text)
    full = BPETokenizer.from_text(train, sizes[-1] - 256, variant="byte", pattern=pattern, top_k=1,
                                  progress=progress)
    return {size: full.truncated(min(size - 256, len(full.merges))) for size in sizes}


def corpus_tag(text: str) -> str:
    """The corpus's part of a sweep run's name, so one attendee's sweeps of two corpora differ."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def run_name(text: str, size: int, preset: str, tag: str | None = None) -> str:
    """The run's folder name (``tag``: :func:`corpus_tag` of ``text``, where the caller has it)."""
    return f"vocab-{size}-{preset}-{tag or corpus_tag(text)}"


class SweepTooShortError(ValueError):
    """A corpus too short for the preset's window at some of the sizes asked: ``short`` says, per
    size, how many tokens the shorter part holds.  Nothing was launched."""

    def __init__(self, short: dict[int, int], block_size: int, preset: str) -> None:
        self.short = short
        sizes = ", ".join(f"{size:,}" for size in sorted(short))
        fewest = min(short.values())
        super().__init__(
            f"This corpus is too short for the {preset} preset at {sizes} tokens: each part of it (the "
            f"training part and the held-out tenth) must hold a window of {block_size + 1} tokens, and "
            f"the shorter holds {fewest:,}. Paste a longer text, or load Tiny Shakespeare (More corpora, "
            f"in the sidebar), then train again.")


def window_tokens(preset: str = "quick") -> int:
    """How many tokens each part of the corpus must hold for the preset: one window (block + 1)."""
    return PRESETS[preset]["block_size"] + 1


def surely_too_short(text: str, preset: str = "quick") -> bool:
    """Whether the corpus is too short at every size, known without training: a byte-level token
    holds at least one byte, so a part of fewer bytes than a window holds fewer tokens."""
    train, held_out = split_held_out(text)
    shorter = min(len(train.encode("utf-8", "surrogatepass")), len(held_out.encode("utf-8", "surrogatepass")))
    return shorter < window_tokens(preset)


def _shortfall(text: str, tokenizers: dict[int, BPETokenizer], window: int) -> dict[int, int]:
    """The sizes at which a part of ``text`` holds fewer than ``window`` tokens, with that count:
    a run's own rule (``core.gpt.split.short_parts``), asked of every size before any is launched."""
    short = {}
    for size, tok in tokenizers.items():
        parts = short_parts(text, tok, window - 1)
        if parts:
            short[size] = min(parts.values())
    return short


def launch_sweep(text: str, sizes, owner: str, runs_dir=None, preset: str = "quick",
                 settings: ServerSettings | None = None,
                 tokenizers: dict[int, BPETokenizer] | None = None) -> dict[int, RunInfo]:
    """Queue (or join) one run per vocabulary size for ``owner``; returns at once.  The runs are the
    room's, so the owner's cap on runs is raised to the sweep's size for them, as for a station's
    runs (``core.lessons.room_runs``).  A corpus too short at any size is refused before anything is
    launched (:class:`SweepTooShortError`): a run that can only fail would be the room's.
    ``tokenizers``: :func:`sweep_tokenizers` of ``text`` and ``sizes``, where a job trained them."""
    from ..room.runs import launch_run

    tokenizers = tokenizers or sweep_tokenizers(text, sizes)
    config = make_config(preset, seed=SEED)
    short = _shortfall(text, tokenizers, config.block_size + 1)
    if short:
        raise SweepTooShortError(short, config.block_size, preset)
    settings = settings or ServerSettings.from_env()
    settings = replace(settings, max_runs_per_owner=max(len(tokenizers), settings.max_runs_per_owner))
    launched, tag = {}, corpus_tag(text)
    for size, tok in tokenizers.items():
        first = next(iter(launched.values()), None)  # the same corpus: its file is linked, not written again
        launched[size] = launch_run(config, run_name(text, size, preset, tag), runs_dir, owner=owner,
                                    text=text, tokenizer=tok, settings=settings, room=True,
                                    corpus_of=first and first.path)
    return launched


@dataclass(frozen=True)
class SweepPoint:
    """One run of a sweep as it stands: ``val_bpc`` is its last evaluation (None before one)."""

    vocab_size: int
    status: str
    step: int
    max_steps: int
    val_bpc: float | None
    n_params: int | None
    embedding_share: float | None


def sweep_point(vocab_size: int, run: RunInfo) -> SweepPoint:
    """What the run's files say: its last evaluation and, once training started, its size."""
    evals = [r for r in read_metrics(run.path) if "val_bpc" in r]
    config = run.config or {}
    n_params = config.get("n_params")
    n_embd = (config.get("model_config") or {}).get("n_embd")
    share = vocab_size * n_embd / n_params if n_params and n_embd else None  # wte, tied to lm_head
    return SweepPoint(vocab_size, run.status, run.step, run.max_steps or 0,
                      float(evals[-1]["val_bpc"]) if evals else None, n_params, share)


def room_sweep(text: str, sizes, runs_dir=None, preset: str = "quick",
               tokenizers: dict[int, BPETokenizer] | None = None) -> dict[int, RunInfo | None]:
    """The sweep's runs as the room has them, whoever launched them: by what they train (corpus,
    tokenizer, settings, seed, kind of device), finished or under way (``None``: not launched).
    ``tokenizers``: :func:`sweep_tokenizers` of ``text`` and ``sizes``, where the caller keeps them."""
    from ..room.identical import run_identity
    from ..room.queries import find_identical
    from ..runfolder.layout import default_runs_dir

    runs_dir = Path(runs_dir) if runs_dir else default_runs_dir()
    config = make_config(preset, seed=SEED)
    device = detect_device(config.device)
    found = {}
    for size, tok in (tokenizers or sweep_tokenizers(text, sizes)).items():
        path = find_identical(runs_dir, run_identity(text, tok, config.to_dict(), device))
        found[size] = None if path is None else run_info(path)
    return found


def sweep_points(tag: str, sizes, owner: str, runs_dir, preset: str = "quick") -> list[SweepPoint]:
    """The owner's runs of the sweep of the corpus ``tag`` (:func:`corpus_tag`) that exist
    (launched or joined), by vocabulary size."""
    points = []
    for size in sorted({int(s) for s in sizes}):
        path = Path(runs_dir) / owner / run_name("", size, preset, tag)
        if is_run(path):
            points.append(sweep_point(size, run_info(path)))
    return points
