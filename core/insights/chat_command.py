"""``python -m core.insights chat FILE.json``: a conversation as each model reads it (``core.chat``),
its tokens per message, content against template, and what the tools add:

    python -m core.insights chat chat.json --tools tools.json --thinking --tokenizers llama3,qwen3 --json

FILE.json is a list of ``{"role", "content"}``; ``--json`` prints ``{"tokenizers": {name: {"ids",
"tokens", "template_tokens", "messages": [{"role", "content_tokens", "template_tokens"}],
"tools_tokens", "exact"}}}``, ``exact`` false only for the estimates (GPT-4, GPT-4o).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..bpe import BPETokenizer
from ..chat import CHAT_MODELS, OWN_MODEL, chat_tokenizer, count_chat, own_chat_tokenizer
from ..chat.chat_templates import template_sources
from ..chat.conversation import parse_messages, parse_tools, read_json_file


def _names(value: str) -> list[str]:
    names = [t for t in value.split(",") if t]
    for name in names:
        if name not in CHAT_MODELS and not Path(name).is_file():
            raise argparse.ArgumentTypeError(f"{name!r} is neither a chat model ({', '.join(CHAT_MODELS)}) "
                                             f"nor a saved tokenizer's path")
    if not names:
        raise argparse.ArgumentTypeError("give at least one tokenizer name or path")
    return names


def _sources() -> str:
    published = template_sources()
    lines = []
    for name, model in CHAT_MODELS.items():
        where = f" ({published[name]['source']})" if name in published else ""
        lines.append(f"{name}: {model.label}, {model.source}{where}")
    lines.append(f"a saved tokenizer's path: {OWN_MODEL.source}")
    return "\n".join(f"  {line}" for line in lines)


def add_chat_command(sub) -> argparse.ArgumentParser:
    chat = sub.add_parser("chat", help="a conversation's tokens as each model's chat format writes it",
                          formatter_class=argparse.RawDescriptionHelpFormatter,
                          description="A conversation rendered in each model's chat format and counted: per\n"
                                      "message its content's tokens and the template's, the total, and what\n"
                                      f"the tools add. Where each format comes from:\n{_sources()}")
    chat.add_argument("file", help='a JSON list of {"role": system|user|assistant|tool, "content": text}')
    chat.add_argument("--tools", help="a JSON list of function definitions (name, description, parameters "
                                      "as a JSON Schema object)")
    chat.add_argument("--thinking", action="store_true", help="Qwen 3 with thinking on (default off)")
    chat.add_argument("--tokenizers", type=_names, default=list(CHAT_MODELS),
                      help=f"chat models or saved tokenizers' paths, separated by commas "
                           f"(default: {','.join(CHAT_MODELS)})")
    return chat


def chat_result(args) -> dict:
    messages = parse_messages(read_json_file(args.file, "messages"))
    tools = parse_tools(read_json_file(args.tools, "tools")) if args.tools else ()
    counts = {}
    for name in args.tokenizers:
        if name in CHAT_MODELS:
            model, tokenizer = CHAT_MODELS[name], chat_tokenizer(name)
        else:
            model, tokenizer = OWN_MODEL, own_chat_tokenizer(BPETokenizer.load(name))
        counts[name] = count_chat(model, tokenizer, messages, tools, thinking=args.thinking).as_json()
    return {"tokenizers": counts}


def chat_table(result: dict, args) -> str:
    lines = [f"{'tokenizer':<16}{'tokens':>8}{'template':>10}{'tools':>8}  per message (content+template)"]
    for name, row in result["tokenizers"].items():
        per = "  ".join(f"{m['role']} {m['content_tokens']}+{m['template_tokens']}" for m in row["messages"])
        mark = "" if row["exact"] else " (estimate)"
        lines.append(f"{name:<16}{row['tokens']:>8,}{row['template_tokens']:>10,}{row['tools_tokens']:>8,}  "
                     f"{per}{mark}")
    return "\n".join(lines)


CHAT_COMMAND = {"chat": (chat_result, chat_table)}
