"""What the BPE animation shows, computed from a trained tokenizer and its trace: no Streamlit here.
The browser's step view (``ui/views/assets/step_view.js``) applies the same rule; a browser test checks
the two agree at every step.

Step ``k`` (0-based) is the merge *about to happen*: ``segment(tok, text, k)`` is the text after
the first ``k`` merges, and ``occurrences(tok, text, k)`` are the places where merge ``k`` fires.
Steps count from the start of ``tok.trace``: for a real tokenizer extended with a corpus
(``core.bpe.extend``) that is its first *new* merge, and ``segment`` replays the new merges on the
real tokenizer's own cut of the text (``start``), never touching its 100,000-odd old merges.

    >>> from core.bpe import BPETokenizer
    >>> tok = BPETokenizer.from_text("low lower newest widest", 5, variant="char")
    >>> tok.merges[0]
    ('l', 'o')
    >>> occurrences(tok, "low lower", 0)
    [(0, 2), (4, 6)]

Big corpora: pass a *window* of the text (``text_window``) so a step stays fast; merges never
retrain, they only replay the first ``k`` merges of one training run (the prefix property).

Leaves out: drawing (``ui``) and training (``core.bpe.trainer``, where a merge is chosen).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from .split.piece_encoding import lowest_first
from .display import quoted
from .encoding import Token
from .tokenizer import BPETokenizer
from .trainer import MergeStep


def text_window(text: str, start: int = 0, size: int = 2000) -> str:
    """About ``size`` characters of ``text`` from ``start``, cut at whitespace where it can be,
    so the window holds whole words (the word and byte variants never merge across spaces)."""
    if size <= 0:
        raise ValueError("The window size must be positive.")
    start = max(0, min(start, len(text)))
    if start > 0:  # move forward to the start of a word
        space = _next_space(text, start, start + 200)
        if space is not None:
            start = space
    end = min(len(text), start + size)
    if end < len(text):  # move back to the end of a word
        cut = max(text.rfind(" ", start, end), text.rfind("\n", start, end))
        if cut > start + size // 2:
            end = cut
    return text[start:end]


def _next_space(text: str, start: int, stop: int) -> int | None:
    for i in range(start, min(stop, len(text))):
        if text[i].isspace():
            return i + 1
    return None


def shown_text(tok: BPETokenizer, text: str) -> str:
    """``text`` as ``tok``'s token offsets count it: its NFC form for a tokenizer that normalizes
    (Qwen), else ``text`` itself."""
    return tok.normalized(text)


def segment(tok: BPETokenizer, text: str, k: int, start: list[Token] | None = None) -> list[Token]:
    """Tokens of ``text`` after the first ``k`` steps of ``tok``'s trace (character offsets into
    ``text``).  For an extension (``tok.extends``), its steps are replayed on the tokenizer it
    extends's cut of ``text``; ``start`` may pass that cut when the caller has it."""
    if tok.extends is not None:
        return replay(start if start is not None else tok.extends.encode_tokens(text), tok.trace[:k])
    return tok.truncated(k).encode_tokens(text)


def replay(tokens: list[Token], steps: Sequence[MergeStep]) -> list[Token]:
    """``tokens`` after ``steps``, applied as training applied them: in each chunk the pair of
    the earliest step first, the leftmost first (minbpe's encode, the same as applying each step
    to the whole text in turn).  Time grows with each chunk's length squared: for short chunks
    (a split pattern's pieces), not for the char variant's single chunk.

        >>> step = MergeStep(0, 1, 1, 9, 2, 3, ())
        >>> [(t.id, t.start, t.end) for t in replay([Token(1, i, i + 1, 0) for i in range(3)], [step])]
        [(9, 0, 2), (1, 2, 3)]
    """
    ranks = {s.pair: (r, s.new_id) for r, s in enumerate(steps)}

    def joined(a: Token, b: Token):
        found = ranks.get((a.id, b.id))
        return None if found is None else (found[0], Token(found[1], a.start, b.end, a.chunk))

    out: list[Token] = []
    for _, group in itertools.groupby(tokens, key=lambda t: t.chunk):
        out.extend(lowest_first(list(group), joined))
    return out


def occurrences(tok: BPETokenizer, text: str, k: int, tokens: list[Token] | None = None
                ) -> list[tuple[int, int]]:
    """Character spans where merge ``k`` fires in ``text``: adjacent ``left, right`` tokens of
    one chunk after the first ``k`` merges, scanned left to right without overlap (so "aaa"
    merges once for the pair "a a", as the textbook rule does).  ``tokens`` may pass
    ``segment(tok, text, k)`` when the caller already has it."""
    if tokens is None:
        _check_step(tok, k)
        tokens = segment(tok, text, k)
    return [(tokens[i].start, tokens[i + 1].end) for i in occurrence_indices(tok, tokens, k)]


def occurrence_indices(tok: BPETokenizer, tokens: list[Token], k: int) -> list[int]:
    """Indices ``i`` where ``tokens[i], tokens[i + 1]`` merge at step ``k`` (see ``occurrences``)."""
    left, right = _step_pair(tok, k)
    found, i = [], 0
    while i < len(tokens) - 1:
        a, b = tokens[i], tokens[i + 1]
        if a.id == left and b.id == right and a.chunk == b.chunk:
            found.append(i)
            i += 2
        else:
            i += 1
    return found


def _check_step(tok: BPETokenizer, k: int) -> None:
    steps = len(tok.trace) or len(tok.merge_triples)
    if not 0 <= k < steps:
        raise ValueError(f"Merge step must be between 0 and {steps - 1}, not {k}.")


def _step_pair(tok: BPETokenizer, k: int) -> tuple[int, int]:
    """The pair step ``k`` merges: from the trace (without copying a real tokenizer's merges)."""
    _check_step(tok, k)
    return tok.trace[k].pair if tok.trace else tuple(tok.merge_triples[k][:2])


@dataclass(frozen=True)
class MergeNode:
    """A token and, for merged tokens, the two tokens it was built from."""

    id: int
    text: str
    children: tuple[MergeNode, ...] = ()


def merge_tree(tok: BPETokenizer, token_id: int) -> MergeNode:
    """How token ``token_id`` was built, down to base characters or bytes."""
    parts = tok.merge_parts(token_id)
    text = tok.token_str(token_id)
    if parts is None:
        return MergeNode(token_id, text)
    return MergeNode(token_id, text, (merge_tree(tok, parts[0]), merge_tree(tok, parts[1])))


@dataclass(frozen=True)
class DagNode:
    """One token of a merge graph: ``parts`` are the two ids it was merged from (``None`` for a
    base token), ``step`` the 1-based merge that made it and ``count`` how often its pair occurred
    then (``None`` where the tokenizer has no training trace, such as GPT-2's)."""

    id: int
    text: str
    parts: tuple[int, int] | None
    step: int | None
    count: int | None
    height: int  # 0 for a base token, else 1 + the taller part's height


def merge_dag(tok: BPETokenizer, token_id: int) -> list[DagNode]:
    """How ``token_id`` was built, as a graph: each token once, even where it is used twice (as
    in ``' ' + ' '``), ``token_id`` first, then its parts depth first, left before right.  Steps
    count along the trace: an extended real tokenizer's old tokens have none (``step`` is ``None``).

        >>> tok = BPETokenizer.from_text("aaaa aaaa", 2, variant="char")
        >>> [(n.text, n.step) for n in merge_dag(tok, tok.stoi["aaaa"])]
        [('aaaa', 2), ('aa', 1), ('a', None)]
    """
    steps = {s.new_id: s.index for s in tok.trace} if tok.trace else {
        new: k for k, (_, _, new) in enumerate(tok.merge_triples)}
    counts = {s.new_id: s.count for s in tok.trace}
    nodes: dict[int, DagNode] = {}

    def visit(i: int) -> int:
        if i not in nodes:
            parts = tok.merge_parts(i)
            height = 0 if parts is None else 1 + max(visit(parts[0]), visit(parts[1]))
            step = steps.get(i)
            nodes[i] = DagNode(i, tok.token_str(i), parts, None if step is None else step + 1,
                               counts.get(i), height)
        return nodes[i].height

    visit(token_id)
    order: list[int] = []

    def walk(i: int) -> None:  # root first: the order a reader meets the tokens
        if i in order:
            return
        order.append(i)
        if nodes[i].parts:
            walk(nodes[i].parts[0])
            walk(nodes[i].parts[1])

    walk(token_id)
    return [nodes[i] for i in order]


def tree_lines(node: MergeNode) -> list[str]:
    """The merge tree drawn with box characters, one token a line."""
    lines = [f"{quoted(node.text)}  (id {node.id})"]

    def walk(n: MergeNode, prefix: str) -> None:
        for i, child in enumerate(n.children):
            last = i == len(n.children) - 1
            lines.append(f"{prefix}{'└─ ' if last else '├─ '}{quoted(child.text)}  (id {child.id})")
            walk(child, prefix + ("   " if last else "│  "))

    walk(node, "")
    return lines


@dataclass(frozen=True)
class CurvePoint:
    merges: int
    vocab_size: int
    tokens: int
    chars_per_token: float


def compression_curve(tok: BPETokenizer, characters: int) -> list[CurvePoint]:
    """Corpus length in tokens, and characters per token, after 0, 1, ... merges of one run."""
    if tok.initial_length is None:
        raise ValueError("This tokenizer has no training trace; train it with BPETrainer or from_text.")
    base = tok.vocab_size - len(tok.trace)  # an extended tokenizer starts from the real one's size
    lengths = [tok.initial_length] + [s.length_after for s in tok.trace]
    return [CurvePoint(m, base + m, n, characters / n if n else 0.0) for m, n in enumerate(lengths)]


def coinciding_curves(tokenizers: dict[str, BPETokenizer], characters: int) -> list[list[str]]:
    """Groups (two names or more, in ``tokenizers``' order) of tokenizers whose compression curves
    are the same, characters per token to a thousandth after every merge: drawn on one chart,
    their lines lie on each other and two legend entries show one line."""
    groups: dict[tuple, list[str]] = {}
    for name, tok in tokenizers.items():
        curve = tuple(round(p.chars_per_token, 3) for p in compression_curve(tok, characters))
        groups.setdefault(curve, []).append(name)
    return [names for names in groups.values() if len(names) > 1]


def pair_text(tok: BPETokenizer, left: int, right: int) -> tuple[str, str]:
    return tok.token_str(left), tok.token_str(right)


def explain_step(tok: BPETokenizer, k: int) -> str:
    """One line in plain words: why merge ``k`` happened."""
    step = tok.trace[k]
    left, right = pair_text(tok, step.left, step.right)
    new = tok.token_str(step.new_id)
    times = "time" if step.count == 1 else "times"
    left, right, new = quoted(left), quoted(right), quoted(new)
    line = (f"Merge {k + 1}: {left} + {right} occurs {step.count:,} {times} — more than any other "
            f"pair — so it becomes token {step.new_id}, {new}.")
    if step.ties:
        others = "pair has" if step.ties == 1 else "pairs have"
        line = (f"Merge {k + 1}: {left} + {right} occurs {step.count:,} {times}; {step.ties} other "
                f"{others} the same count, and the tie goes to the pair that occurs first in the "
                f"text — so it becomes token {step.new_id}, {new}.")
    return line


def unseen_words(corpus: str, text: str) -> list[str]:
    """Whitespace-separated words of ``text`` that never occur as a word in ``corpus``, in order."""
    known = set(corpus.split())
    return list(dict.fromkeys(w for w in text.split() if w not in known))


def highlighted_merge(tok: BPETokenizer, k: int) -> int | None:
    """Which merge (1-based, as the step view's "Merge 1: ..." counts) has its pair highlighted at
    step ``k``: the merge about to happen, ``k + 1``; ``None`` once every merge is done.  A lesson
    saying what a step shows quotes this (``core.lessons.tool_facts``), never its own count."""
    if not 0 <= k <= len(tok.trace):
        raise ValueError(f"Step must be between 0 and {len(tok.trace)}, not {k}.")
    return k + 1 if k < len(tok.trace) else None


def step_made(tok: BPETokenizer, text: str, token_id: int, start: list[Token] | None = None) -> int | None:
    """The first step (merges done) at which ``token_id`` is drawn as one token in ``text``
    (``segment``'s rule), or ``None`` when no step shows it."""
    for k in range(len(tok.trace) + 1):
        if any(t.id == token_id for t in segment(tok, text, k, start)):
            return k
    return None
