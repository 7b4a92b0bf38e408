"""The tokenizer: a value of base symbols plus ordered merges ``(left, right) -> new``.

One class serves every variant (``core.bpe.variants`` says what differs), the way seed 002's
``BPETokenizer`` and ``CharTokenizer`` share a shape (``from_text``/``encode``/``decode``/
``save``/``load``).  Every Unicode string round-trips through a byte-level tokenizer.

Every way to make one is a constructor of the class, and each passes plain fields to
``__init__`` (nothing is patched after it): it drains a ``BPETrainer`` (``from_text``,
``from_trainer``, ``extended``), keeps a prefix of its merges (``truncated``), or reads plain
fields from ``core.bpe.files`` (``load``, ``from_dict``), ``core.bpe.gpt2`` (``from_gpt2``) and
``core.bpe.pretrained`` (``from_pretrained``); none of those modules imports the class.  Leaves
out: the encoding machinery (``core.bpe.encoding``), the vocabulary's checks (``core.bpe.vocab``)
and how an extension's text is cut and its rank table grown (``core.bpe.extend``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ..atomic import write_json
from . import extend, files, gpt2, pretrained
from .alphabet import UNSEEN
from .encoding import ChunkEncoder, RankEncoder, Token
from .checks import (ArgumentError, EmptyCorpusError, UnknownCharacterError, check_count, check_id_list,
                     check_text)
from .pretokenize import check_pattern
from .ranks import merge_triples
from .trainer import BPETrainer, MergeStep, Progress
from .variants import variant_rules
from .vocab import special_ids, token_bytes_of

NORMALIZATIONS = (None, "NFC", "NFD", "NFKC", "NFKD")


class BPETokenizer:
    def __init__(
        self,
        *,
        variant: str = "char",
        base: Sequence[str] | None = None,
        merges: Iterable[tuple[int, int, int]] = (),
        end_of_word: str | None = None,
        pattern: str | None = None,
        special_tokens: dict[str, int] | Sequence[str] = (),
        byte_ids: Sequence[int] | None = None,
        pair_table: tuple[np.ndarray, np.ndarray] | None = None,
        normalization: str | None = None,
        trace: Sequence[MergeStep] = (),
        initial_length: int | None = None,
        exhausted: bool = False,
        extends: BPETokenizer | None = None,
    ) -> None:
        """The fields from ``variant`` to ``byte_ids`` are what a saved file holds.

        ``pair_table``: a ranked vocabulary's every way to join two tokens into one, ``(keys,
        merged)`` (``core.bpe.ranks.pair_table``); it then encodes by tiktoken's rule instead of
        applying the merges in order.  ``normalization``: the Unicode form text is put in before
        encoding (Qwen's "NFC").  The last four are the training history the constructors record:
        the merge steps, the text's length before them, whether its pairs ran out, and the
        tokenizer an extension continues (in memory only)."""
        self.variant_rules = variant_rules(variant)
        self.variant = self.variant_rules.name
        self.end_of_word = self.variant_rules.end_of_word(end_of_word)
        self.pattern = check_pattern(self.variant_rules.split_pattern(pattern))
        self.alphabet, self.byte_ids = self.variant_rules.base(base, byte_ids)
        self._merges = merge_triples(merges)
        base_bytes = self.variant_rules.base_bytes(self.alphabet, self.byte_ids)
        self.base_size = len(base_bytes)
        self._bytes = token_bytes_of(base_bytes, self._merges)
        self.special_tokens = special_ids(special_tokens, self._bytes)
        self._special_by_id = {i: s for s, i in self.special_tokens.items()}
        self._parts = {new: (a, b) for a, b, new in self._merges}
        if pair_table is not None and self.alphabet is not None:
            raise ArgumentError("Only a byte-level tokenizer can encode by ranks.")
        if normalization not in NORMALIZATIONS:
            raise ArgumentError(f"normalization must be one of {NORMALIZATIONS}, "
                                f"not {normalization!r}.")
        self.pair_table = pair_table
        if pair_table is None:
            self.encoder = ChunkEncoder(self._merges)
        else:
            self.encoder = RankEncoder(pair_table, self._token_index)
        self.normalization = normalization
        self.trace = tuple(trace)
        self.initial_length = initial_length
        self.exhausted = exhausted
        self.extends = extends

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def from_text(cls, text: str, num_merges: int, variant: str = "char", *,
                  end_of_word: str = "</w>", pattern: str | None = None,
                  special_tokens: Sequence[str] = (), top_k: int = 10, progress=None,
                  regex_timeout: float | None = None, max_memory: int | None = None) -> BPETokenizer:
        """Train on ``text`` for ``num_merges`` merges (fewer if the corpus runs out of pairs;
        then ``tok.exhausted`` is True and ``len(tok.merges)`` says how many were possible).
        ``regex_timeout`` and ``max_memory`` are ``BPETrainer``'s limits."""
        check_count(num_merges, "The number of merges")
        trainer = BPETrainer(text, variant=variant, end_of_word=end_of_word, pattern=pattern,
                             special_tokens=special_tokens, top_k=top_k, regex_timeout=regex_timeout,
                             max_memory=max_memory)
        for _ in trainer.run(num_merges, progress=progress):
            pass
        return cls.from_trainer(trainer)

    @classmethod
    def from_trainer(cls, trainer: BPETrainer) -> BPETokenizer:
        """The tokenizer after every merge ``trainer`` did so far (its ``trace`` holds the steps).

        A trainer that continues a tokenizer (``extend.extension_trainer``, which sets
        ``trainer.extends``) gives that tokenizer with the new merges after its own, as
        :meth:`extended` does."""
        if trainer.extends is not None:
            return trainer.extends._continued(trainer.steps, trainer.initial_length, trainer.exhausted)
        return cls(
            **trainer.fields(),
            trace=trainer.steps,
            initial_length=trainer.initial_length,
            exhausted=trainer.exhausted,
        )

    def extended(self, text: str, num_merges: int, top_k: int = 10,
                 progress: Progress | None = None) -> BPETokenizer:
        """A tokenizer that keeps every id and token of this one and adds ``num_merges`` merges
        learned from ``text`` (fewer if its pairs run out: then ``exhausted`` is True), with their
        ``trace`` (how: ``core.bpe.extend``).

        New ids start after every id of this tokenizer, special tokens included.  A char or word
        tokenizer cannot learn characters it never saw: such a text raises
        ``UnknownCharacterError``.
        """
        check_count(num_merges, "The number of merges")
        trainer = extend.extension_trainer(self, text, top_k)
        for _ in trainer.run(num_merges, progress=progress):
            pass
        return BPETokenizer.from_trainer(trainer)

    def _continued(self, steps: Sequence[MergeStep], initial_length: int,
                   exhausted: bool = False) -> BPETokenizer:
        """This tokenizer with the merges of ``steps`` after its own, and ``steps`` as its trace:
        an extension, always a ``BPETokenizer`` (a ``CharTokenizer`` holds no merges).  A ranked
        vocabulary keeps tiktoken's rule over its old and new tokens (``core.bpe.extend``)."""
        new = [(s.left, s.right, s.new_id) for s in steps]
        fields = dict(self._fields(), merges=self.merge_triples + new)
        if self.pair_table is not None:
            fields["pair_table"] = extend.grown_pair_table(self, new)
        return BPETokenizer(
            **fields,
            normalization=self.normalization,
            trace=steps,
            initial_length=initial_length,
            exhausted=exhausted,
            extends=self,
        )

    def truncated(self, num_merges: int) -> BPETokenizer:
        """The tokenizer after its first ``num_merges`` merges: merges are a prefix sequence, so
        one training run serves every smaller vocabulary without retraining.  An extension that
        keeps all of what it extends stays an extension, with fewer new merges."""
        num_merges = check_count(num_merges, "num_merges", 0, len(self._merges))
        if self.extends is not None:
            new_merges = num_merges - len(self.extends.merge_triples)
            if new_merges < 0:
                return self.extends.truncated(num_merges)
            return self.extends._continued(self.trace[:new_merges], self.initial_length)
        fields = dict(self._fields(), merges=self._merges[:num_merges])
        return type(self)(**fields, trace=self.trace[:num_merges], initial_length=self.initial_length)

    def with_special_tokens(self, added: dict[str, int] | Sequence[str]) -> BPETokenizer:
        """This tokenizer with more special tokens (a chat format's markers), every id and rule
        kept: a dict gives their ids (harmony's on GPT-4o's vocabulary), a list takes the ids after
        every id there is.  Tokens and ids it already has are kept as they are."""
        if isinstance(added, dict):
            taken = set(self.special_tokens.values())
            new = {s: i for s, i in added.items() if s not in self.special_tokens and i not in taken}
        else:
            fresh = [s for s in dict.fromkeys(added) if s not in self.special_tokens]
            top = max(self.ids, default=-1)
            new = {s: top + 1 + k for k, s in enumerate(fresh)}
        fields = dict(self._fields(), special_tokens={**self.special_tokens, **new})
        return type(self)(**fields, pair_table=self.pair_table, normalization=self.normalization)

    @classmethod
    def from_gpt2(cls, vocab_bpe_path, encoder_json_path) -> BPETokenizer:
        """GPT-2's own tokenizer from its ``vocab.bpe`` and ``encoder.json``."""
        fields = gpt2.read_gpt2(vocab_bpe_path, encoder_json_path)
        return cls._from_gpt2_fields(fields, f"{Path(vocab_bpe_path)} and {Path(encoder_json_path)}")

    @classmethod
    def from_gpt2_bytes(cls, vocab_bpe: bytes, encoder_json: bytes, vocab_name: str = "vocab.bpe",
                        encoder_name: str = "encoder.json") -> BPETokenizer:
        """GPT-2's tokenizer from the two files' bytes (an upload); the names label errors."""
        fields = gpt2.parse_gpt2(vocab_bpe, encoder_json, vocab_name, encoder_name)
        return cls._from_gpt2_fields(fields, f"{vocab_name} and {encoder_name}")

    @classmethod
    def _from_gpt2_fields(cls, fields: dict, names: str) -> BPETokenizer:
        """Fields read from GPT-2's files that do not make a tokenizer raise ``GPT2FileError``
        naming the files (both are read before anything is built)."""
        try:
            return cls(**fields)
        except ValueError as exc:
            raise gpt2.GPT2FileError(f"{names} do not make a tokenizer: {exc}") from None

    @classmethod
    def from_pretrained(cls, name: str, *, vocab_bpe=None, encoder_json=None,
                        cache_dir=None) -> BPETokenizer:
        """A real model's tokenizer, offline: ``"cl100k_base"`` (GPT-4), ``"o200k_base"`` (GPT-4o),
        ``"llama3"``, ``"qwen3"`` or ``"gpt2"`` (sources: ``core.bpe.pretrained``); encodes by
        tiktoken's rule, id for id, with merges recovered from the ranks for trees and exports."""
        if name == "gpt2":
            return cls.from_gpt2(*pretrained.gpt2_files(vocab_bpe, encoder_json))
        return cls(**pretrained.ranked_fields(name, cache_dir))

    @classmethod
    def byte_level(cls, pattern: str | None = None, special_tokens: Sequence[str] = ()) -> BPETokenizer:
        """A byte-level tokenizer with no merges: every UTF-8 byte one token."""
        return cls(variant="byte", pattern=pattern, special_tokens=special_tokens)

    def _fields(self) -> dict:
        """The constructor's arguments that a saved file holds (the value ``==`` compares)."""
        return dict(
            variant=self.variant,
            base=None if self.alphabet is None else self.alphabet.symbols,
            merges=list(self._merges),
            end_of_word=self.end_of_word,
            pattern=self.pattern,
            special_tokens=dict(self.special_tokens),
            byte_ids=self.byte_ids,
        )

    def _token_index(self) -> dict[bytes, int]:
        """``{bytes: id}`` of the ordinary tokens, which ranked encoding looks pieces up in."""
        ordinary = [i for i in self.ids if not self.is_special(i)]
        return dict(zip(map(self.token_bytes, ordinary), ordinary))

    # -- vocabulary -----------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return len(self._bytes) + len(self.special_tokens)

    @property
    def merges(self) -> list:
        """Merges in creation order, as the book and minbpe show them: ``(str, str)`` pairs for
        char/word, ``(int, int)`` for byte.  One type for every variant: :attr:`merge_ids`,
        :attr:`merge_texts`."""
        label = self.variant_rules.merge_label
        return [(label(self, a), label(self, b)) for a, b, _ in self._merges]

    @property
    def merge_ids(self) -> list[tuple[int, int]]:
        """Merges in creation order as ``(left_id, right_id)``, for every variant."""
        return [(a, b) for a, b, _ in self._merges]

    @property
    def merge_texts(self) -> list[tuple[str, str]]:
        """Merges in creation order as the two tokens' text (:meth:`token_str`), for every variant."""
        return [(self.token_str(a), self.token_str(b)) for a, b, _ in self._merges]

    @property
    def merge_triples(self) -> list[tuple[int, int, int]]:
        """``(left_id, right_id, new_id)`` in creation order, for every variant."""
        return list(self._merges)

    @property
    def ids(self) -> list[int]:
        return sorted(self._bytes) + sorted(self._special_by_id)

    @property
    def chars(self) -> list[str]:
        """The alphabet of a char tokenizer (the book's ``tok.chars``)."""
        if self.alphabet is None:
            raise AttributeError("A byte-level tokenizer has no character alphabet.")
        return list(self.alphabet.symbols)

    @property
    def vocab(self) -> list:
        """Token of every id, in id order: ``str`` for char/word (the book's ``tok.vocab``)."""
        return [self.variant_rules.vocab_entry(self, i) for i in self.ids]

    @property
    def stoi(self) -> dict[str, int]:
        """String -> id for char/word tokenizers (a later token wins, as in the book)."""
        return {self.token_str(i): i for i in self.ids}

    def token_bytes(self, token_id: int) -> bytes:
        if isinstance(token_id, bool) or not isinstance(token_id, (int, np.integer)):
            raise ArgumentError(f"A token id must be a whole number, not {type(token_id).__name__} "
                                f"{token_id!r}.")
        if token_id in self._bytes:
            return self._bytes[token_id]
        if token_id in self._special_by_id:
            return self._special_by_id[token_id].encode("utf-8")
        raise ValueError(f"Token id {token_id} is not in this vocabulary (size {self.vocab_size}).")

    def token_str(self, token_id: int) -> str:
        """Readable text of a token; bytes that are not whole UTF-8 characters show as ``\\xNN``."""
        return self.token_bytes(token_id).decode("utf-8", errors="backslashreplace")

    def is_special(self, token_id: int) -> bool:
        return token_id in self._special_by_id

    def merge_parts(self, token_id: int) -> tuple[int, int] | None:
        """The two ids a merged token was built from, or ``None`` for a base or special token."""
        return self._parts.get(token_id)

    # -- encoding -------------------------------------------------------------------------------
    def base_ids(self, text: str, unknown: str = "error") -> list[int]:
        """Ids of the single characters of ``text`` (char/word alphabets)."""
        try:
            return self.alphabet.ids(text, unknown, 0).tolist()
        except UnknownCharacterError as exc:
            exc.word = text
            raise

    def unknown_characters(self, text: str) -> list[tuple[int, str]]:
        """``(position, character)`` of every character a char/word tokenizer cannot encode."""
        return self.variant_rules.unknown_characters(self, text)

    def tokenize(self, text: str) -> list[str]:
        """Token strings of ``text``; unlike ``encode`` it accepts characters the alphabet never saw,
        which stay single tokens (seed 000: ``slow`` -> ``['s', 'low</w>']``)."""
        tokens = self.encode_tokens(check_text(text), unknown="keep", offsets=False)
        return [chr(t.id - UNSEEN) if t.id >= UNSEEN else self.token_str(t.id) for t in tokens]

    def encode(self, text: str, *, unknown: str = "error", allowed_special: str = "all") -> list[int]:
        """Text to ids.  ``unknown='skip'`` drops characters outside a char/word alphabet
        (otherwise :class:`UnknownCharacterError` names the first one and its position).
        ``allowed_special='none'`` treats special-token text as ordinary text."""
        text = self.normalized(check_text(text))
        return self.variant_rules.encode(self, text, unknown, self._specials(allowed_special))

    def encode_tokens(self, text: str, *, unknown: str = "error", allowed_special: str = "all",
                      offsets: bool = True) -> list[Token]:
        """Like ``encode`` but each token says which characters of ``text`` it covers (of its NFC
        form, for a tokenizer that normalizes)."""
        text = self.normalized(check_text(text))
        if unknown == "keep" and offsets:
            raise ValueError("unknown must be 'error' or 'skip'.")
        specials = self._specials(allowed_special)
        if not text:
            return []
        return self.variant_rules.encode_tokens(self, text, unknown, specials, offsets)

    def normalized(self, text: str) -> str:
        """``text`` as this tokenizer encodes it and its offsets count (Qwen's: in NFC)."""
        form = self.normalization
        if form is None or unicodedata.is_normalized(form, text):
            return text
        return unicodedata.normalize(form, text)

    def _specials(self, allowed_special: str) -> list[str]:
        if allowed_special not in ("all", "none"):
            raise ValueError("allowed_special must be 'all' or 'none'.")
        return list(self.special_tokens) if allowed_special == "all" else []

    # -- decoding -------------------------------------------------------------------------------
    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        return b"".join(map(self.token_bytes, check_id_list(ids)))

    def decode(self, ids: Iterable[int]) -> str:
        """Ids to text.  Byte-level ids that end inside a character decode to U+FFFD there;
        the word variant gives its words joined by single spaces."""
        return self.variant_rules.decode(self, check_id_list(ids))

    # -- files ----------------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write our versioned JSON atomically (a crash mid-write leaves the old file)."""
        write_json(path, self.to_dict())

    @classmethod
    def load(cls, path) -> BPETokenizer:
        """A tokenizer file: ours, or the book's JSON (then a char tokenizer)."""
        return cls.loads(files.read_file(path), source=str(Path(path)))

    @classmethod
    def loads(cls, raw: bytes | str, source: str = "the uploaded file") -> BPETokenizer:
        return cls.from_dict(files.parse_json(raw, source), source)

    def to_dict(self) -> dict:
        kind = "char" if isinstance(self, CharTokenizer) else "bpe"
        return files.fields_to_dict(self._fields(), kind)

    @classmethod
    def from_dict(cls, data, source: str = "the tokenizer data") -> BPETokenizer:
        """Rebuild a tokenizer from ``to_dict`` output or from the book's JSON."""
        kind, fields = files.fields_from_dict(data, source)
        try:
            return (CharTokenizer if kind == "char" else BPETokenizer)(**fields)
        except ValueError as exc:
            raise files.TokenizerFileError(f"{source} is inconsistent: {exc}") from None

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(variant={self.variant!r}, vocab_size={self.vocab_size}, "
                f"merges={len(self._merges)})")

    def __eq__(self, other) -> bool:
        """Same kind, same fields: what a saved file would hold, compared without writing it."""
        if not isinstance(other, BPETokenizer):
            return False
        same_kind = isinstance(self, CharTokenizer) == isinstance(other, CharTokenizer)
        return same_kind and self._fields() == other._fields()

    __hash__ = None


class CharTokenizer(BPETokenizer):
    """One token per character (seed 002's comparison baseline): a BPE tokenizer with no merges."""

    def __init__(self, chars: Sequence[str] | None = None, **kwargs) -> None:
        kwargs.setdefault("variant", "char")
        if chars is not None:
            kwargs["base"] = chars
        super().__init__(**kwargs)
        if self._merges or self.variant != "char":
            raise ValueError("A CharTokenizer has no merges; use BPETokenizer for merges.")

    @classmethod
    def from_text(cls, text: str, *args, **kwargs) -> CharTokenizer:
        if not text:
            raise EmptyCorpusError()
        return cls(sorted(set(text)))
