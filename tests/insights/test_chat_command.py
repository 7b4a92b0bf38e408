"""``python -m core.insights chat``: the issue's JSON shape, the table's same numbers, the sources
in ``--help``, and a clear message for each bad file."""

from __future__ import annotations

import json

import pytest

from core.bpe import BPETokenizer
from core.chat.conversation import SAMPLE_MESSAGES, SAMPLE_TOOLS
from core.insights.__main__ import main


@pytest.fixture
def files(tmp_path):
    chat, tools = tmp_path / "chat.json", tmp_path / "tools.json"
    messages = [{"role": m.role, "content": m.content} for m in SAMPLE_MESSAGES]
    chat.write_text(json.dumps(messages), encoding="utf-8")
    tools.write_text(json.dumps([t.as_openai() for t in SAMPLE_TOOLS]), encoding="utf-8")
    return chat, tools


def test_the_json_has_the_issues_shape_for_every_model(capsys, files):
    assert main(["chat", str(files[0]), "--tools", str(files[1]), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert list(result) == ["tokenizers"]
    assert list(result["tokenizers"]) == ["o200k_harmony", "llama3", "qwen3", "cl100k_base", "o200k_base"]
    for name, row in result["tokenizers"].items():
        assert set(row) == {"ids", "tokens", "template_tokens", "messages", "tools_tokens", "exact"}
        assert row["tokens"] == len(row["ids"]) and row["tools_tokens"] > 0
        assert [set(m) for m in row["messages"]] == [{"role", "content_tokens", "template_tokens"}] * 4
        assert row["template_tokens"] + sum(m["content_tokens"] for m in row["messages"]) == row["tokens"]
        assert row["exact"] == (name not in ("cl100k_base", "o200k_base"))


def test_thinking_and_a_saved_tokenizer(capsys, files, tmp_path):
    mine = tmp_path / "mine.json"
    BPETokenizer.from_text("a travel assistant answers the user. " * 20, 20, "byte").save(mine)
    assert main(["chat", str(files[0]), "--tokenizers", f"qwen3,{mine}", "--json"]) == 0
    off = json.loads(capsys.readouterr().out)["tokenizers"]
    assert main(["chat", str(files[0]), "--tokenizers", "qwen3", "--thinking", "--json"]) == 0
    on = json.loads(capsys.readouterr().out)["tokenizers"]
    qwen = BPETokenizer.from_pretrained("qwen3")
    empty_think = qwen.encode("<think>\n\n</think>\n\n", allowed_special="all")
    assert off["qwen3"]["tokens"] == on["qwen3"]["tokens"] + len(empty_think)
    assert off[str(mine)]["exact"] and off[str(mine)]["tools_tokens"] == 0


def test_the_table_shows_the_same_numbers(capsys, files):
    assert main(["chat", str(files[0]), "--tokenizers", "llama3,cl100k_base", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)["tokenizers"]
    assert main(["chat", str(files[0]), "--tokenizers", "llama3,cl100k_base"]) == 0
    table = capsys.readouterr().out
    assert f"{result['llama3']['tokens']:,}" in table and "(estimate)" in table


def test_help_names_each_templates_source(capsys):
    with pytest.raises(SystemExit):
        main(["chat", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "huggingface.co/meta-llama/Llama-3.3-70B-Instruct" in shown
    assert "huggingface.co/Qwen/Qwen3-0.6B" in shown and "openai-harmony" in shown


@pytest.mark.parametrize("content, message", [
    ("[{", "is not JSON"),
    ('{"role": "user"}', "must be a list of messages"),
    ('[{"role": "robot", "content": "hi"}]', "Message 1 has role 'robot'"),
])
def test_a_bad_messages_file_gets_a_clear_message(capsys, tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        main(["chat", str(path)])
    assert exited.value.code == 2 and message in capsys.readouterr().err


def test_a_tool_schema_that_is_not_an_object_and_an_unknown_model(capsys, files, tmp_path):
    tools = tmp_path / "tools.json"
    tools.write_text('[{"name": "f", "parameters": {"type": "string"}}]', encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["chat", str(files[0]), "--tools", str(tools)])
    assert "parameters must be a JSON Schema object" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["chat", str(files[0]), "--tokenizers", "gpt2"])
    assert "'gpt2' is neither a chat model" in capsys.readouterr().err
