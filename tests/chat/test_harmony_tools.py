"""A tool's JSON Schema written as harmony writes it for GPT-OSS, rule for rule: every kind of
schema a tool definition uses, against ``openai-harmony``'s own text."""

from __future__ import annotations

import pytest

from core.chat import parse_tools
from core.chat.harmony_tools import tools_section

SCHEMAS = {
    "no properties": {"type": "object", "properties": {}},
    "required and optional": {"type": "object", "required": ["a"],
                              "properties": {"a": {"type": "string"}, "b": {"type": "number"}}},
    "enums and defaults": {"type": "object", "properties": {
        "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
        "name": {"type": "string", "default": "Ana"}, "n": {"type": "integer", "default": 3},
        "flag": {"type": "boolean", "default": False}, "none": {"type": "string", "default": None}}},
    "arrays": {"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string"}}, "any": {"type": "array"},
        "rows": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "number"}}}}}},
    "nested object with a description": {"type": "object", "properties": {
        "where": {"type": "object", "description": "A place", "required": ["lat"],
                  "properties": {"lat": {"type": "number", "description": "Latitude"}}}}},
    "nullable, type lists, titles, examples": {"type": "object", "properties": {
        "maybe": {"type": "string", "nullable": True}, "either": {"type": ["integer", "string"]},
        "titled": {"type": "string", "title": "A title", "examples": ["one", "two"]},
        "untyped": {"description": "anything"}}},
    "oneOf": {"type": "object", "properties": {
        "id": {"description": "Who", "default": "me", "oneOf": [
            {"type": "string", "description": "a name"}, {"type": "integer", "description": "a number",
                                                          "nullable": True}]},
        "same": {"description": "Same", "oneOf": [{"type": "string", "description": "Same"},
                                                 {"type": "number", "default": 1}]}}},
}


@pytest.mark.parametrize("name", SCHEMAS)
def test_a_schema_is_written_as_harmony_writes_it(harmony, name):
    oh, enc = harmony
    tools = parse_tools([{"name": "f", "description": "Does it.\nIn two lines.",
                          "parameters": SCHEMAS[name]}])
    described = [oh.ToolDescription.new("f", tools[0].description, parameters=SCHEMAS[name])]
    message = oh.Message.from_role_and_content(oh.Role.DEVELOPER,
                                               oh.DeveloperContent.new().with_function_tools(described))
    expected = enc.decode_utf8(enc.render(message))
    assert expected == f"<|start|>developer<|message|>{tools_section(tools)}<|end|>"
