"""The computations of the two tokenizer-question stations (``core.insights``): which vocabulary
size gives a small GPT the fewest bits per character (the room's sweep of GPTs, live), and which
language pays the most tokens for the same text under a tokenizer (the parallel corpus).

    >>> data = StationData(args={"tokenizer": "cl100k_base", "languages": ["fra", "hin"]})
    >>> COMPUTATIONS["costliest_language"].run(data).value
    'hin'
"""

from __future__ import annotations

from functools import lru_cache

from ..bpe import BPETokenizer
from ..insights import UDHR_DIR, language_costs, language_index, read_parallel
from ..insights.sweep import room_sweep, sweep_point, sweep_tokenizers
from ..runfolder.status import RunStatus
from .computations import COMPUTATIONS, Answer, StationData, computation, format_number, load_corpus
from .errors import AnswerNotReady, LessonError

REFERENCE = "eng"


@computation("choice", ("table", "costliest", "times", "english_tokens", "tokens"),
             {"tokenizer": str, "languages": list}, needs=())
def costliest_language(data: StationData) -> Answer:
    """Which of ``args.languages`` (codes of ``sample_corpora/udhr``) costs ``args.tokenizer`` the
    most tokens for the same articles, as a premium over English."""
    name = str(data.arg("tokenizer"))
    texts, index = read_parallel(UDHR_DIR), language_index(UDHR_DIR)
    codes = [str(c) for c in data.arg("languages") or []]
    unknown = [c for c in codes if c not in texts]
    if len(codes) < 2 or unknown:
        raise LessonError(f"languages must be at least two codes of {UDHR_DIR.name}: "
                          f"{', '.join(unknown) or 'too few given'}.")
    tokenizer = BPETokenizer.from_pretrained(name)
    costs = language_costs({c: texts[c] for c in {*codes, REFERENCE}}, {name: tokenizer}, REFERENCE)
    premium = {c: costs[c][name]["premium"] for c in codes}
    ranked = sorted(codes, key=lambda c: -premium[c])
    worst = ranked[0]

    def language(code: str) -> str:
        return index.get(code, {}).get("language", code)

    return Answer(worst, {
        "table": ", ".join(f"{language(c)} {premium[c]:.2f}×" for c in ranked),
        "costliest": language(worst), "times": f"{premium[worst]:.1f}",
        "english_tokens": f"{costs[REFERENCE][name]['tokens']:,}",
        "tokens": f"{costs[worst][name]['tokens']:,}"})


@computation("choice", ("table", "best", "best_bpc", "share"), {"sizes": list, "preset": str},
             needs=("corpus",), live=True)
def lowest_bpc_vocabulary(data: StationData) -> Answer:
    """Which vocabulary size gives the room's small GPTs (``core.insights.sweep``: byte-level BPE
    at ``args.sizes``, the ``args.preset`` preset) the fewest validation bits per character."""
    sizes = [int(s) for s in data.arg("sizes") or []]
    preset = str(data.arg("preset") or "quick")
    runs = room_sweep(data.text(), sizes, data.runs_dir, preset, _sweep_tokenizers(data.corpus, tuple(sizes)))
    missing = [size for size, run in runs.items() if run is None]
    if missing:
        raise AnswerNotReady(f"The room's GPTs at {', '.join(map(format_number, missing))} tokens are not "
                             f"trained yet: open the tool and press “Train small GPTs at these sizes” (once "
                             f"for everyone).")
    points = {size: sweep_point(size, run) for size, run in runs.items()}
    waiting = [p for p in points.values() if p.status != RunStatus.FINISHED or p.val_bpc is None]
    if waiting:
        where = "; ".join(f"{p.vocab_size:,}: step {p.step:,} of {p.max_steps:,} ({p.status})"
                          for p in waiting)
        raise AnswerNotReady(f"The room's GPTs are still training ({where}). Your prediction can be "
                             f"checked when all have finished.")
    best = min(points.values(), key=lambda p: p.val_bpc)
    return Answer(str(best.vocab_size), {
        "table": "; ".join(f"{p.vocab_size:,} tokens: {p.val_bpc:.3f} bits per character, embeddings "
                           f"{p.embedding_share:.0%} of {p.n_params:,} parameters" for p in points.values()),
        "best": f"{best.vocab_size:,}", "best_bpc": f"{best.val_bpc:.3f}",
        "share": f"{best.embedding_share:.0%}"})


@lru_cache(maxsize=4)
def _sweep_tokenizers(corpus: str | None, sizes: tuple[int, ...]) -> dict[int, BPETokenizer]:
    """One training per station corpus and sizes: the answer is asked for at every run of the
    station's page once an attendee answered, to see how far the room's runs are."""
    return sweep_tokenizers(load_corpus(corpus), sizes)


__all__ = ["COMPUTATIONS", "costliest_language", "lowest_bpc_vocabulary"]
