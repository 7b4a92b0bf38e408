"""The named computations that answer the stations' questions: a small registry, so a station file
says *which* computation answers it (``compute = "first_merge"``) and never holds code or the
answer itself.

Each computation reads a station's data (:class:`StationData`: the corpus and tokenizer settings
its tool opens with, plus the question's ``args``) and returns an :class:`Answer`: the value an
attendee's answer is compared with, and *facts*, strings a station's feedback quotes as
``{name}`` (every computation also gives ``{answer}``; what the tool itself shows, quoted before
the answer too, is ``core.lessons.tool_facts``').  Numbers in facts are formatted for a
reader ("1,115,394"); tokens are drawn as the pages draw them (``core.bpe.display.visible``).

    >>> data = StationData(corpus="sample:low lower newest widest", variant="word")
    >>> answer = COMPUTATIONS["first_merge"].run(data)
    >>> answer.value, answer.facts["count"]
    ('l + o', '2')

Adding one: a function of a :class:`StationData` decorated with :func:`computation`, declaring
its kind (``"choice"`` or ``"number"``), the facts it gives, the ``args`` it reads and the tool
parameters it needs; ``python -m core.lessons check`` then lists it.  The room's GPT runs
(station 7) are ``core.lessons.room_runs``'s.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..bpe import BPETokenizer
from ..bpe.compare import NOT_A_LANGUAGE, ranked_scripts, script_costs
from ..bpe.display import visible
from ..bpe.variants import variant_rules
from ..corpus import CACHE_DIR, download_tiny_shakespeare, read_corpus, sample_corpora
from ..insights.vocab_curve import split_held_out
from .errors import LessonError

SPLITS = {"none": None, "gpt2": "gpt2", "gpt4": "gpt4"}  # the URL's ?split= values: the pattern


@dataclass(frozen=True)
class StationData:
    """What a computation reads: the tool's URL parameters, typed (the corpus by its source, as
    ``?corpus=`` names it: ``sample:<name>`` or ``shakespeare``), and the question's ``args``.
    ``runs_dir`` is where the room's GPT runs live (``None``: ``core.gpt``'s default)."""

    corpus: str | None = None
    variant: str = "char"
    merges: int = 10
    marker: str = "</w>"
    split: str = "gpt2"
    start: str = "chars"
    step: int = 0   # the merges done the step view opens at
    args: dict = field(default_factory=dict)
    runs_dir: Path | None = None
    station: str = ""  # the station's id (the room's runs are named after it)

    def text(self) -> str:
        return load_corpus(self.corpus)

    def tokenizer(self, merges: int | None = None) -> BPETokenizer:
        """The tokenizer the tool's page trains on this corpus with these settings: from
        characters/bytes, or a real tokenizer extended (``start``)."""
        merges = self.merges if merges is None else merges
        return _trained(self.corpus, self.variant, merges, self.marker, self.split, self.start)

    def training_part_tokenizer(self) -> BPETokenizer:
        """The same tokenizer trained on the training part alone (the first 90 %, the cut a GPT run
        makes): a model scored on the held-out tenth gets a tokenizer that never saw it."""
        return _trained(self.corpus, self.variant, self.merges, self.marker, self.split, self.start,
                        training_part=True)

    def arg(self, name: str):
        return self.args.get(name, COMPUTATION_DEFAULTS.get(name))


@lru_cache(maxsize=8)
def _trained(corpus: str | None, variant: str, merges: int, marker: str, split: str,
             start: str, training_part: bool = False) -> BPETokenizer:
    """One training per corpus and settings (a station's answer and the facts about its tool
    read the same tokenizer; Tiny Shakespeare's 512 merges take seconds)."""
    text = load_corpus(corpus)
    if training_part:
        text = split_held_out(text)[0]
    if start != "chars":
        return BPETokenizer.from_pretrained(start).extended(text, merges)
    pattern = variant_rules(variant).split_pattern(SPLITS[split])
    return BPETokenizer.from_text(text, merges, variant=variant, end_of_word=marker, pattern=pattern)


COMPUTATION_DEFAULTS = {"tokenizer": "cl100k_base", "leave_out": list(NOT_A_LANGUAGE)}


def corpus_sources() -> list[str]:
    """Every ``?corpus=`` value a station may use: the built-in samples and Tiny Shakespeare."""
    return [f"sample:{name}" for name in sample_corpora()] + ["shakespeare"]


def load_corpus(source: str | None) -> str:
    """The text a station's ``corpus`` names (Tiny Shakespeare is downloaded once, then cached)."""
    if source == "shakespeare":
        return read_corpus(download_tiny_shakespeare(CACHE_DIR))
    kind, _, name = (source or "").partition(":")
    samples = sample_corpora()
    if kind != "sample" or name not in samples:
        raise LessonError(f"{source!r} is not a corpus this app has; use one of: "
                          f"{', '.join(corpus_sources())}.")
    return read_corpus(samples[name])


@dataclass(frozen=True)
class Answer:
    """The right answer (a choice's value, or a number) and the facts the feedback quotes."""

    value: str | float
    facts: dict[str, str]

    @property
    def shown(self) -> str:
        return format_number(self.value) if isinstance(self.value, (int, float)) else self.value


@dataclass(frozen=True)
class Computation:
    """A named way to answer a question (see the module docstring)."""

    name: str
    run: Callable[[StationData], Answer]
    kind: str                       # "choice": the answer is one of the choices; "number"
    facts: tuple[str, ...]          # the {names} a feedback text may use, besides {answer}
    args: dict[str, type]           # the question's args it reads (all optional where defaulted)
    needs: tuple[str, ...] = ()     # tool parameters it reads (the corpus, the settings)
    integer: bool = False           # a number that is a count: asked as a whole number
    live: bool = False              # reads something that changes (the room's runs): never cached
    summary: str = ""

    @property
    def fields(self) -> tuple[str, ...]:
        return ("answer", *self.facts)


COMPUTATIONS: dict[str, Computation] = {}


def computation(kind: str, facts: tuple[str, ...], args: dict[str, type] | None = None,
                needs: tuple[str, ...] = ("corpus",), integer: bool = False, live: bool = False):
    """Register the decorated function under its name (see the module docstring)."""
    def register(run: Callable[[StationData], Answer]) -> Callable[[StationData], Answer]:
        COMPUTATIONS[run.__name__] = Computation(run.__name__, run, kind, facts, args or {}, needs,
                                                 integer, live, (run.__doc__ or "").strip().split("\n")[0])
        return run
    return register


def format_number(x: float) -> str:
    """A number as feedback and the room view show it: whole numbers with thousands separators,
    others to two decimals."""
    return f"{int(x):,}" if float(x).is_integer() else f"{x:,.2f}"


def _pair(tok: BPETokenizer, left: int, right: int) -> str:
    return f"{visible(tok.token_str(left))} + {visible(tok.token_str(right))}"


def _first_step(tok: BPETokenizer):
    if not tok.trace:
        raise LessonError("This corpus has no pair to merge, so there is no first merge.")
    return tok.trace[0]


# -- the computations ------------------------------------------------------------------------------
@computation("number", ("text", "chars", "bytes", "wide", "gpt4_tokens", "gpt4_pieces"),
             {"text": str}, needs=(), integer=True)
def utf8_bytes(data: StationData) -> Answer:
    """How many UTF-8 bytes ``args.text`` takes; GPT-4's tokens for it."""
    text = str(data.arg("text") or "")
    wide = [f"{ch} takes {len(ch.encode())} bytes" for ch in dict.fromkeys(text) if len(ch.encode()) > 1]
    pieces = BPETokenizer.from_pretrained("cl100k_base").tokenize(text)
    size = len(text.encode("utf-8"))
    return Answer(size, {"text": text, "chars": f"{len(text):,}", "bytes": f"{size:,}",
                         "wide": ", ".join(wide) or "every character takes one byte",
                         "gpt4_tokens": f"{len(pieces):,}", "gpt4_pieces": " · ".join(map(visible, pieces))})


@computation("choice", ("count", "tied", "tied_count", "new_token"),
             needs=("corpus", "variant", "marker", "split"))
def first_merge(data: StationData) -> Answer:
    """The pair BPE merges first on the corpus (ties: the pair occurring first wins)."""
    tok = data.tokenizer(1)
    step = _first_step(tok)
    tied = [_pair(tok, left, right) for left, right, count in step.competitors if count == step.count]
    return Answer(_pair(tok, step.left, step.right), {
        "count": f"{step.count:,}", "tied": ", ".join(tied), "tied_count": f"{len(tied):,}",
        "new_token": visible(tok.token_str(step.new_id))})


@computation("choice", ("merges", "splits", "unseen"), {"words": list},
             needs=("corpus", "variant", "merges", "marker", "split"))
def split_words(data: StationData) -> Answer:
    """How the tokenizer after ``merges`` merges cuts ``args.words``, words it may never have seen."""
    tok = data.tokenizer()
    words = [str(w) for w in data.arg("words") or []]
    splits = "; ".join(f"{w} → {' · '.join(map(visible, tok.tokenize(w)))}" for w in words)
    unseen = dict.fromkeys(ch for w in words for _, ch in tok.unknown_characters(w))
    learned = "; ".join(f"{_pair(tok, s.left, s.right)} → {visible(tok.token_str(s.new_id))}"
                        for s in tok.trace)
    return Answer(splits, {"merges": learned, "splits": splits,
                           "unseen": ", ".join(unseen) or "no character of theirs"})


@computation("number", ("chars", "tokens", "vocab", "first_merges"),
             needs=("corpus", "variant", "merges", "marker", "split"))
def compression(data: StationData) -> Answer:
    """Characters per token of the whole corpus after ``merges`` merges."""
    text = data.text()
    tok = data.tokenizer()
    tokens = tok.trace[-1].length_after if tok.trace else tok.initial_length
    first = " · ".join(visible(tok.token_str(s.new_id)) for s in tok.trace[:8])
    return Answer(round(len(text) / tokens, 2), {
        "chars": f"{len(text):,}", "tokens": f"{tokens:,}", "vocab": f"{tok.vocab_size:,}",
        "first_merges": first})


@computation("choice", ("table", "costliest", "cheapest", "times"),
             {"tokenizer": str, "leave_out": list})
def costliest_script(data: StationData) -> Answer:
    """The script whose characters cost ``args.tokenizer`` (GPT-4's by default) the most tokens
    each, leaving out ``args.leave_out`` (emoji by default)."""
    tok = BPETokenizer.from_pretrained(str(data.arg("tokenizer")))
    text = data.text()
    text = unicodedata.normalize(tok.normalization, text) if tok.normalization else text
    costs = ranked_scripts(script_costs(text, tok.encode_tokens(text)), data.arg("leave_out"))
    if len(costs) < 2:
        raise LessonError("The corpus needs letters of at least two scripts to compare.")
    worst, best = costs[0], costs[-1]
    return Answer(worst.script, {
        "table": ", ".join(f"{c.script} {c.tokens_per_char:.2f}" for c in costs),
        "costliest": worst.script, "cheapest": best.script,
        "times": f"{worst.tokens_per_char / best.tokens_per_char:.1f}"})


def _example(base: BPETokenizer, text: str, left: int, right: int) -> tuple[str, str]:
    """The first word of ``text`` where ``base`` puts ``left`` and ``right`` side by side, and
    how ``base`` cuts it."""
    tokens = base.encode_tokens(text)
    i = next((i for i in range(len(tokens) - 1) if (tokens[i].id, tokens[i + 1].id) == (left, right)), None)
    if i is None:  # a teacher's station whose text never puts the pair side by side
        raise LessonError(f"The text never has tokens {left} and {right} side by side.")
    start, end = tokens[i].start, tokens[i + 1].end
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    cut = [visible(base.token_str(t.id)) for t in tokens if t.end > start and t.start < end]
    return text[start:end], " · ".join(cut)


@computation("choice", ("left", "right", "count", "new_id", "next", "example", "example_cut"),
             needs=("corpus", "start", "merges"))
def first_new_token(data: StationData) -> Answer:
    """The first token a real tokenizer (``start``) learns when extended on the corpus."""
    if data.start == "chars":
        raise LessonError("first_new_token extends a real tokenizer: give the tool a start "
                          "(e.g. cl100k_base).")
    base = BPETokenizer.from_pretrained(data.start)
    text = data.text()
    tok = base.extended(text, data.merges)
    step = _first_step(tok)
    example, cut = _example(base, text, step.left, step.right)
    return Answer(visible(tok.token_str(step.new_id)), {
        "left": visible(tok.token_str(step.left)), "right": visible(tok.token_str(step.right)),
        "count": f"{step.count:,}", "new_id": f"{step.new_id:,}",
        "next": " · ".join(visible(tok.token_str(s.new_id)) for s in tok.trace[1:6]),
        "example": example, "example_cut": cut})
