"""``python -m core.insights``: each subcommand's JSON has the issue's shape, and its table the
same numbers."""

from __future__ import annotations

import json

import pytest

from core.bpe import BPETokenizer
from core.insights import split_held_out
from core.insights.__main__ import main


def _json(capsys, *argv) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    text = "the cat sat on the mat with the hat; " * 40 + "a rat ran at the cat. " * 10
    path.write_text(text, encoding="utf-8")
    return path


def test_vocab_gives_the_sizes_in_the_order_asked(capsys, corpus):
    result = _json(capsys, "vocab", str(corpus), "--variant", "byte", "--sizes", "300,260,280")
    assert result["variant"] == "byte"
    assert [row["vocab_size"] for row in result["sizes"]] == [300, 260, 280]
    assert set(result["sizes"][0]) == {"vocab_size", "train_chars_per_token", "held_out_chars_per_token"}
    train, held = split_held_out(corpus.read_text(encoding="utf-8"))
    tok = BPETokenizer.from_text(train, 300 - 256, "byte")
    assert result["sizes"][0]["held_out_chars_per_token"] == len(held) / len(tok.encode(held))
    assert main(["vocab", str(corpus), "--variant", "byte", "--sizes", "300,260"]) == 0
    table = capsys.readouterr().out
    assert "held out" in table and f"{result['sizes'][0]['train_chars_per_token']:.3f}" in table


def test_vocab_help_says_which_part_is_held_out(capsys):
    with pytest.raises(SystemExit):
        main(["vocab", "--help"])
    assert "the last 10% is held out" in " ".join(capsys.readouterr().out.split())


def test_unreachable_of_a_saved_tokenizer(capsys, tmp_path):
    path = tmp_path / "tok.json"
    BPETokenizer(variant="byte", merges=[(97, 98, 256), (98, 99, 257), (97, 257, 258)]).save(path)
    result = _json(capsys, "unreachable", str(path))
    assert result == {"tokenizer": str(path), "vocab_size": 259, "unreachable": [258], "partial": 128}


def test_languages_gives_tokens_and_premiums_per_tokenizer(capsys, tmp_path):
    folder = tmp_path / "parallel"
    folder.mkdir()
    (folder / "eng.txt").write_text("Everyone has the right to life.", encoding="utf-8")
    (folder / "kor.txt").write_text("모든 사람은 생명권을 가진다.", encoding="utf-8")
    path = tmp_path / "bytes.json"
    BPETokenizer.byte_level().save(path)
    result = _json(capsys, "languages", str(folder), "--tokenizers", str(path), "--reference", "eng")
    kor = len("모든 사람은 생명권을 가진다.".encode("utf-8"))
    eng = len("Everyone has the right to life.")
    assert result == {"reference": "eng", "languages": {
        "eng": {str(path): {"tokens": eng, "premium": 1.0}},
        "kor": {str(path): {"tokens": kor, "premium": kor / eng}}}}


def test_a_bad_argument_is_named(capsys, corpus):
    with pytest.raises(SystemExit) as exit_:
        main(["vocab", str(corpus), "--variant", "byte", "--sizes", "100"])
    assert exit_.value.code == 2
    assert "at least the 256 base symbols" in capsys.readouterr().err
