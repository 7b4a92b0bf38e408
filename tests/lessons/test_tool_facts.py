"""core.lessons.tool_facts: what a station's words quote about its tool is what the tool shows,
computed with the tool's own rule (Learn BPE's step view: core.bpe.explain's)."""

import pytest

from core.bpe.explain import occurrences, segment, text_window
from core.lessons import StationData, load_path
from core.lessons.tool_facts import TOOL_FACTS, fact_names, tool_facts
from core.lessons.words import station_facts, station_words

STEPS = ("first_pair_step", "first_token_step", "highlighted_next")
LOW = StationData(corpus="sample:low lower newest widest", variant="word", merges=10)
GPT4 = StationData(corpus="sample:python source", start="cl100k_base", merges=5)


@pytest.mark.parametrize("data", [LOW, GPT4], ids=["from letters", "GPT-4 extended"])
def test_the_step_facts_are_what_the_step_view_draws(data):
    facts = tool_facts(data, STEPS)
    tok = data.tokenizer()
    window = tok.normalized(text_window(data.text()))
    first = tok.trace[0]
    pair_step, token_step = int(facts["first_pair_step"]), int(facts["first_token_step"])
    tokens = segment(tok, window, pair_step)
    highlighted = occurrences(tok, window, pair_step)  # the spans drawn in yellow at that step
    assert highlighted and all((a.id, b.id) == first.pair for a, b in zip(tokens, tokens[1:])
                               if (a.start, b.end) in highlighted)
    assert first.new_id in {t.id for t in segment(tok, window, token_step)}
    assert first.new_id not in {t.id for t in segment(tok, window, token_step - 1)}
    assert facts["highlighted_next"] == str(token_step + 1)  # "Merge 2: ..." heads that step


def test_merges_asked_and_learned_differ_when_the_pairs_run_out():
    asked = StationData(corpus="sample:python source", start="cl100k_base", merges=10)
    facts = tool_facts(asked, ["merges_asked", "merges_learned"])
    assert facts == {"merges_asked": "10", "merges_learned": "9"}


def test_step_facts_are_learn_bpe_s_only():
    assert set(STEPS) <= set(fact_names("learn_bpe", ["corpus"]))
    assert not set(STEPS) & set(fact_names("char_vs_bpe", ["corpus", "merges"]))
    assert "merges_learned" not in fact_names("learn_bpe", ["corpus"])  # no merges asked, none to learn


def test_no_tool_fact_shadows_a_computation_s():
    from core.lessons import COMPUTATIONS

    assert not set(TOOL_FACTS) & {f for c in COMPUTATIONS.values() for f in c.fields}


def test_every_station_s_words_are_filled():
    for station in load_path().stations:
        if station.tool.params.get("corpus") == "shakespeare":
            continue  # the slow check covers them (Tiny Shakespeare trained)
        words = station_words(station, station_facts(station))
        assert "{" not in words.text + words.ask + words.do + words.label, station.id
