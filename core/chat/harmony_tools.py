"""Tool definitions as harmony writes them for GPT-OSS: a ``namespace functions { ... }`` of
TypeScript-like types, each function's JSON Schema turned into a type.

This follows ``json_schema_to_typescript`` and ``template_tools_section`` of OpenAI's
``openai-harmony`` (``src/encoding.rs``, Apache-2.0) rule for rule, so the tokens a tool adds are
the ones GPT-OSS reads; ``tests/chat/test_harmony.py`` checks the two agree.  The ChatML estimates
(``core.chat.chatml``) write tools the same way, as OpenAI's models are believed to read them.
"""

from __future__ import annotations

import json


def _get(schema, key):
    return schema.get(key) if isinstance(schema, dict) else None


def _has_default(schema) -> bool:
    return isinstance(schema, dict) and "default" in schema


def _lines(text: str) -> list[str]:
    """Rust's ``str::lines``: split at newlines, no last empty line, a line's ending ``\r`` dropped."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _text(value):
    return value if isinstance(value, str) else None


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _is_enum(schema) -> bool:
    values = _get(schema, "enum")
    return isinstance(values, list) and bool(values)


def _default_comment(schema, default) -> str:
    if isinstance(default, str):
        return f'default: "{default}"' if not _is_enum(schema) else f"default: {default}"
    return f"default: {_json(default)}"


def _nullable(schema, type_str: str) -> str:
    if _get(schema, "nullable") is True and "null" not in type_str:
        return f"{type_str} | null"
    return type_str


def schema_type(schema, indent: str = "") -> str:
    """The TypeScript-like type harmony writes for a JSON Schema."""
    one_of = _get(schema, "oneOf")
    if isinstance(one_of, list):
        return _one_of(one_of, indent)
    kind = _get(schema, "type")
    if isinstance(kind, list):
        names = ["number" if t == "integer" else t for t in kind if isinstance(t, str)]
        if names:
            return " | ".join(names)
    if not isinstance(kind, str):
        return "any"
    if kind == "object":
        return _object(schema, indent)
    if kind == "string":
        values = _get(schema, "enum")
        quoted = [f'"{v}"' for v in values if isinstance(v, str)] if isinstance(values, list) else []
        return " | ".join(quoted) if quoted else "string"
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "array":
        items = _get(schema, "items")
        return f"{schema_type(items, indent)}[]" if items is not None else "Array<any>"
    return "any"


def _one_of(variants: list, indent: str) -> str:
    out = []
    for variant in variants:
        out.append(f"\n{indent} | ")
        out.append(_nullable(variant, schema_type(variant, indent + "   ")))
        comments = []
        if _text(_get(variant, "description")) is not None:
            comments.append(_get(variant, "description"))
        if _has_default(variant):
            comments.append(_default_comment(variant, _get(variant, "default")))
        if comments:
            out.append(" // " + " ".join(comments))
    return "".join(out)


def _object(schema, indent: str) -> str:
    out = []
    if _text(_get(schema, "description")) is not None:
        out.append(f"{indent}// {schema['description']}\n")
    out.append("{\n")
    props = _get(schema, "properties")
    required = _get(schema, "required")
    required = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    if isinstance(props, dict):
        for key, val in props.items():
            out.append(_property(key, val, key in required, indent))
    out.append(f"{indent}}}")
    return "".join(out)


def _property(key: str, val, required: bool, indent: str) -> str:
    out = []
    if _text(_get(val, "title")) is not None:
        out.append(f"{indent}// {val['title']}\n{indent}//\n")
    one_of = _get(val, "oneOf")
    if not isinstance(one_of, list) and _text(_get(val, "description")) is not None:
        out.append(f"{indent}// {val['description']}\n")
    examples = _get(val, "examples")
    if isinstance(examples, list) and examples:
        out.append(f"{indent}// Examples:\n")
        out += [f'{indent}// - "{ex}"\n' for ex in examples if isinstance(ex, str)]
    mark = "" if required else "?"
    if isinstance(one_of, list):
        return "".join(out) + _one_of_property(key + mark, val, one_of, indent)
    out.append(f"{indent}{key}{mark}: ")
    out.append(_nullable(val, schema_type(val, indent + "    ")) + ",")
    if _has_default(val):
        out.append(" // " + _default_comment(val, val["default"]))
    return "".join(out) + "\n"


def _one_of_property(name: str, val, variants: list, indent: str) -> str:
    """A property whose schema is ``oneOf``: one variant per line, the property's description above
    (unless the first variant says the same)."""
    out = []
    described = _text(_get(val, "description"))
    first = _text(_get(variants[0], "description")) if variants else None
    above = described is not None and described != first
    if above:
        out.append(f"{indent}// {described}\n")
    if _has_default(val):
        out.append(f"{indent}// {_default_comment(val, val['default'])}\n")
    out.append(f"{indent}{name}:\n")
    for i, variant in enumerate(variants):
        out.append(f"{indent} | " + _nullable(variant, schema_type(variant, indent + "   ")))
        comments = []
        own = _text(_get(variant, "description"))
        if not (i == 0 and above) and own is not None and own != described:
            comments.append(own)
        if _has_default(variant):
            comments.append(_default_comment(variant, variant["default"]))
        if comments:
            out.append(" // " + " ".join(comments))
        out.append("\n")
    return "".join(out) + f"{indent},\n"


def tools_section(tools) -> str:
    """``# Tools`` and the ``functions`` namespace of ``tools`` (``core.chat.conversation.Tool``)."""
    lines = ["## functions\n", "namespace functions {\n"]
    for tool in tools:
        lines += [f"// {line}" for line in _lines(tool.description)]
        lines.append(f"type {tool.name} = (_: {schema_type(tool.parameters)}) => any;\n")
    lines.append("} // namespace functions")
    return "# Tools\n\n" + "\n".join(lines)
