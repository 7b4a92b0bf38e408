"""AppTest: every page holds at the maximum of every number input and slider it offers: no
exception, a sensible message or a working view (issue 11).  No long training run is launched."""

import io
import json
from pathlib import Path

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import poll_until_done, step_view
from ui.plumbing.charts import MAX_CURVE_POINTS
from ui.plumbing.controls import MAX_MERGES
from core.samples import python_docs_corpus

ROOT = Path(__file__).resolve().parents[2]
TEXT = python_docs_corpus(118_000)  # the 118 KB text of the issue
MAX_VIEW_BYTES = 4 * 2**20  # every step of 5,000 merges, sent once


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.message for e in at.exception]
    return at


def open_page(page: str | None, tmp_path: Path) -> AppTest:
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=300)
    at.session_state["gpt_runs_dir"] = str(tmp_path)
    at.session_state["corpus_name"] = "Python docs, 118 KB"
    at.session_state["corpus_text"] = TEXT
    at.switch_page(page or "app_pages/learn_bpe.py")  # the root opens Start here
    return ok(at.run())


def chart_rows(chart) -> list[int]:
    """Rows of every dataset of a Vega-Lite chart element (Arrow datasets and inline ones)."""
    rows = [pa.ipc.open_stream(io.BytesIO(d.data.data)).read_all().num_rows for d in chart.proto.datasets]
    spec = json.loads(chart.proto.spec)
    return rows + [len(v) for v in spec.get("datasets", {}).values()]


def to_max(at: AppTest, widget) -> AppTest:
    return ok(widget.set_value(widget.max).run())


def learn_view(at: AppTest) -> dict:
    """The step view's payload, its size checked: the browser gets every step of 5,000 merges."""
    from ui.views.step_view import NAME

    poll_until_done(at)  # a payload of 1,000 merges or more is built by the room's job engine
    [view] = [e for e in at.get("bidi_component") if e.proto.component_name == NAME]
    assert len(view.proto.bytes) < MAX_VIEW_BYTES
    return step_view(at)[2]


@pytest.mark.slow
def test_learn_bpe_at_5000_merges_and_every_control_at_its_maximum(tmp_path):
    at = open_page(None, tmp_path)
    to_max(at, at.number_input(key="w_num_merges"))
    data = learn_view(at)
    n = data["n"]
    assert n == MAX_MERGES or any("ran out of pairs" in i.value for i in at.info)
    assert len(data["merges"]) == len(data["pairs"]) == n
    assert all(len(c["datasets"]["curve"]) <= MAX_CURVE_POINTS for c in data["charts"]["curves"].values())
    # the window of text at its last start
    to_max(at, at.number_input(key="learn_window_start"))
    window = at.number_input(key="learn_window_start")
    assert window.value == window.max
    assert learn_view(at)["n"] == n


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["word", "byte"])
def test_learn_bpe_other_variants_at_5000_merges(tmp_path, variant):
    at = open_page(None, tmp_path)
    ok(at.radio(key="w_variant").set_value(variant).run())
    to_max(at, at.number_input(key="w_num_merges"))
    assert learn_view(at)["n"] > 0


@pytest.mark.slow
def test_char_vs_bpe_at_5000_merges(tmp_path):
    at = open_page("app_pages/char_vs_bpe.py", tmp_path)
    for widget in list(at.number_input) + list(at.slider):
        to_max(at, widget)
    assert at.number_input(key="w_num_merges").value == MAX_MERGES
    assert at.get("vega_lite_chart") or at.dataframe or at.markdown  # the comparison is drawn


# what a browser can send the model boxes, which take any number (``app_pages/train_gpt.size_inputs``)
PAST_ANY_BOUND = {"Steps": 10**15, "dropout": 5.0, "lr": 1e9}


def test_train_a_gpt_past_every_bound_refuses_with_a_message_and_launches_nothing(tmp_path):
    at = open_page("app_pages/train_gpt.py", tmp_path)
    ok(at.selectbox(key="gpt_preset").set_value("custom").run())
    labels = []
    for key in [ni.key for ni in at.number_input]:  # each size, steps, dropout and lr past any bound
        widget = at.number_input(key=key)
        labels.append(widget.label)
        ok(widget.set_value(PAST_ANY_BOUND.get(widget.label, 10**15)).run())
    assert {"Steps", "n_layer", "n_embd", "block_size", "dropout", "lr"} <= set(labels), labels
    launch = next(b for b in at.button if b.key == "gpt_launch")
    messages = [e.value for e in [*at.error, *at.warning, *at.info]]
    assert launch.disabled and messages, messages  # the page says why it cannot launch
    assert all("Traceback" not in m and "call" not in m.lower() for m in messages), messages
