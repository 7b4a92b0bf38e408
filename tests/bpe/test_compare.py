"""core.bpe.compare: cuts that differ between tokenizers, and tokens per character per script."""

from pathlib import Path

import pytest

from core import BPETokenizer
from core.bpe.compare import EMOJI, char_costs, char_scripts, differing, script_costs, script_of, spans
from core.bpe.encoding import Token

ROOT = Path(__file__).resolve().parents[2]
MULTILINGUAL = (ROOT / "sample_corpora" / "multilingual_and_emoji.txt").read_text(encoding="utf-8")
TEXTS = ["", "a", "안녕하세요, 세계!", "👨‍👩‍👧‍👦 hi", MULTILINGUAL]


def test_differing_marks_tokens_the_reference_lacks():
    a = [Token(0, 0, 2, 0), Token(1, 2, 4, 0)]
    b = [Token(0, 0, 1, 0), Token(1, 1, 4, 0)]
    assert differing(b, spans(a)) == [0, 1]
    assert differing(a, spans(a)) == []
    assert differing([Token(0, 0, 2, 0), Token(1, 2, 3, 0), Token(2, 3, 4, 0)], spans(a)) == [1, 2]


def test_char_costs_share_each_token():
    tokens = [Token(0, 0, 2, 0), Token(1, 2, 3, 0), Token(2, 2, 3, 0)]  # two byte tokens in one char
    assert char_costs(tokens, 3) == [0.5, 0.5, 2.0]


@pytest.mark.parametrize("ch,script", [
    ("a", "Latin"),
    ("é", "Latin"),
    ("д", "Cyrillic"),
    ("λ", "Greek"),
    ("한", "Hangul (Korean)"),
    ("世", "Han (Chinese, Japanese)"),
    ("こ", "Kana (Japanese)"),
    ("カ", "Kana (Japanese)"),
    ("م", "Arabic"),
    ("👋", EMOJI),
    ("🇫", EMOJI),
    (" ", None),
    ("!", None),
    ("7", None),
    ("\u200d", None),
])
def test_script_of(ch, script):
    assert script_of(ch) == script


def test_spaces_and_punctuation_go_with_their_line():
    assert char_scripts("안녕, 세계!\n, hi") == ["Hangul (Korean)"] * 8 + ["Latin"] * 4  # \n ends its line
    assert char_scripts("123 !") == ["Other"] * 5


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("text", TEXTS)
def test_script_costs_add_up_to_the_token_count(name, text):
    tok = BPETokenizer.from_pretrained(name)
    tokens = tok.encode_tokens(text)
    costs = script_costs(text, tokens)
    assert sum(c.chars for c in costs) == len(text)
    assert sum(c.tokens for c in costs) == pytest.approx(len(tokens))


def test_korean_costs_more_than_latin_on_the_sample():
    tok = BPETokenizer.from_pretrained("cl100k_base")
    per_script = script_costs(MULTILINGUAL, tok.encode_tokens(MULTILINGUAL))
    costs = {c.script: c.tokens_per_char for c in per_script}
    assert list(costs)[:4] == ["Latin", "Cyrillic", "Greek", "Hangul (Korean)"]
    assert costs["Hangul (Korean)"] > 2 * costs["Latin"]


def test_scripts_must_match_the_text():
    with pytest.raises(ValueError):
        script_costs("ab", [], ["Latin"])
