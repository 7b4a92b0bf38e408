"""AppTest: the Tokenizer questions page shows core.insights' answers: the vocabulary curve of the
sidebar's corpus on both parts, GPT-4o's unreachable tokens, and the premium per language and
tokenizer with every group of bars labelled."""

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import markdown_tables, open_page, poll_until_done
from core import BPETokenizer
from core.insights import UDHR_DIR, read_parallel, token_count, unreachable_tokens, vocabulary_curve

ROOT = Path(__file__).resolve().parents[2]
SENNRICH = (ROOT / "sample_corpora" / "sennrich.txt").read_text(encoding="utf-8")  # the opening corpus


@pytest.fixture(scope="module")
def at() -> AppTest:
    return open_page("insights", timeout=300)


def chart(at: AppTest, field: str) -> tuple[dict, list[dict]]:
    """The chart whose y encodes ``field``: its spec and its first dataset's rows."""
    import pyarrow as pa

    for element in at.main.get("vega_lite_chart"):
        spec = json.loads(element.proto.spec)
        encoding = (spec.get("layer") or [spec])[0]["encoding"]
        if encoding["y"]["field"] == field:
            return encoding, pa.ipc.open_stream(element.proto.datasets[0].data.data).read_all().to_pylist()
    raise AssertionError(f"no chart of {field}")


@pytest.mark.slow
def test_the_vocabulary_curve_is_core_s_on_both_parts(at):
    encoding, rows = chart(at, "characters per token")
    assert encoding["x"]["field"] == "vocabulary size"
    curve = vocabulary_curve(SENNRICH, 1024, "byte", pattern="gpt4")
    parts = sorted({r["part"] for r in rows})
    assert parts == ["held-out part (last 10%)", "training part (first 90%)"]
    for r in rows:
        row = curve.row(r["vocabulary size"])
        key = "train_chars_per_token" if r["part"].startswith("training") else "held_out_chars_per_token"
        assert r["characters per token"] == pytest.approx(row[key], abs=1e-4)
    metrics = {m.label: m.value for m in at.main.get("metric")}
    last = curve.row(int(curve.vocab_sizes[-1]))
    assert metrics["Chars/token (held out)"] == f"{last['held_out_chars_per_token']:.2f}"
    assert any("the last 10% is held out" in c.value for c in at.caption)
    # the sample runs out of pairs before the 1,024 tokens asked: the chart's end is explained
    assert last["vocab_size"] < 1024
    assert any(f"ran out of pairs at {last['vocab_size']:,} tokens" in i.value for i in at.info)


@pytest.mark.slow
def test_gpt4o_s_unreachable_tokens_are_listed(at):
    tok = BPETokenizer.from_pretrained("o200k_base")
    found = unreachable_tokens(tok)
    metrics = {m.label: m.value for m in at.main.get("metric")}
    assert metrics["Unreachable"] == str(len(found.unreachable))
    assert metrics["Part of a character"] == f"{len(found.partial):,}"
    table = at.dataframe[0].value
    assert list(table["id"]) == list(found.unreachable)
    assert "␣I'" in list(table["token"])  # " I'", its space drawn
    box = at.selectbox(key="insights_never_token_o200k_base")
    assert box.value == found.unreachable[0]  # one click from its merge tree
    said = " ".join(m.value for m in at.main.get("markdown"))
    assert "Never comes out of this tokenizer" in said and "␣I · '" in said


@pytest.mark.slow
def test_every_language_group_is_labelled_with_core_s_premiums(at):
    encoding, rows = chart(at, "language")
    assert encoding["yOffset"]["field"] == "tokenizer" and encoding["x"]["field"] == "premium"
    tokenizers = {r["tokenizer"] for r in rows}
    assert "GPT-4o (o200k_base)" in tokenizers and any(t.startswith("Yours") for t in tokenizers)
    assert set(encoding["y"]["sort"]) == {r["language"] for r in rows}  # one label per group
    texts = read_parallel(UDHR_DIR)
    o200k = BPETokenizer.from_pretrained("o200k_base")
    hindi = next(r for r in rows if r["code"] == "hin" and r["tokenizer"] == "GPT-4o (o200k_base)")
    assert hindi["tokens"] == token_count(o200k, texts["hin"])
    assert hindi["premium"] == pytest.approx(hindi["tokens"] / token_count(o200k, texts["eng"]), abs=1e-3)
    # the table under the chart: every premium with two decimals (not "1", "5.75", "9.505")
    [(header, *lines)] = [t for t in markdown_tables(at) if t[0][0] == "language"]
    assert set(header[1:]) == tokenizers
    assert all(re.fullmatch(r"\d+\.\d\d×", cell) for line in lines for cell in line[1:]), lines
    hindi_row = next(line for line in lines if line[0].startswith("Hindi"))
    assert hindi_row[header.index("GPT-4o (o200k_base)")] == f"{hindi['premium']:.2f}×"
    assert any(t.startswith("Yours (") and t.endswith(" merges)") for t in tokenizers)  # as Compare says


@pytest.mark.slow
def test_yours_shows_its_residues(at):
    at.selectbox(key="insights_never_of").set_value("session").run()
    assert not at.exception
    assert "Residues on your corpus" in [m.label for m in at.main.get("metric")]
    said = " ".join(m.value for m in at.main.get("markdown"))
    assert "Your corpus, encoded, holds it 0 times." in said  # the first residue shown


@pytest.mark.slow
def test_the_sweep_asks_for_three_to_five_sizes(at):
    at.multiselect(key="insights_sweep_sizes").set_value([320, 512]).run()
    assert at.button(key="insights_sweep_launch").disabled


@pytest.mark.slow
def test_a_gpt_trained_here_shows_its_rare_tokens(tmp_path):
    from tests.insights.test_embeddings import checkpointed_run

    owner = "alice-0123456789"
    tok, _ = checkpointed_run(tmp_path / owner / "tiny-run")
    page = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=300)
    page.query_params["u"] = owner
    page.session_state["gpt_runs_dir"] = str(tmp_path)
    page.switch_page("app_pages/insights.py").run()
    assert not page.exception, [e.message for e in page.exception]
    assert page.selectbox(key="insights_embedding_run").value == "tiny-run"
    poll_until_done(page)  # a job worker reads the checkpoint (torch: never the server's)
    encoding, rows = chart(page, "norm")
    assert encoding["x"]["field"] == "seen + 1"
    assert len(rows) == tok.vocab_size
    never = {r["token"] for r in rows if r["kind"] == "never in its training text"}
    assert {"z", "q"} <= never
    assert any("were seen fewer than 10 times" in c.value for c in page.caption)


def test_the_sweep_is_refused_up_front_on_a_corpus_too_short_for_it(at):
    """The default sample (56 characters) cannot hold a GPT's window: the button says no before a
    run the room would see fail is launched, and the page says what to do."""
    assert at.button(key="insights_sweep_launch").disabled
    said = " ".join(i.value for i in at.info)
    assert "too short to train a GPT on" in said and "Tiny Shakespeare" in said


def test_its_choices_outlive_a_visit_to_another_page():
    page = open_page("insights", timeout=300)
    page.selectbox(key="insights_never_of").set_value("cl100k_base").run()
    page.multiselect(key="insights_sweep_sizes").unselect(1024).run()
    page.multiselect(key="insights_languages").set_value(["eng", "jpn"]).run()
    page.switch_page("app_pages/chat.py").run()
    page.switch_page("app_pages/insights.py").run()
    assert page.selectbox(key="insights_never_of").value == "cl100k_base"
    assert page.multiselect(key="insights_sweep_sizes").value == [320, 512]
    assert page.multiselect(key="insights_languages").value == ["eng", "jpn"]
    assert not page.exception
