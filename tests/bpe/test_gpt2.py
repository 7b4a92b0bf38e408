"""core.bpe.gpt2: GPT-2's own files give exactly GPT-2's ids (checked against tiktoken built offline
from the very same files), and broken files give messages naming the file and line."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import BPETokenizer
from core.bpe import load_gpt2, load_gpt2_bytes
from core.bpe.gpt2 import (MAX_FILE_BYTES, MAX_ID, MAX_TOKEN_CHARS, GPT2FileError, bytes_to_token,
                           bytes_to_unicode, unicode_to_bytes)
from core.bpe.pretokenize import GPT2_PATTERN
from tests.conftest import need_module

tiktoken = need_module("tiktoken", "pip install -r requirements-dev.txt")

MULTILINGUAL = [
    "Héllo wörld, ça va? naïve café résumé Ærøskøbing",
    "Привет, мир! Съешь же ещё этих мягких французских булок.",
    "Καλημέρα κόσμε· ΑΒΓΔ αβγδ",
    "안녕하세요 세계! 한국어 텍스트입니다.",
    "你好，世界。日本語のテキストです。漢字かなカナ",
    "مرحبا بالعالم، هذا نص عربي.",
    "emoji 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️ 🇫🇷 👩🏿‍💻",
    "line one\r\nline two\r\n\r\n\ttabbed\t\tcolumns\n   indented\n",
    "numbers 3.14159 1,000,000 2024-11-22 007 ١٢٣ ½",
    "it's don't we're they've I'd she'll I'm IT'S WE'RE",
    "   leading and trailing spaces   ",
    "<|endoftext|> between <|endoftext|><|endoftext|> documents",
    "\x00\x01\x7f control \u200b zero width \ufeff bom \U0010ffff",
    "", " ", "a", "\n",
]


@pytest.fixture(scope="module")
def gpt2(gpt2_files):
    return load_gpt2(*gpt2_files)


@pytest.fixture(scope="module")
def reference(gpt2_files):
    """tiktoken's GPT-2, built from the local files: the rank of a token is its id."""
    _, encoder_path = gpt2_files
    encoder = json.loads(encoder_path.read_text(encoding="utf-8"))
    table = unicode_to_bytes()
    ranks = {bytes(table[ch] for ch in t): i for t, i in encoder.items() if t != "<|endoftext|>"}
    return tiktoken.Encoding(name="gpt2-local", pat_str=GPT2_PATTERN, mergeable_ranks=ranks,
                             special_tokens={"<|endoftext|>": 50256}, explicit_n_vocab=50257)


# -- the byte alphabet --------------------------------------------------------------------------
def test_bytes_to_unicode_is_a_printable_bijection():
    table = bytes_to_unicode()
    assert sorted(table) == list(range(256))
    assert len(set(table.values())) == 256
    assert all(len(ch) == 1 and ch.isprintable() and not ch.isspace() for ch in table.values())
    assert table[ord(" ")] == "Ġ" and table[ord("\n")] == "Ċ" and table[ord("A")] == "A"
    assert table[0] == chr(256) and table[173] == chr(256 + 67)


@given(st.binary(max_size=64))
def test_token_strings_round_trip_bytes(data):
    table = unicode_to_bytes()
    assert bytes(table[ch] for ch in bytes_to_token(data)) == data


# -- the loaded tokenizer -----------------------------------------------------------------------
def test_loads_the_whole_vocabulary(gpt2):
    assert gpt2.vocab_size == 50257
    assert len(gpt2.merge_triples) == 50000
    assert gpt2.special_tokens == {"<|endoftext|>": 50256}
    assert gpt2.pattern == GPT2_PATTERN
    assert gpt2.token_bytes(50256) == b"<|endoftext|>"
    assert gpt2.token_bytes(1169) == b"the" and gpt2.token_bytes(262) == b" the"
    assert bytes_to_token(gpt2.token_bytes(262)) == "Ġthe"
    assert bytes_to_token(gpt2.token_bytes(262)).replace("Ġ", "␣") == "␣the"
    assert gpt2.is_special(50256) and gpt2.token_str(50256) == "<|endoftext|>"


def test_from_gpt2_classmethod(gpt2_files):
    assert BPETokenizer.from_gpt2(*gpt2_files).encode("Hello world") == [15496, 995]


def test_known_ids(gpt2):
    assert gpt2.encode("Hello, world!") == [15496, 11, 995, 0]
    assert gpt2.encode("<|endoftext|>") == [50256]
    assert gpt2.encode("<|endoftext|>", allowed_special="none") == [27, 91, 437, 1659, 5239, 91, 29]


def test_tiny_shakespeare_matches_tiktoken(gpt2, reference, shakespeare):
    ids = gpt2.encode(shakespeare)
    assert ids == reference.encode_ordinary(shakespeare)
    assert gpt2.decode(ids) == shakespeare


def test_the_verdict_matches_tiktoken(gpt2, reference, verdict):
    ids = gpt2.encode(verdict)
    assert ids == reference.encode_ordinary(verdict)
    assert gpt2.decode(ids) == verdict


@pytest.mark.parametrize("text", MULTILINGUAL)
def test_multilingual_matches_tiktoken(gpt2, reference, text):
    ids = gpt2.encode(text)
    assert ids == reference.encode(text, allowed_special="all")
    assert gpt2.encode(text, allowed_special="none") == reference.encode_ordinary(text)
    assert gpt2.decode(ids) == text


def test_all_multilingual_at_once(gpt2, reference):
    text = "\n".join(MULTILINGUAL)
    assert gpt2.encode(text) == reference.encode(text, allowed_special="all")


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_random_text_matches_tiktoken(gpt2, reference, text):
    ids = gpt2.encode(text, allowed_special="none")
    assert ids == reference.encode_ordinary(text)
    assert gpt2.decode(ids) == text


# -- broken files ---------------------------------------------------------------------------------
@pytest.fixture()
def small_files(tmp_path):
    """A four-merge GPT-2-format pair of files, to break in different ways."""
    encoder = {ch: i for i, ch in enumerate(bytes_to_unicode().values())}
    merges = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("a", "b")]
    for a, b in merges:
        encoder[a + b] = len(encoder)
    encoder["<|endoftext|>"] = len(encoder)
    vocab = tmp_path / "vocab.bpe"
    enc = tmp_path / "encoder.json"
    vocab.write_text("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges), encoding="utf-8")
    enc.write_text(json.dumps(encoder), encoding="utf-8")
    return vocab, enc, encoder


def test_small_files_load(small_files):
    vocab, enc, encoder = small_files
    tok = load_gpt2(vocab, enc)
    assert tok.encode(" the") == [encoder["Ġthe"]]
    assert tok.special_tokens == {"<|endoftext|>": encoder["<|endoftext|>"]}


def test_missing_file(small_files, tmp_path):
    vocab, enc, _ = small_files
    with pytest.raises(ValueError, match="nope.json: file not found"):
        load_gpt2(vocab, tmp_path / "nope.json")
    with pytest.raises(ValueError, match="nope.bpe: file not found"):
        load_gpt2(tmp_path / "nope.bpe", enc)


def test_bad_json(small_files):
    vocab, enc, _ = small_files
    enc.write_text('{"a": 1,', encoding="utf-8")
    with pytest.raises(GPT2FileError, match=r"encoder.json: not valid JSON \(line 1"):
        load_gpt2(vocab, enc)
    enc.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match="expected a JSON object"):
        load_gpt2(vocab, enc)


def test_bad_ids_in_encoder(small_files):
    vocab, enc, encoder = small_files
    enc.write_text(json.dumps({**encoder, "zz": "7"}), encoding="utf-8")
    with pytest.raises(ValueError, match="'zz' has id '7'"):
        load_gpt2(vocab, enc)
    enc.write_text(json.dumps({**encoder, "zz": 3}), encoding="utf-8")
    with pytest.raises(ValueError, match="both have id 3"):
        load_gpt2(vocab, enc)


def test_encoder_missing_a_byte(small_files):
    vocab, enc, encoder = small_files
    del encoder["A"]
    enc.write_text(json.dumps(encoder), encoding="utf-8")
    with pytest.raises(ValueError, match="no id for byte 65"):
        load_gpt2(vocab, enc)


@pytest.mark.parametrize("merges, message", [
    ("Ġ t\nh e\nĠt hex\n", r"vocab.bpe, line 4: token 'hex' is not in encoder.json"),
    ("Ġ t\nh e\nĠt he\nb a\n", r"line 5: the merged token 'ba' is not in encoder.json"),
    ("Ġt he\nĠ t\nh e\na b\n", r"line 2: token 'Ġt' is used before any earlier merge"),
    ("Ġ t\nh e\nĠt he\na b\na b\n", r"line 6: the merged token 'ab' .*already made by line 5"),
    ("Ġ t\nh e x\n", r"vocab.bpe, line 3: expected two tokens"),
    ("Ġ t\nh e\nĠt he\n", r"encoder.json: 1 token\(s\) that neither .* e.g. 'ab'"),
])
def test_bad_vocab_bpe_names_file_and_line(small_files, merges, message):
    vocab, enc, _ = small_files
    vocab.write_text("#version: 0.2\n" + merges, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        load_gpt2(vocab, enc)


def test_not_utf8(small_files):
    vocab, enc, _ = small_files
    vocab.write_bytes(b"#version: 0.2\n\xff\xfe\n")
    with pytest.raises(ValueError, match="vocab.bpe: not UTF-8"):
        load_gpt2(vocab, enc)


# -- uploaded bytes: nothing on disk, everything bounded before it is built -------------------------
def test_bytes_give_the_same_tokenizer_as_files(gpt2, gpt2_files):
    vocab, enc = (p.read_bytes() for p in gpt2_files)
    tok = load_gpt2_bytes(vocab, enc)
    assert tok.merge_triples == gpt2.merge_triples
    assert tok.special_tokens == gpt2.special_tokens
    assert tok.encode("Hello, world!") == [15496, 11, 995, 0]


def test_bytes_errors_name_the_upload(small_files):
    vocab, enc, _ = small_files
    with pytest.raises(GPT2FileError, match=r"^my vocab.bpe, line 2: token 'hex' is not in my encoder.json;"):
        load_gpt2_bytes("#version: 0.2\nĠ hex\n".encode(), enc.read_bytes(), "my vocab.bpe",
                        "my encoder.json")


@pytest.mark.parametrize("encoder, message", [
    ("[" * 100_000 + "]" * 100_000, "not a JSON object of token ids"),
    ('{"a": 1' + "0" * 5000 + "}", "not a JSON object of token ids"),
    ('{"a": 1099511627776}', f"ids must be integers from 0 to {MAX_ID - 1:,}"),
    ('{"a": -1}', "ids must be integers"),
    ('{"a": true}', "ids must be integers"),
    (json.dumps({"x" * (MAX_TOKEN_CHARS + 1): 0}), f"characters long; the limit is {MAX_TOKEN_CHARS:,}"),
])
def test_hostile_encoders_are_refused_with_a_message(small_files, encoder, message):
    vocab, _, _ = small_files
    with pytest.raises(GPT2FileError, match=message):
        load_gpt2_bytes(vocab.read_bytes(), encoder.encode())


def test_files_over_the_size_limit_are_refused_before_parsing(small_files):
    vocab, enc, _ = small_files
    big = b" " * (MAX_FILE_BYTES + 1)
    with pytest.raises(GPT2FileError, match="encoder.json: 16.0 MiB is too big"):
        load_gpt2_bytes(vocab.read_bytes(), big)
    with pytest.raises(GPT2FileError, match="vocab.bpe: 16.0 MiB is too big"):
        load_gpt2_bytes(big, enc.read_bytes())
    with open(enc, "wb") as f:  # sparse: the size is checked on the open file, before reading
        f.truncate(4 * 2**30)
    with pytest.raises(GPT2FileError, match="4096.0 MiB is too big"):
        load_gpt2(vocab, enc)
