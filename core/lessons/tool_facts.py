"""What a station's tool shows, as facts its words quote: ``{merges_asked}`` merges asked,
``{merges_learned}`` learned, which step of Learn BPE's step view highlights the first merge's
pair.  A station's ``text``, ``ask`` and ``do`` are read before the attendee answers, so they
quote these (never the answer's facts); ``why`` and ``hint`` may quote both.

Each fact is computed by ``core`` from the station's tool settings, with the rule the tool itself
applies (the step facts are ``core.bpe.explain``'s, which the browser's step view follows), so a
station's words cannot drift from its tool: a figure typed instead is refused by
``python -m core.lessons check`` (``core.lessons.claims``).

    >>> data = StationData(corpus="sample:low lower newest widest", variant="word", merges=10)
    >>> facts = tool_facts(data, ["merges_asked", "first_pair_step", "first_token_step"])
    >>> facts["merges_asked"], facts["first_pair_step"], facts["first_token_step"]
    ('10', '0', '1')

A fact is available to a station whose tool has the parameters it ``needs`` (and opens one of its
``pages``, where it names them); ``python -m core.lessons computations`` lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..bpe import BPETokenizer
from ..bpe.compare import ranked_scripts, script_costs
from ..bpe.explain import highlighted_merge, step_made, text_window
from ..insights.vocab_curve import CURVE_TOP, CURVE_VARIANT, vocabulary_curve
from ..samples import DEFAULT_SAMPLE
from .computations import StationData, format_number, load_corpus
from .errors import LessonError

STEP_PAGES = ("learn_bpe",)  # the pages with the step view


@dataclass(frozen=True)
class ToolFact:
    name: str
    run: Callable[[StationData], str]
    needs: tuple[str, ...]        # the tool parameters it reads
    pages: tuple[str, ...] = ()   # the pages it describes (empty: any)
    summary: str = ""

    def available(self, page: str, params: Iterable[str]) -> bool:
        return set(self.needs) <= set(params) and (not self.pages or page in self.pages)


TOOL_FACTS: dict[str, ToolFact] = {}


def tool_fact(needs: tuple[str, ...], pages: tuple[str, ...] = ()):
    """Register the decorated function of a :class:`StationData` as the fact of its name."""
    def register(run: Callable[[StationData], str]) -> Callable[[StationData], str]:
        TOOL_FACTS[run.__name__] = ToolFact(run.__name__, run, needs, pages,
                                            (run.__doc__ or "").strip().split("\n")[0])
        return run
    return register


def fact_names(page: str, params: Iterable[str]) -> tuple[str, ...]:
    """The tool facts a station whose tool opens ``page`` with ``params`` may quote."""
    params = tuple(params)
    return tuple(name for name, fact in TOOL_FACTS.items() if fact.available(page, params))


def tool_facts(data: StationData, names: Iterable[str]) -> dict[str, str]:
    """The facts ``names``, computed (only those asked: some train a tokenizer)."""
    return {name: TOOL_FACTS[name].run(data) for name in dict.fromkeys(names)}


# -- the facts --------------------------------------------------------------------------------------
@tool_fact(needs=("merges",))
def merges_asked(data: StationData) -> str:
    """The number of merges the tool is set to (its Merges box)."""
    return format_number(data.merges)


@tool_fact(needs=("corpus", "merges"))
def merges_learned(data: StationData) -> str:
    """The number of merges the tool learns on its corpus (fewer than asked when pairs run out)."""
    return format_number(len(data.tokenizer().trace))


@tool_fact(needs=("corpus",))
def corpus_chars(data: StationData) -> str:
    """The corpus's length in characters."""
    return format_number(len(data.text()))


@tool_fact(needs=("corpus", "merges"))
def corpus_chars_per_token(data: StationData) -> str:
    """Characters per token over the whole corpus, after the tool's merges (two decimals)."""
    tok = data.tokenizer()
    tokens = tok.trace[-1].length_after if tok.trace else tok.initial_length
    return f"{len(data.text()) / tokens:.2f}"


@tool_fact(needs=(), pages=STEP_PAGES)
def opens_at(data: StationData) -> str:
    """The step (merges done) the step view opens at: the tool's ``step``, else 0."""
    return format_number(data.step)


def _first_merge(data: StationData):
    tok = data.tokenizer()
    if not tok.trace:
        raise LessonError("The tool learns no merge on this corpus, so no step highlights one.")
    return tok, tok.trace[0]


@tool_fact(needs=("corpus",), pages=STEP_PAGES)
def first_pair_step(data: StationData) -> str:
    """The step (merges done) at which the step view highlights the first merge's pair."""
    tok, _ = _first_merge(data)
    return format_number(next(k for k in range(len(tok.trace) + 1) if highlighted_merge(tok, k) == 1))


@tool_fact(needs=("corpus",), pages=STEP_PAGES)
def first_token_step(data: StationData) -> str:
    """The step (merges done) at which the first merge's new token is drawn as one token."""
    tok, step = _first_merge(data)
    window = tok.normalized(text_window(data.text()))  # what Learn BPE shows of the corpus first
    made = step_made(tok, window, step.new_id)
    if made is None:
        raise LessonError("The first merge's pair never occurs in the text Learn BPE shows.")
    return format_number(made)


@tool_fact(needs=("corpus",), pages=STEP_PAGES)
def highlighted_next(data: StationData) -> str:
    """The merge whose pair is highlighted once the first merge's token is drawn (Merge 2, ...)."""
    tok, _ = _first_merge(data)
    merge = highlighted_merge(tok, int(first_token_step(data)))
    if merge is None:
        raise LessonError("The tool learns one merge only: no pair is highlighted after it.")
    return format_number(merge)


# -- what a page states of the station's data --------------------------------------------------------
@tool_fact(needs=("corpus",), pages=("compare_tokenizers",))
def tool_costliest_script(data: StationData) -> str:
    """The script Compare tokenizers' caption names costliest under the question's tokenizer."""
    tok = BPETokenizer.from_pretrained(str(data.arg("tokenizer")))
    text = tok.normalized(data.text())
    ranked = ranked_scripts(script_costs(text, tok.encode_tokens(text)))
    if not ranked:
        raise LessonError("The tool's text has letters of no script to rank.")
    return ranked[0].script


@tool_fact(needs=(), pages=("insights",))
def curve_top_reached(data: StationData) -> str:
    """The vocabulary Tokenizer questions' first curve reaches on the tool's corpus (the corpus a new
    attendee has when the tool names none), of the size the page asks first."""
    text = load_corpus(data.corpus or f"sample:{DEFAULT_SAMPLE}")
    curve = vocabulary_curve(text, CURVE_TOP, CURVE_VARIANT, pattern="gpt4")
    return format_number(int(curve.vocab_sizes[-1]))


@tool_fact(needs=(), pages=("insights",))
def sweep_sizes(data: StationData) -> str:
    """The vocabulary sizes the question's sweep trains (its ``args.sizes``), as a list in words."""
    sizes = [format_number(int(size)) for size in data.arg("sizes") or []]
    if not sizes:
        raise LessonError("The question names no sizes (args.sizes).")
    return sizes[0] if len(sizes) == 1 else f"{', '.join(sizes[:-1])} and {sizes[-1]}"
