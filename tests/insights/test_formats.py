"""The same records in six formats (core.insights.formats): each written text reads back as the
records, its cost equals encoding it with tiktoken or quicktok, and a file that is not a JSON
array of flat objects is refused with a message."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET

import pytest
import yaml

from core.bpe import BPETokenizer
from core.bpe.checks import ArgumentError
from core.corpus import CorpusError
from core.insights.formats import (FORMAT_HELP, FORMATS, SAMPLE_RECORDS, format_costs, read_records,
                                   written)
from tests.insights.references import REAL, real_tokenizer, reference_encoding

ODD = [{"first name": "Zoë", "note": "a|b\nc", "n": 1.5, "ok": True, "gone": None},
       {"first name": "Ana", "extra": "<tag> & \"quotes\""}]


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("records", [SAMPLE_RECORDS, ODD], ids=["sample", "odd"])
def test_costs_equal_encoding_the_written_texts(name, records):
    enc = reference_encoding(name)
    costs = format_costs(records, {name: real_tokenizer(name)})[name]
    assert list(costs) == list(FORMATS)
    for fmt in FORMATS:
        text = written(records, fmt)
        assert costs[fmt] == {"tokens": len(enc.encode_ordinary(text)), "characters": len(text)}, fmt


def test_each_format_reads_back_as_the_records():
    for records in (SAMPLE_RECORDS, ODD):
        assert json.loads(written(records, "json")) == records
        assert json.loads(written(records, "json_compact")) == records
        assert yaml.safe_load(written(records, "yaml")) == records
        rows = list(csv.DictReader(io.StringIO(written(records, "csv"))))
        assert [row["extra" if "extra" in row else "name"] for row in rows][-1] == records[-1].get(
            "extra", records[-1].get("name"))
        root = ET.fromstring(written(records, "xml"))
        assert len(root) == len(records)
    assert written(ODD, "csv") == ('first name,note,n,ok,gone,extra\nZoë,"a|b\nc",1.5,true,,\n'
                                   'Ana,,,,,"<tag> & ""quotes"""\n')
    table = written(ODD, "markdown").splitlines()
    assert table[0] == "| first name | note | n | ok | gone | extra |" and "a\\|b<br>c" in table[2]
    root = ET.fromstring(written(ODD, "xml"))
    assert root[0][0].tag == "field" and root[0][0].get("name") == "first name"
    assert root[0].find("note").text == "a|b\nc"
    assert set(FORMAT_HELP) == set(FORMATS)


@pytest.mark.parametrize("raw, says", [
    ("{not json", "not JSON"), ('{"a": 1}', "array of objects"), ("[]", "array of objects"),
    ("[1, 2]", "item 1 is not an object"), ('[{"a": [1]}]', "not flat: 'a'")])
def test_what_is_not_records_is_named(raw, says):
    with pytest.raises(ArgumentError, match=says):
        read_records(raw)


def test_records_over_the_size_limit_are_refused_before_parsing():
    with pytest.raises(CorpusError, match="the limit"):
        read_records("[" + " " * 2_000_000 + "]")
    with pytest.raises(CorpusError, match="the limit"):
        read_records('[{"a": 1}]', max_bytes=4)


def test_an_unknown_format_is_refused():
    with pytest.raises(ArgumentError, match="Unknown format"):
        written(SAMPLE_RECORDS, "toml")
    costs = format_costs(SAMPLE_RECORDS, {"bytes": BPETokenizer.byte_level()})["bytes"]
    assert all(cell["tokens"] == len(written(SAMPLE_RECORDS, f).encode()) for f, cell in costs.items())


def _random_records(rng) -> list[dict]:
    """Flat records as people keep them: a few fields of names, numbers, flags and nulls."""
    fields = rng.sample(["id", "name", "city", "score", "active", "note", "born", "email", "tags"],
                        rng.randrange(1, 7))
    words = ["Ada", "Zoë", "São Paulo", "東京", "x", "a longer free-text note, with commas", "", "42"]

    def value():
        kind = rng.randrange(5)
        return [lambda: rng.choice(words), lambda: rng.randrange(10**rng.randrange(1, 7)),
                lambda: round(rng.random() * 100, 2), lambda: rng.random() < 0.5, lambda: None][kind]()

    return [{f: value() for f in fields} for _ in range(rng.randrange(1, 12))]


def _clauses(sentence: str) -> list[str]:
    return sentence.rstrip(".").split("; ")


@pytest.mark.parametrize("seed", range(20))
def test_the_yaml_sentence_is_true_of_the_figures_it_answers_from(seed):
    import random

    from core.insights.formats import yaml_verdict

    records = _random_records(random.Random(seed))
    tokenizers = {name: real_tokenizer(name) for name in REAL}
    tokens = {name: {fmt: cell["tokens"] for fmt, cell in costs.items()}
              for name, costs in format_costs(records, tokenizers).items()}
    said = yaml_verdict(tokens)
    for fmt, spelled in (("json", "indented JSON"), ("json_compact", "compact JSON")):
        for name in tokens:
            yaml_cost, other = tokens[name]["yaml"], tokens[name][fmt]
            verb = ("YAML costs less than " + spelled if yaml_cost < other else
                    spelled + " costs less than YAML" if yaml_cost > other else
                    "YAML and " + spelled + " cost the same")
            [clause] = [c for c in _clauses(said) if c.lower().startswith(verb.lower())]
            assert name in clause or "every tokenizer here" in clause, (name, fmt, said)
