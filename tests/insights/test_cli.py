"""``python -m core.insights``: each subcommand's JSON has the issue's shape, and its table the
same numbers."""

from __future__ import annotations

import json

import pytest

from core.bpe import BPETokenizer
from core.insights import split_held_out
from core.insights.__main__ import main
from tests.conftest import shared_path


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


# -- the questions: spelling, numbers, whitespace, specials, boundary, formats ----------------------
def test_spelling_gives_every_form_per_tokenizer(capsys):
    result = _json(capsys, "spelling", "strawberry", "--tokenizers", "cl100k_base,o200k_base")
    assert result["word"] == "strawberry" and list(result["tokenizers"]) == ["cl100k_base", "o200k_base"]
    gpt4 = result["tokenizers"]["cl100k_base"]
    assert list(gpt4["forms"]) == ["word", " word", "Word", " Word", "WORD", "reversed"]
    assert gpt4["forms"]["word"]["tokens"] == ["str", "aw", "berry"]
    assert all(isinstance(i, int) for i in gpt4["forms"]["word"]["ids"])
    assert gpt4["letters_in_longer_tokens"] == 10
    assert main(["spelling", "strawberry", "--tokenizers", "cl100k_base"]) == 0
    assert "str · aw · berry" in capsys.readouterr().out


def test_the_five_real_tokenizers_by_default(capsys):
    shared_path("gpt2", "vocab.bpe"), shared_path("gpt2", "encoder.json")
    result = _json(capsys, "boundary", "Hello ", "world")
    assert list(result["tokenizers"]) == ["gpt2", "cl100k_base", "o200k_base", "llama3", "qwen3"]
    expected = {"prompt": ["Hello", " "], "joined": ["Hello", " world"], "kept": 1}
    assert result["tokenizers"]["qwen3"] == expected


def test_numbers_counts_tokens_per_integer(capsys):
    result = _json(capsys, "numbers", "--upto", "999", "--tokenizers", "cl100k_base,qwen3")
    assert result == {"upto": 999, "tokenizers": {
        "cl100k_base": {"tokens_per_number": {"1": 1000}, "groupings": 3},
        "qwen3": {"tokens_per_number": {"1": 10, "2": 90, "3": 900}, "groupings": 3}}}


def test_whitespace_and_specials_of_a_saved_tokenizer(capsys, tmp_path):
    path = tmp_path / "bytes.json"
    BPETokenizer.byte_level(special_tokens=["<|endoftext|>"]).save(path)
    code = tmp_path / "code.py"
    code.write_text("def f():\n    return 1\n", encoding="utf-8")
    result = _json(capsys, "whitespace", str(code), "--tokenizers", str(path))
    assert result == {"tokenizers": {str(path): {"tokens": 22, "whitespace_tokens": 8}}}
    result = _json(capsys, "specials", "é<|endoftext|>", "--tokenizers", str(path))
    row = result["tokenizers"][str(path)]
    assert row["as_text"]["tokens"][:2] == ["\\xc3", "\\xa9"] and len(row["as_text"]["ids"]) == 15
    assert row["as_special"] == [195, 169, 256]


def test_formats_counts_each_format_and_its_help_says_how(capsys, tmp_path):
    path = tmp_path / "records.json"
    path.write_text('[{"name": "Ada", "born": 1815}, {"name": "Alan", "born": 1912}]', encoding="utf-8")
    result = _json(capsys, "formats", str(path), "--tokenizers", "cl100k_base")
    assert result["records"] == 2
    cells = result["tokenizers"]["cl100k_base"]
    assert list(cells) == ["json", "json_compact", "yaml", "csv", "markdown", "xml"]
    assert cells["csv"]["characters"] == len("name,born\nAda,1815\nAlan,1912\n")
    with pytest.raises(SystemExit):
        main(["formats", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "yaml.safe_dump" in said and "csv.DictWriter" in said and "ElementTree" in said


def test_a_file_that_is_not_records_is_named(capsys, tmp_path):
    path = tmp_path / "one.json"
    path.write_text('{"name": "Ada"}', encoding="utf-8")
    with pytest.raises(SystemExit) as exit_:
        main(["formats", str(path), "--tokenizers", "cl100k_base"])
    assert exit_.value.code == 2 and "not a JSON array of objects" in capsys.readouterr().err
