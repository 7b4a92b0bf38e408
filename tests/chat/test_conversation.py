"""What a user gives as a conversation: a malformed message, an unknown role, a tool schema that is
not an object, a conversation past the size bound, each refused with a sentence saying what to fix."""

from __future__ import annotations

import json

import pytest

from core.chat import Message, parse_messages, parse_tools
from core.chat.conversation import SAMPLE_MESSAGES, SAMPLE_TOOLS, read_json_file


def test_a_list_of_role_and_content_objects_is_a_conversation():
    messages = parse_messages([{"role": "user", "content": "Hi"},
                               {"role": "tool", "content": "{}", "name": "f"}])
    assert messages == (Message("user", "Hi"), Message("tool", "{}", "f"))
    assert parse_messages(SAMPLE_MESSAGES) == SAMPLE_MESSAGES


@pytest.mark.parametrize("data, message", [
    ({"role": "user", "content": "Hi"}, "must be a list of messages"),
    ("[]", "must be a list of messages"),
    ([], "at least one message"),
    (["Hi"], "Message 1 must be an object"),
    ([{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}], "Message 2 has role 'robot'"),
    ([{"role": "user"}], "Message 1's content must be text, not null"),
    ([{"role": "user", "content": ["a"]}], "content must be text, not a list"),
    ([{"role": "user", "content": "a", "extra": 1}], "fields a message does not have: extra"),
    ([{"role": "user", "content": "a", "name": "f"}], "only a tool's message has a name"),
    ([{"role": "user", "content": "\ud800"}], "lone surrogate"),
])
def test_a_malformed_conversation_is_refused_saying_what_is_wrong(data, message):
    with pytest.raises(ValueError, match=message):
        parse_messages(data)


def test_a_conversation_past_the_size_bound_is_refused():
    with pytest.raises(ValueError, match="is 11 bytes; the limit is 10 bytes"):
        parse_messages([{"role": "user", "content": "x" * 11}], max_bytes=10)


def test_tools_come_plain_or_in_openais_function_form():
    plain = SAMPLE_TOOLS[0]
    wrapped = {"type": "function", "function": {"name": plain.name, "description": plain.description,
                                                "parameters": plain.parameters}}
    assert parse_tools([wrapped]) == parse_tools([plain]) == SAMPLE_TOOLS
    assert parse_tools(None) == ()


@pytest.mark.parametrize("data, message", [
    ({"name": "f"}, "Tools must be a list"),
    ([{"name": "f", "parameters": ["x"]}], r"parameters must be a JSON Schema object .* not a list"),
    ([{"name": "f", "parameters": {"type": "string"}}], "parameters must be a JSON Schema object"),
    ([{"name": "two words"}], "name must be an identifier"),
    ([{"name": "f", "description": 3}], "description must be text"),
    (["f"], "Tool 1 must be an object"),
])
def test_a_bad_tool_definition_is_refused_saying_what_is_wrong(data, message):
    with pytest.raises(ValueError, match=message):
        parse_tools(data)


def test_a_file_that_is_not_json_names_itself(tmp_path):
    path = tmp_path / "chat.json"
    path.write_text("[{", encoding="utf-8")
    with pytest.raises(ValueError, match="The messages file .*chat.json is not JSON"):
        read_json_file(path, "messages")
    path.write_text(json.dumps([{"role": "user", "content": "Hi"}]), encoding="utf-8")
    assert parse_messages(read_json_file(path, "messages")) == (Message("user", "Hi"),)
