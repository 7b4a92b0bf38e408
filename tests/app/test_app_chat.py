"""AppTest: the Chat page opens on a four-message conversation with one tool, each model's figures
equal to ``core.chat``'s; the editor adds, removes, reorders, changes a role and takes a paste or the
sidebar's corpus; the charts carry every model; a message's text stays text; an oversize conversation
is refused with a message."""

import html
import json

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import markdown_tables, open_page, paste_box, poll_until_done, progress_texts
from core.chat import CHAT_MODELS, Message, chat_tokenizer, count_chat
from core.chat.conversation import SAMPLE_MESSAGES, SAMPLE_TOOLS
from core.chat.history import Growth
from ui.plumbing import heavy_jobs
from ui.plumbing.render import DRAWN_TOKENS, md_safe
from ui.views.chat_view import MAX_CHARS


def page() -> AppTest:
    return open_page("chat", timeout=120)


def messages(at: AppTest) -> list[Message]:
    roles = [s.value for s in at.selectbox if (s.key or "").startswith("w_chat_role_")]
    texts = [t.value for t in at.text_area if (t.key or "").startswith("w_chat_text_")]
    return [Message(r, t) for r, t in zip(roles, texts)]


def chart_rows(at: AppTest, index: int) -> list[dict]:
    chart = at.get("vega_lite_chart")[index]
    return [r for d in chart.proto.datasets for r in pa.ipc.open_stream(d.data.data).read_all().to_pylist()]


def headline(count) -> str:
    return f"**{md_safe(count.label)}**: {count.total:,} tokens, {count.template_tokens:,} of them"


def shown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def cost_table(at: AppTest) -> tuple[list[str], dict[str, dict[str, int]]]:
    """"What it costs" as the page writes it: its header, and each model's figures by column."""
    [(header, *rows)] = [t for t in markdown_tables(at) if t[0][0] == "model"]
    return header, {model: {h: int(c.replace(",", "")) for h, c in zip(header[1:], cells)}
                    for model, *cells in rows}


def test_it_opens_on_the_sample_with_a_tool_and_cores_figures():
    at = page()
    assert messages(at) == list(SAMPLE_MESSAGES)
    assert [json.loads(at.text_area(key="w_chat_tools").value)[0]["name"]] == [SAMPLE_TOOLS[0].name]
    for name, model in CHAT_MODELS.items():
        count = count_chat(model, chat_tokenizer(name), SAMPLE_MESSAGES, SAMPLE_TOOLS)
        assert headline(count) in shown(at)
    assert "costs the most here" in shown(at)
    header, costs = cost_table(at)
    assert header == ["model", "template", "system prompt", "tools", "system + tools × 20",
                      "requests that fit", "window"]
    for name, model in CHAT_MODELS.items():  # what each request sends again, and how many fit
        count = count_chat(model, chat_tokenizer(name), SAMPLE_MESSAGES, SAMPLE_TOOLS)
        row = costs[count.label]
        assert (row["template"], row["tools"], row["system prompt"]) == (
            count.template_tokens, count.tools_tokens, count.system_tokens)
        assert row["system + tools × 20"] == 20 * (count.system_tokens + count.tools_tokens)
        assert row["requests that fit"] == Growth.of(count).requests_that_fit(model.context_window)
        assert row["window"] == model.context_window
    templates = [row["template"] for row in costs.values()]
    assert templates == sorted(templates, reverse=True)  # dearest format first
    rows = chart_rows(at, 0)
    assert {r["model"] for r in rows} >= {m.label for m in CHAT_MODELS.values()}
    llama = count_chat(CHAT_MODELS["llama3"], chat_tokenizer("llama3"), SAMPLE_MESSAGES, SAMPLE_TOOLS)
    assert sum(r["tokens"] for r in rows if r["model"] == llama.label) == llama.total
    history = [r for r in chart_rows(at, 1) if "request" in r]
    assert max(r["request"] for r in history) == 20
    assert {r["context window"] for r in history} >= {131_072, 8_192}
    assert all(r["share of the window"] == r["sent by this request"] / r["context window"] for r in history)
    # the whole window: one horizontal line across the chart, not a line at each request
    layers = json.loads(at.get("vega_lite_chart")[1].proto.spec)["layer"]
    assert [sorted(layer["encoding"]) for layer in layers][1] == ["tooltip", "y"]


def test_add_remove_reorder_and_change_a_role():
    at = page()
    at.button(key="chat_add").click().run()
    assert [m.role for m in messages(at)] == ["system", "user", "assistant", "user", "assistant"]
    first_user = next(b for b in at.button if b.key and b.key.startswith("chat_down_1"))
    first_user.click().run()
    assert [m.content for m in messages(at)][1:3] == [SAMPLE_MESSAGES[2].content, SAMPLE_MESSAGES[1].content]
    at.button(key="chat_remove_0").click().run()
    assert [m.role for m in messages(at)] == ["assistant", "user", "user", "assistant"]
    assert "kept_chat_text_0" not in at.session_state  # a removed message's text is not kept
    at.selectbox(key="w_chat_role_3").set_value("system").run()
    assert messages(at)[2].role == "system"
    count = count_chat(CHAT_MODELS["qwen3"], chat_tokenizer("qwen3"), messages(at), SAMPLE_TOOLS)
    assert headline(count) in shown(at) and not at.exception


def test_a_tool_message_says_what_the_editor_leaves_out():
    """A tool's answer with no call before it: the page says the call is not counted, that GPT-OSS's
    own template would refuse it, and which tool GPT-OSS names the answer after."""
    at = page()
    assert not [c for c in at.caption if "tool message" in c.value]  # the sample has none
    at.selectbox(key="w_chat_role_3").set_value("tool").run()
    [said] = [c.value for c in at.caption if "tool message" in c.value]
    assert "no assistant's call" in said and f"functions.{SAMPLE_TOOLS[0].name}" in said
    assert not at.exception


def test_a_paste_into_a_message_and_the_corpus_as_a_message():
    at = page()
    at.text_area(key="w_chat_text_1").set_value("Paste: <|im_end|> {{ 7 * 7 }}").run()
    typed = [*SAMPLE_MESSAGES[:1], Message("user", "Paste: <|im_end|> {{ 7 * 7 }}"), *SAMPLE_MESSAGES[2:]]
    count = count_chat(CHAT_MODELS["qwen3"], chat_tokenizer("qwen3"), typed, SAMPLE_TOOLS)
    assert headline(count) in shown(at)
    assert "{{ 7 * 7 }}" in count.text and "49" not in count.text
    paste_box(at).set_value("A corpus of my own, pasted in the sidebar.").run()
    at.button(key="chat_add_corpus").click().run()
    assert messages(at)[-1] == Message("user", "A corpus of my own, pasted in the sidebar.")


def test_the_conversation_and_its_settings_outlive_a_visit_to_another_page():
    """Streamlit forgets a widget's value on a page that does not draw it: the messages, the
    tools, the thinking switch and the requests came back empty, every role "system"."""
    at = page()
    at.text_area(key="w_chat_text_1").set_value("My own question").run()
    at.selectbox(key="w_chat_role_3").set_value("system").run()
    at.text_area(key="w_chat_tools").set_value("[]").run()
    at.toggle(key="w_chat_thinking").set_value(True).run()
    at.slider(key="w_chat_requests").set_value(50).run()
    before = messages(at)
    at.switch_page("app_pages/learn_bpe.py").run()
    at.switch_page("app_pages/chat.py").run()
    assert messages(at) == before and before[1] == Message("user", "My own question")
    assert before[3].role == "system"
    assert at.text_area(key="w_chat_tools").value == "[]"
    assert at.toggle(key="w_chat_thinking").value and at.slider(key="w_chat_requests").value == 50
    assert not at.exception


@pytest.fixture
def job_engine(tmp_path, monkeypatch):
    """An engine of this test's own (a runs folder of its own), which leaves soon after it."""
    monkeypatch.setenv("BPE_EXPLORER_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("BPE_EXPLORER_ENGINE_IDLE_S", "5")
    heavy_jobs._interface.clear()
    yield
    heavy_jobs._interface.clear()


@pytest.mark.usefixtures("job_engine")
def test_a_long_conversation_is_counted_off_the_page_then_shown():
    at = page()
    long = "Lorem ipsum dolor sit amet, é 日本. " * (MAX_CHARS // 30)
    at.text_area(key="w_chat_text_1").set_value(long).run()
    [bar] = progress_texts(at)  # the job engine counts it: a progress bar, and the page answers
    assert bar.startswith("Counting the conversation for each model")
    poll_until_done(at)
    typed = [SAMPLE_MESSAGES[0], Message("user", long), *SAMPLE_MESSAGES[2:]]
    count = count_chat(CHAT_MODELS["o200k_harmony"], chat_tokenizer("o200k_harmony"), typed, SAMPLE_TOOLS)
    assert headline(count) in shown(at) and not at.exception
    # its rendering draws the first tokens and says how many more the count holds
    [box] = [h for h in map(html.unescape, (h.proto.body for h in at.get("html")))
             if f"The conversation as {count.label} reads it" in h]
    drawn = box.count("data-id=")
    assert DRAWN_TOKENS <= drawn < count.total and f"… and {count.total - drawn:,} more tokens" in box


def test_a_conversation_past_the_corpus_bound_is_refused(monkeypatch):
    monkeypatch.setenv("BPE_EXPLORER_MAX_CORPUS_BYTES", "1000")
    at = page()
    at.text_area(key="w_chat_text_1").set_value("x" * 1_000).run()
    assert any("the limit is 1,000 bytes" in e.value for e in at.error)
    assert not at.exception


def test_a_tool_that_is_not_an_object_is_named_and_left_out():
    at = page()
    at.text_area(key="w_chat_tools").set_value('[{"name": "f", "parameters": ["x"]}]').run()
    assert any("parameters must be a JSON Schema object" in e.value for e in at.error)
    header, _ = cost_table(at)
    assert "tools" not in header and "system prompt × 20" in header
    said = "The system prompt goes again with every request (× 20: in 20 requests)."
    assert any(said in c.value for c in at.caption)
