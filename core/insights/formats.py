"""Why YAML can be cheaper than JSON: the same records written in several formats, and what each
costs in tokens.  Records are a JSON array of flat objects (each value a string, number, true,
false or null); each format is written by its usual library (:data:`FORMAT_HELP` says how).

    >>> from core.bpe import BPETokenizer
    >>> records = read_records('[{"name": "Ada", "year": 1815}]')
    >>> written(records, "csv")
    'name,year\\nAda,1815\\n'
    >>> format_costs(records, {"bytes": BPETokenizer.byte_level()})["bytes"]["json_compact"]
    {'tokens': 28, 'characters': 28}
"""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET

import regex
import yaml

from ..bpe import BPETokenizer
from ..bpe.checks import ArgumentError
from ..corpus import check_corpus_size
from .languages import token_count

FORMATS = ("json", "json_compact", "yaml", "csv", "markdown", "xml")
FORMAT_HELP = {
    "json": "json.dumps(records, indent=2, ensure_ascii=False)",
    "json_compact": "json.dumps(records, separators=(',', ':'), ensure_ascii=False)",
    "yaml": "yaml.safe_dump(records, sort_keys=False, allow_unicode=True) (PyYAML, block style)",
    "csv": "csv.DictWriter (a header of every key in first-seen order, '\\n' line ends, "
           "null as an empty cell, true/false as in JSON)",
    "markdown": "a table: a header row of the keys, a |---| row, one row per record "
                "('|' in a cell escaped as '\\|', a new line as <br>)",
    "xml": "xml.etree.ElementTree: <records><record><KEY>value</KEY>...</record></records>, indented "
           "by two spaces (ET.indent); a key that is not an XML name becomes <field name=\"KEY\">",
}
MAX_RECORDS_BYTES = 1 << 20  # six formats of each, encoded by every tokenizer: kept to a page's second
SAMPLE_RECORDS = [
    {"id": 1, "name": "Ada Lovelace", "born": 1815, "field": "mathematics", "active": False},
    {"id": 2, "name": "Alan Turing", "born": 1912, "field": "computer science", "active": False},
    {"id": 3, "name": "Grace Hopper", "born": 1906, "field": "programming languages", "active": False},
    {"id": 4, "name": "Katherine Johnson", "born": 1918, "field": "orbital mechanics", "active": False},
]
XML_NAME = regex.compile(r"(?!(?i:xml))[\p{L}_][\p{L}\p{N}_.-]*")
SCALARS = (str, int, float, bool, type(None))


def read_records(raw: str, source: str = "the JSON", max_bytes: int = MAX_RECORDS_BYTES) -> list[dict]:
    """``raw`` parsed as a JSON array of flat objects, or an :class:`ArgumentError` saying what
    it is instead (over ``max_bytes`` of UTF-8: refused before parsing)."""
    check_corpus_size(len(raw.encode("utf-8", "surrogatepass")), source, min(max_bytes, MAX_RECORDS_BYTES))
    try:
        records = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ArgumentError(f"{source} is not JSON: {exc.msg} at line {exc.lineno}, "
                            f"column {exc.colno}.") from None
    if not isinstance(records, list) or not records:
        raise ArgumentError(f"{source} is not a JSON array of objects: give [{{...}}, {{...}}].")
    for k, record in enumerate(records):
        if not isinstance(record, dict):
            raise ArgumentError(f"{source}: item {k + 1} is not an object ({{\"key\": value, ...}}).")
        nested = [key for key, value in record.items() if not isinstance(value, SCALARS)]
        if nested:
            raise ArgumentError(f"{source}: item {k + 1} is not flat: {nested[0]!r} holds a list or an "
                                f"object (CSV and a table cannot hold one).")
    return records


def written(records: list[dict], fmt: str) -> str:
    """``records`` in the format ``fmt`` (one of :data:`FORMATS`)."""
    if fmt not in WRITERS:
        raise ArgumentError(f"Unknown format {fmt!r}: one of {', '.join(FORMATS)}.")
    return WRITERS[fmt](records)


def format_costs(records: list[dict], tokenizers: dict[str, BPETokenizer]) -> dict[str, dict[str, dict]]:
    """``{tokenizer name: {format: {"tokens": t, "characters": c}}}``, each format written once."""
    texts = {fmt: written(records, fmt) for fmt in FORMATS}
    return {name: {fmt: {"tokens": token_count(tok, text), "characters": len(text)}
                   for fmt, text in texts.items()} for name, tok in tokenizers.items()}


def _keys(records: list[dict]) -> list[str]:
    return list(dict.fromkeys(key for record in records for key in record))


def _cell(value) -> str:
    """A value as CSV and a table write it: JSON's spelling for true, false and null (empty)."""
    if value is None:
        return ""
    return json.dumps(value) if isinstance(value, bool) else str(value)


def _csv(records: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=_keys(records), lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: _cell(v) for k, v in record.items()} for record in records)
    return out.getvalue()


def _markdown(records: list[dict]) -> str:
    keys = _keys(records)

    def row(cells) -> str:
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", "<br>") for c in cells) + " |"

    lines = [row(keys), "|" + "|".join("---" for _ in keys) + "|"]
    lines += [row(_cell(record.get(k)) for k in keys) for record in records]
    return "\n".join(lines) + "\n"


def _xml(records: list[dict]) -> str:
    root = ET.Element("records")
    for record in records:
        item = ET.SubElement(root, "record")
        for key, value in record.items():
            if XML_NAME.fullmatch(key):
                field = ET.SubElement(item, key)
            else:
                field = ET.SubElement(item, "field", name=key)
            field.text = _cell(value)
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="unicode") + "\n"


WRITERS = {
    "json": lambda r: json.dumps(r, indent=2, ensure_ascii=False),
    "json_compact": lambda r: json.dumps(r, separators=(",", ":"), ensure_ascii=False),
    "yaml": lambda r: yaml.safe_dump(r, sort_keys=False, allow_unicode=True),
    "csv": _csv,
    "markdown": _markdown,
    "xml": _xml,
}


def yaml_verdict(tokens: dict[str, dict[str, int]]) -> str:
    """One sentence answering "why prefer YAML to JSON?" from ``tokens`` (tokenizer -> format ->
    tokens, for the same records): where YAML costs less than indented JSON and than compact JSON,
    and where it does not, naming the tokenizers.  True for any records: computed, never assumed."""
    names = list(tokens)

    def where(fmt: str, cheaper: bool) -> list[str]:
        return [n for n in names if (tokens[n]["yaml"] < tokens[n][fmt]) == cheaper]

    def who(group: list[str]) -> str:
        return "every tokenizer here" if len(group) == len(names) else _listed(group)

    parts = []
    for fmt, spelled in (("json", "indented JSON"), ("json_compact", "compact JSON")):
        less, not_less = where(fmt, True), where(fmt, False)
        if less:
            parts.append(f"YAML costs less than {spelled} under {who(less)}")
        if not_less:
            ties = [n for n in not_less if tokens[n]["yaml"] == tokens[n][fmt]]
            more = [n for n in not_less if n not in ties]
            if more:
                parts.append(f"{spelled} costs less than YAML under {who(more)}")
            if ties:
                parts.append(f"YAML and {spelled} cost the same under {who(ties)}")
    return _joined(parts) + "."


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _joined(parts: list[str]) -> str:
    """Clauses joined as a sentence: "a; b, but c" reads worse than "a, and b"; the first capitalised."""
    text = "; ".join(parts)
    return text[:1].upper() + text[1:]
