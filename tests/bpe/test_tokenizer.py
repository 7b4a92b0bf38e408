"""What a user of the tokenizer checks: round trips, offsets, special tokens, files, bad input."""

import gc
import json
import pickle
import subprocess
import sys

import pytest

from core import (BPETokenizer, CharTokenizer, TokenizerFileError, UnknownCharacterError,
                  load_tokenizer, loads_tokenizer)
from core.bpe.encoding import PackedTokens, Token
from core.corpus import CorpusError, corpus_stats, decode_corpus, read_corpus

TEXT = "the cat sat on the mat the cat ran\nlow lower lowest\n"
MULTILINGUAL = "naïve café — Привет, мир! Γειά σου 안녕하세요 你好世界 مرحبا 👩‍👩‍👧 👍🏽 e\u0301\n"


def trained(variant, text=TEXT, merges=30, **kw):
    return BPETokenizer.from_text(text, merges, variant=variant, **kw)


@pytest.mark.parametrize("variant", ["char", "word", "byte"])
def test_save_load_round_trip_keeps_every_id(tmp_path, variant):
    tok = trained(variant, special_tokens=["<|endoftext|>"] if variant == "byte" else ())
    tok.save(tmp_path / "tok.json")
    loaded = load_tokenizer(tmp_path / "tok.json")
    assert loaded == tok and loaded.vocab_size == tok.vocab_size
    assert loaded.encode(TEXT) == tok.encode(TEXT)
    assert json.loads((tmp_path / "tok.json").read_text())["version"] == 1


def test_char_tokenizer_has_the_same_shape(tmp_path):
    tok = CharTokenizer.from_text(TEXT)
    assert tok.vocab_size == len(set(TEXT)) and tok.merges == []
    assert tok.decode(tok.encode(TEXT)) == TEXT
    tok.save(tmp_path / "c.json")
    assert isinstance(load_tokenizer(tmp_path / "c.json"), CharTokenizer)


@pytest.mark.parametrize("content, problem", [
    (b"", "not valid JSON"),
    (b"{not json", "not valid JSON"),
    (b"\xff\xfe garbage", "not UTF-8"),
    (b"[1, 2, 3]", "expected a JSON object"),
    (b'{"format": "bpe-explorer/tokenizer", "version": 99}', "version 99"),
    (b'{"version": 1, "model": {"type": "BPE"}}', "not a BPE Explorer tokenizer"),
    (b'{"format": "bpe-explorer/tokenizer", "version": 1, "variant": "char", "alphabet": ["a"], '
     b'"merges": [[0, 7, 1]]}', "does not exist"),
    (b'{"format": "bpe-explorer/tokenizer", "version": 1, "variant": "char"}', "missing"),
    (b'{"chars": ["a", "b"], "merges": [["a", "zz"]]}', "'zz'"),
])
def test_corrupt_tokenizer_files_name_the_problem(tmp_path, content, problem):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(TokenizerFileError, match=problem):
        load_tokenizer(path)
    with pytest.raises(TokenizerFileError):
        loads_tokenizer(content)


def test_missing_tokenizer_file_is_a_clear_error(tmp_path):
    with pytest.raises(TokenizerFileError, match="Cannot read"):
        load_tokenizer(tmp_path / "nope.json")


def test_unseen_character_error_names_character_and_position():
    tok = trained("char")
    text = "the cat sat on a Zero"
    with pytest.raises(UnknownCharacterError) as info:
        tok.encode(text)
    assert info.value.char == "Z" and info.value.position == text.index("Z") == 17
    assert "'Z'" in str(info.value) and "position 17" in str(info.value)
    assert tok.decode(tok.encode(text, unknown="skip")) == "the cat sat on a ero"
    assert tok.unknown_characters("aZtQ") == [(1, "Z"), (3, "Q")]


def test_word_variant_unseen_character_position_is_in_the_whole_text():
    tok = trained("word")
    with pytest.raises(UnknownCharacterError) as info:
        tok.encode("the cat sat quietly")
    assert info.value.position == "the cat sat quietly".index("q")


@pytest.mark.parametrize("variant", ["char", "byte"])
def test_offsets_cover_the_text(variant):
    text = MULTILINGUAL if variant == "byte" else TEXT
    tok = trained(variant, text=text * 3, merges=60)
    tokens = tok.encode_tokens(text)
    assert [t.id for t in tokens] == tok.encode(text)
    if variant == "char":
        assert "".join(text[t.start:t.end] for t in tokens) == text
    else:  # a byte token may end inside a character; spans then overlap on that character
        assert tokens[0].start == 0 and tokens[-1].end == len(text)
        assert all(a.end >= b.start for a, b in zip(tokens, tokens[1:]))


def test_word_offsets_point_at_the_words():
    tok = trained("word")
    text = "  the   cat\n"
    spans = [text[t.start:t.end] for t in tok.encode_tokens(text)]
    assert "".join(spans) == "thecat"


def test_special_tokens_are_never_split():
    tok = BPETokenizer.from_text("hello<|endoftext|>world " * 20, 40, variant="byte", pattern="gpt2",
                                 special_tokens=["<|endoftext|>"])
    eot = tok.special_tokens["<|endoftext|>"]
    ids = tok.encode("hi<|endoftext|>there")
    assert ids.count(eot) == 1 and tok.decode(ids) == "hi<|endoftext|>there"
    assert eot not in tok.encode("hi<|endoftext|>there", allowed_special="none")
    assert all(eot not in (s.left, s.right) for s in tok.trace)  # never merged during training


def test_special_tokens_added_keep_every_id_and_rule():
    tok = BPETokenizer.from_text("hello world " * 20, 10, "byte", special_tokens=["<|end|>"])
    chat = tok.with_special_tokens(["<|im_start|>", "<|end|>"])
    assert chat.special_tokens == {**tok.special_tokens, "<|im_start|>": max(tok.ids) + 1}
    assert chat.encode("hello<|im_start|>world") == [*tok.encode("hello"), max(tok.ids) + 1,
                                                      *tok.encode("world")]
    given = tok.with_special_tokens({"<|x|>": 900, "<|y|>": tok.special_tokens["<|end|>"]})
    assert given.special_tokens == {**tok.special_tokens, "<|x|>": 900}  # a taken id keeps its name


@pytest.mark.parametrize("pattern", [None, "gpt2", "gpt4", r"\w+|\s+|[^\w\s]+"])
def test_byte_variant_round_trips_any_unicode(pattern):
    tok = trained("byte", text=MULTILINGUAL * 5, merges=80, pattern=pattern)
    for text in (MULTILINGUAL, "\x00\r\n\t", "🤖" * 7, "unseen: ∮ ℵ ᚠ"):
        assert tok.decode(tok.encode(text)) == text


def test_token_str_shows_partial_utf8_bytes_honestly():
    tok = trained("byte", text="😀😀😀😀", merges=2)
    partial = tok.trace[0].new_id  # the first merge joins two bytes of the emoji's UTF-8
    assert "\\x" in tok.token_str(partial) and "\ufffd" not in tok.token_str(partial)


@pytest.mark.parametrize("call, message", [
    (lambda: BPETokenizer.from_text("", 10), "empty"),
    (lambda: BPETokenizer.from_text("abc", -1), "0 or more"),
    (lambda: BPETokenizer.from_text("   \n ", 5, variant="word"), "no words"),
    (lambda: BPETokenizer.from_text("abc", 5, variant="bogus"), "Unknown BPE variant"),
    (lambda: BPETokenizer.from_text("abc", 5, variant="byte", pattern="(unclosed"), "not a valid regular"),
    (lambda: BPETokenizer.from_text("abc", 5, variant="word", end_of_word=""), "marker"),
    (lambda: trained("char").truncated(999), "between 0 and"),
    (lambda: trained("char").decode([10**6]), "not in this vocabulary"),
])
def test_bad_arguments_raise_value_error_with_a_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_more_merges_than_possible_stops_early_and_says_so():
    tok = BPETokenizer.from_text("abcabc", 100)
    assert tok.exhausted
    assert len(tok.merges) < 100
    assert tok.encode("abcabc") == [tok.vocab_size - 1]


def test_non_utf8_corpus_names_the_byte(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("café au lait".encode("latin-1"))
    with pytest.raises(CorpusError, match="offset 3"):
        read_corpus(path)
    assert read_corpus(path, errors="replace") == "caf\ufffd au lait"
    assert decode_corpus("\ufeffhi".encode()) == "hi"


def test_corpus_stats():
    text = "héllo wörld\nbye"
    stats = corpus_stats(text)
    assert (stats.characters, stats.bytes, stats.words, stats.lines) == (15, 17, 3, 2)
    assert stats.unique_characters == len(set(text)) == 13


@pytest.mark.slow
def test_fifty_megabyte_corpus_trains_with_progress(shakespeare):
    text = (shakespeare * 46)[:50_000_000]
    progress = []
    tok = BPETokenizer.from_text(text, 12, progress=lambda done, total: progress.append(done))
    assert progress[-1] == 12 and len(tok.merges) == 12
    small = BPETokenizer.from_text(shakespeare, 12)
    assert tok.merges[:3] == small.merges[:3]


def test_core_imports_no_streamlit():
    code = ("import sys, core, core.bpe.trainer, core.bpe.files, core.corpus; "
            "print('streamlit' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("variant", ["char", "word", "byte"])
def test_merge_ids_and_merge_texts_have_one_type_for_every_variant(variant):
    tok = BPETokenizer.from_text(TEXT, 8, variant=variant)
    assert len(tok.merge_ids) == len(tok.merge_texts) == len(tok.merges) == 8
    for (a, b), (left, right) in zip(tok.merge_ids, tok.merge_texts):
        assert isinstance(a, int) and isinstance(b, int)
        assert (left, right) == (tok.token_str(a), tok.token_str(b))
    assert tok.merges == (tok.merge_ids if variant == "byte" else tok.merge_texts)


@pytest.mark.parametrize("variant", ["char", "word", "byte"])
def test_a_pickled_tokenizer_is_the_same_tokenizer(variant):
    """A job's tokenizer crosses processes pickled, its lookup table built or not."""
    tok = trained(variant, text=MULTILINGUAL + TEXT)
    tok.encode(TEXT)
    copy = pickle.loads(pickle.dumps(tok))
    assert copy == tok and copy.vocab_size == tok.vocab_size and copy.ids == tok.ids
    assert [copy.token_bytes(i) for i in copy.ids] == [tok.token_bytes(i) for i in tok.ids]
    assert copy.encode(MULTILINGUAL) == tok.encode(MULTILINGUAL) and copy.trace == tok.trace
    with pytest.raises(ValueError, match="not in this vocabulary"):
        copy.token_bytes(tok.vocab_size + 5)


def test_a_large_alphabet_pickles_as_its_characters():
    """A pasted alphabet of tens of thousands of characters goes to a job as about their UTF-8,
    not as every symbol's bytes and a lookup table beside them (which the server's threads
    pickled and unpickled for each job, holding the GIL)."""
    chars = "".join(map(chr, range(0x4E00, 0x4E00 + 20_000)))
    tok = BPETokenizer.from_text(chars * 2, 10, "char")
    assert tok.decode(tok.encode(chars)) == chars
    assert len(pickle.dumps(tok)) < 1.5 * len(chars.encode())


def test_packed_tokens_read_back_as_the_tokens_they_were_given():
    tokens = trained("byte", text=MULTILINGUAL * 3, merges=40).encode_tokens(MULTILINGUAL)
    packed = PackedTokens(tokens)
    assert len(packed) == len(tokens) and list(packed) == tokens and packed == tokens
    assert packed[3] == tokens[3] and packed[-1] == tokens[-1] and list(packed[5:9]) == tokens[5:9]
    assert packed.ids.tolist() == [t.id for t in tokens]
    assert not PackedTokens() and PackedTokens() == [] and packed != tokens[:-1]


def test_packed_tokens_are_no_python_object_a_token():
    """What a room's caches of encoded texts hold: a full garbage collection walks each object the
    caches keep, holding the interpreter meanwhile, so a token must not be one."""
    def tokens_alive() -> int:
        gc.collect()
        return sum(isinstance(o, Token) for o in gc.get_objects())

    text = "".join(chr(0x4E00 + i % 3000) for i in range(20_000))
    tok = CharTokenizer.from_text(text)
    before = tokens_alive()
    packed = PackedTokens(tok.encode_tokens(text))
    assert len(packed) == 20_000 and tokens_alive() == before
