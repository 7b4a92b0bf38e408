"""Chat: a conversation as each model reads it. The messages editor, each model's rendering token
by token (the template's own tokens dashed), tokens per message split into content and template,
and how fast the history fills each context window when it is sent again with every request."""

import json

import streamlit as st

from core.chat import ROLES, Message, chat_tokenizer, own_chat_tokenizer, parse_messages, parse_tools
from core.chat.conversation import SAMPLE_MESSAGES, SAMPLE_TOOLS
from ui.plumbing import state
from ui.plumbing.cache import TRAINING_ERRORS, server_settings, session_tokenizer
from ui.plumbing.charts import vega_spec
from ui.plumbing.render import draw_html, md_safe, show_error, show_table, tokenizer_scope
from ui.views.chat_view import (MAX_CHARS, cost_caption, cost_rows, headline, history_frame,
                                message_chart, message_frame, model_counts, own_count, rendering_html,
                                request_chart, total_chart)

# the conversation's order; every box's value is kept (``state.keep``: it outlives a visit to
# another page, where Streamlit forgets a widget's own key) under the names below
IDS, NEXT = "chat_ids", "chat_next"
TOOLS, USE_TOOLS, THINKING, REQUESTS = "chat_tools", "chat_use_tools", "chat_thinking", "chat_requests"
CORPUS_CHARS = 1_000_000  # the sidebar's corpus as a message: a megabyte, counted off the page


def role_name(i: int) -> str:
    return f"chat_role_{i}"


def text_name(i: int) -> str:
    return f"chat_text_{i}"


def add(role: str, text: str) -> None:
    i = state.get(NEXT, 0)
    state.put_kept(role_name(i), role)
    state.put_kept(text_name(i), text)
    state.put(IDS, [*state.get(IDS, []), i])
    state.put(NEXT, i + 1)


def opening() -> None:
    """The page opens on a realistic conversation with one tool."""
    if state.get(IDS) is None:
        for m in SAMPLE_MESSAGES:
            add(m.role, m.content)
        state.put_kept(TOOLS, json.dumps([t.as_openai()["function"] for t in SAMPLE_TOOLS], indent=2))
        state.put_kept(USE_TOOLS, True)
        state.put_kept(THINKING, False)
        state.put_kept(REQUESTS, 20)


def move(i: int, by: int) -> None:
    ids = list(state.get(IDS))
    k = ids.index(i)
    if 0 <= k + by < len(ids):
        ids[k], ids[k + by] = ids[k + by], ids[k]
        state.put(IDS, ids)


def remove(i: int) -> None:
    state.put(IDS, [j for j in state.get(IDS) if j != i])
    state.forget_kept(role_name(i), text_name(i))  # a megabyte of corpus, removed, is not kept


def add_next() -> None:
    ids = state.get(IDS)
    last = state.kept(role_name(ids[-1])) if ids else "assistant"
    add("assistant" if last == "user" else "user", "")


def add_corpus() -> None:
    add("user", state.corpus()[1][:CORPUS_CHARS])


def editor() -> tuple[Message, ...]:
    ids = state.get(IDS)
    for n, i in enumerate(ids):  # the role and the buttons on one line, the text below: whole at 800 px
        c = st.columns([3, 2], vertical_alignment="bottom")
        c[0].selectbox(f"Role of message {n + 1}", ROLES, **state.keep(role_name(i)))
        with c[1].container(horizontal=True, gap="small"):
            st.button("↑", key=f"chat_up_{i}", on_click=move, args=(i, -1), help="Move up", disabled=n == 0)
            st.button("↓", key=f"chat_down_{i}", on_click=move, args=(i, 1), help="Move down",
                      disabled=n == len(ids) - 1)
            st.button("✕", key=f"chat_remove_{i}", on_click=remove, args=(i,), help="Remove this message")
        st.text_area(f"Message {n + 1}", height=68, **state.keep(text_name(i)))
    c = st.columns(2)
    c[0].button("Add a message", on_click=add_next, key="chat_add")
    c[1].button("Use my corpus as a message", on_click=add_corpus, key="chat_add_corpus",
                help=f"The sidebar's corpus (up to {CORPUS_CHARS:,} characters) as a user message")
    return tuple(Message(state.kept(role_name(i)), state.kept(text_name(i)) or "") for i in ids)


st.title("💬 Chat templates")
st.caption("A conversation as each model reads it: its chat template's separators and headers, token "
           "by token. GPT-OSS, Llama 3 and Qwen 3 are exact (their published formats); GPT-4 and GPT-4o "
           "are an estimate, as OpenAI never published theirs.")
opening()
messages = editor()
# a key keeps it open while messages are added above it (its place on the page changes)
with st.expander("Tools the model may call (JSON Schema functions)", key="chat_tools_open"):
    st.checkbox("Send these tools with the conversation", **state.keep(USE_TOOLS))
    st.text_area("Tool definitions", height=200, **state.keep(TOOLS))
c = st.columns(2)
c[0].toggle("Qwen 3 thinking on", **state.keep(THINKING),
            help="Off, Qwen 3's template starts the model's answer with an empty `<think></think>`, "
                 "so it answers at once: a few tokens more here. On, it leaves the start to the model, "
                 "which writes its reasoning first: tokens it generates, counted in no table here.")
c[1].slider("Requests, each sending the history again (for the table and the history chart)",
            1, 200, **state.keep(REQUESTS))
thinking, requests = state.kept(THINKING), state.kept(REQUESTS)
if not messages:
    st.info("Add a message to see how each model reads it.")
    st.stop()
try:
    messages = parse_messages(messages, server_settings().max_corpus_bytes)
except ValueError as exc:  # past the corpus size bound
    show_error(exc)
    st.stop()
try:
    tools = parse_tools(json.loads(state.kept(TOOLS) or "[]")) if state.kept(USE_TOOLS) else ()
except (json.JSONDecodeError, ValueError) as exc:
    show_error(exc, "The tools are not used: ")
    tools = ()

if any(m.role == "tool" for m in messages):
    named = f"the first tool's name, `functions.{tools[0].name}`" if tools else "`functions.tool`"
    st.caption("A tool message is a tool's answer. This editor writes no assistant's call before it, so "
               "the counts leave out the call's tokens, and GPT-OSS's own template, which expects the "
               f"call, would refuse the conversation; here GPT-OSS heads the answer with {named}.")
found = model_counts(messages, tools, thinking)
if found is None:  # a job worker counts a long conversation: its progress bar is drawn
    st.stop()
counts = {name: c for name, c in found.items() if not isinstance(c, str)}
size = sum(len(m.content) for m in messages)
try:
    if size > MAX_CHARS:
        raise ValueError(f"it is counted for conversations up to {MAX_CHARS:,} characters.")
    mine = session_tokenizer(progress=False)
    yours = own_count(tokenizer_scope(mine), mine, messages, tools)
except (*TRAINING_ERRORS, ValueError) as exc:
    mine, yours = None, str(exc)
for name, why in found.items():
    if isinstance(why, str):
        st.warning(f"{md_safe(name)}: {md_safe(why)}", icon="⚠️")
if not counts:
    st.stop()

st.subheader("What it costs")
st.markdown(headline(counts))
costs = cost_rows(counts, requests)
show_table(costs, "What the conversation costs, by model", where=st.container(key="figures_chat_costs"))
st.caption(cost_caption(costs, requests))

st.subheader("Tokens per message: content and template")
labels = [f"{k + 1} {m.role}" for k, m in enumerate(messages)]
shown = {**counts, **({"yours": yours} if not isinstance(yours, str) else {})}
st.vega_lite_chart(vega_spec("chat messages", message_frame(shown, labels), message_chart), width="stretch")

st.subheader("The conversation as each model reads it")
st.caption("Message text in the usual boxes; the template's own text dashed and grey; its special "
           "tokens dark blue. Hover a token for its id and bytes.")
for name, count in counts.items():
    exact = "exact" if count.exact else "an estimate"
    st.markdown(f"**{md_safe(count.label)}**: {count.total:,} tokens, {count.template_tokens:,} of them the "
                f"template's ({exact})")
    draw_html(rendering_html(count, chat_tokenizer(name)))
    moved = [f"{k + 1} {m.role}" for k, m in enumerate(count.messages) if m.boundary]
    if moved:
        st.caption(f"The template's neighbours change how these messages' text is cut (against the "
                   f"same text alone): {', '.join(moved)}.")
if isinstance(yours, str):
    st.caption(f"Your tokenizer is not shown: {md_safe(yours)}")
else:
    st.markdown(f"**Your tokenizer** (ChatML, trained on the sidebar's corpus): {yours.total:,} tokens")
    draw_html(rendering_html(yours, own_chat_tokenizer(mine)))

st.subheader("A growing history")
history = history_frame(counts, requests)
st.vega_lite_chart(vega_spec("chat history per request", history, request_chart), width="stretch")
st.vega_lite_chart(vega_spec("chat history in all", history, total_chart), width="stretch")
st.caption("Each request sends the whole history again: the system prompt and tools once, the rest "
           "once for each exchange so far. Above: how much of each model's context window a request "
           "fills (dashed: the whole window); below: the tokens sent in all.")
