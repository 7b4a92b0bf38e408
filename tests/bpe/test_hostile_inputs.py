"""Every hostile input to the BPE trainer and encoder ends fast, with a ValueError subclass whose message a
workshop attendee understands, and with bounded memory (issue 9, items 4 and 5)."""

import json
import random
import string
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from core import (
    BPETokenizer,
    BPETrainer,
    CorpusTooLargeError,
    PatternTimeoutError,
    TokenizerFileError,
    loads_tokenizer,
    training_memory_estimate,
)
from core.bpe import pretokenize

ROOT = Path(__file__).resolve().parents[2]
FAST_S = 5.0  # generous on a busy 2-core machine; each case takes milliseconds when idle


def doubling_file() -> bytes:
    """40 merges, each joining the previous token with itself: 2**40 bytes if ever built."""
    merges = [[0, 0, 1]] + [[k, k, k + 1] for k in range(1, 40)]
    data = {"format": "bpe-explorer/tokenizer", "version": 1, "kind": "bpe", "variant": "char",
            "merges": merges, "special_tokens": {}, "alphabet": ["a"]}
    return json.dumps(data).encode()


def ours(**fields) -> bytes:
    data = {"format": "bpe-explorer/tokenizer", "version": 1, "kind": "bpe", "variant": "byte",
            "merges": [[97, 98, 256]], "special_tokens": {}, "pattern": None}
    data.update(fields)
    return json.dumps(data).encode()


HOSTILE_FILES = {
    "deep JSON": (b"[" * 100_000 + b"]" * 100_000, "nests its JSON too deeply"),
    "doubling merges": (doubling_file(), "bytes long; a token may be at most"),
    "id 2**40": (ours(merges=[[97, 98, 2**40]]), "ids must be whole numbers"),
    "negative id": (ours(merges=[[-1, 98, 256]]), "ids must be whole numbers"),
    "bool id": (ours(merges=[[True, 98, 256]]), "ids must be whole numbers"),
    "float id": (ours(merges=[[97.0, 98, 256]]), "ids must be whole numbers"),
    "id far beyond the file": (ours(merges=[[97, 98, 100_000]]), "the number of tokens this file defines"),
    "bad split pattern": (ours(pattern="(unclosed"), "not a valid regular expression"),
    "pattern not text": (ours(pattern=["x"]), "must be text"),
    "special token not a string id": (ours(special_tokens={"<|e|>": "257"}), "ids must be whole numbers"),
    "special id colliding": (ours(special_tokens={"<|e|>": 256}), "which a normal token has"),
    "two specials one id": (ours(special_tokens={"<|a|>": 257, "<|b|>": 257}), "share one id"),
    "huge special token": (ours(special_tokens={"x" * 10_000: 257}), "characters long"),
    "merges not a list": (ours(merges="abc"), "merges must be a list"),
    "book merge of non-strings": (b'{"chars": ["a"], "merges": [[1, 2]]}', "pair of strings"),
    "huge integer": (b'{"format": "bpe-explorer/tokenizer", "version": 1, "variant": "byte", "merges": [[1'
                     + b"0" * 5000 + b', 1, 256]]}', "not a usable JSON file"),
}


@pytest.mark.parametrize("name", list(HOSTILE_FILES))
def test_hostile_tokenizer_file_is_refused_fast(name):
    content, message = HOSTILE_FILES[name]
    start = time.monotonic()
    with pytest.raises(TokenizerFileError, match=message) as info:
        loads_tokenizer(content, source="evil.json")
    assert time.monotonic() - start < FAST_S
    assert str(info.value).startswith("evil.json")


PEAK_SCRIPT = textwrap.dedent("""
    import sys
    from core import TokenizerFileError, loads_tokenizer
    def peak_mb():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024
    content = open(sys.argv[1], "rb").read()
    before = peak_mb()
    try:
        loads_tokenizer(content)
    except TokenizerFileError:
        print("refused", peak_mb() - before)
""")


@pytest.mark.parametrize("name", ["deep JSON", "doubling merges"])
def test_hostile_tokenizer_file_keeps_memory_small(tmp_path, name):
    path = tmp_path / "evil.json"
    path.write_bytes(HOSTILE_FILES[name][0])
    result = subprocess.run([sys.executable, "-c", PEAK_SCRIPT, str(path)], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    verdict, growth = result.stdout.split()
    assert verdict == "refused"
    assert float(growth) < 300, f"loading {name} raised the peak memory by {growth} MB"


def trained():
    return BPETokenizer.from_text("low lower newest widest low low", 5)


HOSTILE_ARGUMENTS = {
    "num_merges as text": (lambda: BPETokenizer.from_text("abc", "10"), "whole number"),
    "num_merges True": (lambda: BPETokenizer.from_text("abc", True), "whole number"),
    "num_merges 1.5": (lambda: BPETokenizer.from_text("abc", 1.5), "whole number"),
    "num_merges negative": (lambda: BPETokenizer.from_text("abc", -3), "0 or more"),
    "run with text": (lambda: list(BPETrainer("abc").run("2")), "whole number"),
    "encode None": (lambda: trained().encode(None), "must be a str"),
    "encode bytes": (lambda: trained().encode(b"low"), "decode bytes first"),
    "tokenize None": (lambda: trained().tokenize(None), "must be a str"),
    "encode_tokens int": (lambda: trained().encode_tokens(5), "must be a str"),
    "decode 2**40": (lambda: trained().decode([2**40]), "not in this vocabulary"),
    "decode negative": (lambda: trained().decode([-1]), "not in this vocabulary"),
    "decode float": (lambda: trained().decode([1.5]), "whole number"),
    "decode text": (lambda: trained().decode("abc"), "list of whole numbers"),
    "decode None": (lambda: trained().decode(None), "list of whole numbers"),
    "token_str None": (lambda: trained().token_str(None), "whole number"),
    "token_bytes bool": (lambda: trained().token_bytes(True), "whole number"),
    "truncated text": (lambda: trained().truncated("2"), "whole number"),
    "pair table for characters": (lambda: BPETokenizer(base=["a"], pair_table=([], [])), "byte-level"),
    "normalization unknown": (lambda: BPETokenizer(variant="byte", normalization="nfc"), "normalization"),
    "trainer corpus bytes": (lambda: BPETrainer(b"abc"), "decode bytes first"),
    "trainer variant 3": (lambda: BPETrainer("abc", variant=3), "Unknown BPE variant"),
    "trainer pattern list": (lambda: BPETrainer("abc", variant="byte", pattern=["x"]), "must be text"),
    "trainer end_of_word int": (lambda: BPETrainer("a b", variant="word", end_of_word=7), "end-of-word"),
    "trainer specials one string": (lambda: BPETrainer("abc", variant="byte", special_tokens="<|e|>"),
                                    "list of non-empty strings"),
    "trainer specials of ints": (lambda: BPETrainer("abc", variant="byte", special_tokens=[1]),
                                 "list of non-empty strings"),
    "trainer top_k text": (lambda: BPETrainer("abc", top_k="5"), "whole number"),
}


@pytest.mark.parametrize("name", list(HOSTILE_ARGUMENTS))
def test_bad_argument_is_a_clear_value_error(name):
    call, message = HOSTILE_ARGUMENTS[name]
    start = time.monotonic()
    with pytest.raises(ValueError, match=message):
        call()
    assert time.monotonic() - start < FAST_S


EVIL_TEXT = "a" * 5000 + "b"


@pytest.mark.slow
@pytest.mark.parametrize("where", ["trainer", "encode", "encode_tokens"])
def test_pathological_pattern_is_stopped_after_its_timeout(where):
    pattern = r"(a+)+$"
    start = time.monotonic()
    with pytest.raises(PatternTimeoutError, match=r"stopped after 0.5 s.*backtracks too much"):
        if where == "trainer":
            BPETrainer(EVIL_TEXT, variant="byte", pattern=pattern, regex_timeout=0.5)
        else:
            tok = BPETokenizer.byte_level(pattern=pattern)
            old = pretokenize.REGEX_TIMEOUT_S
            pretokenize.set_regex_timeout(0.5)
            try:
                getattr(tok, where)(EVIL_TEXT)
            finally:
                pretokenize.set_regex_timeout(old)
    assert time.monotonic() - start < 0.5 + FAST_S


def test_built_in_patterns_are_not_timed():
    """GPT-2's pattern on a text with no spaces finishes well within any timeout."""
    tok = BPETokenizer.from_text("x" * 200_000, 3, variant="byte", pattern="gpt2", regex_timeout=0.001)
    assert len(tok.merges) == 3


@pytest.mark.parametrize("variant", ["char", "word", "byte"])
def test_corpus_beyond_the_memory_limit_is_refused_before_training(variant):
    text = "low lower newest widest " * 40_000  # ~1 MB
    need = training_memory_estimate(text, variant)
    start = time.monotonic()
    said = rf"Training {variant} BPE on 1 MiB needs about \d+ MiB; this server allows 64 MiB: use a shorter"
    with pytest.raises(CorpusTooLargeError, match=said):
        BPETrainer(text, variant=variant, max_memory=64 * 2**20)
    assert time.monotonic() - start < FAST_S
    assert BPETrainer(text, variant=variant, max_memory=need).initial_length > 0


MEASURE_SCRIPT = textwrap.dedent("""
    import sys
    from core import BPETokenizer, BPETrainer, training_memory_estimate
    from core.bpe import load_gpt2
    from core.bpe.extend import extension_trainer
    path, variant = sys.argv[1:3]
    if variant == "extend":  # GPT-2's tokenizer, extended
        gpt2 = load_gpt2(*sys.argv[3:5])
        make = lambda text: extension_trainer(gpt2, text)
    else:
        make = lambda text: BPETrainer(text, variant=variant, pattern="gpt2" if variant == "byte" else None)
    for _ in make("warm up the kernels abc abc").run(5):
        pass
    def status(field):
        for line in open("/proc/self/status"):
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    text = open(path, encoding="utf-8").read()
    before = status("VmRSS")
    for _ in make(text).run(200):
        pass
    extending = variant == "extend"
    print(status("VmHWM") - before, training_memory_estimate(text, "byte" if extending else variant,
                                                             extending=extending))
""")


def distinct_words(size: int) -> str:
    """Random lowercase words: nearly every chunk occurs once, the byte variant's worst case."""
    rng = random.Random(7)
    words = " ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9)))
                     for _ in range(size // 5))
    return words[:size]


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["english", "one letter", "distinct words"])
@pytest.mark.parametrize("variant", ["char", "word", "byte", "extend"])
def test_memory_estimate_bounds_what_training_takes(tmp_path, request, variant, corpus):
    """A subprocess trains on 2 MB (or extends GPT-2's tokenizer on it); its peak memory growth
    stays under the estimate."""
    words = "the quick brown fox jumps over a lazy dog while seven wizards quietly hex "
    text = {"english": (words * 30_000)[:2_000_000], "one letter": "a" * 2_000_000,
            "distinct words": distinct_words(2_000_000)}[corpus]
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    gpt2 = [str(p) for p in request.getfixturevalue("gpt2_files")] if variant == "extend" else []
    result = subprocess.run([sys.executable, "-c", MEASURE_SCRIPT, str(path), variant, *gpt2],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    growth, estimate = map(int, result.stdout.split())
    grew = f"grew {growth / 2**20:.0f} MB, estimated {estimate / 2**20:.0f} MB"
    assert growth < estimate, f"{variant} on {corpus}: {grew}"
