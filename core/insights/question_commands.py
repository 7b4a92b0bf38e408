"""The subcommands of ``python -m core.insights`` that answer "why are language models weird"
questions, each under every tokenizer asked for (all five real ones by default), keyed by the
name given:

    python -m core.insights spelling strawberry
    python -m core.insights numbers --upto 9999
    python -m core.insights whitespace core/bpe/_educational.py --tokenizers gpt2,cl100k_base
    python -m core.insights specials "<|endoftext|>"
    python -m core.insights boundary "Hello " "world"
    python -m core.insights formats records.json

Each gives a table or, with ``--json``, one JSON object; tokens are their text (the bytes of a
part of a character as ``\\xNN``), ids integers.
"""

from __future__ import annotations

import argparse

from ..bpe import PRETRAINED_NAMES
from ..bpe.display import visible
from ..corpus import read_corpus
from .boundary import prompt_boundary
from .formats import FORMAT_HELP, FORMATS, MAX_RECORDS_BYTES, format_costs, read_records
from .numbers import number_groupings
from .specials import special_readings
from .spelling import FORMS, spelling
from .tokenizers import named_tokenizer
from .whitespace import whitespace_cost


def _names(value: str) -> list[str]:
    names = [t for t in value.split(",") if t]
    if not names:
        raise argparse.ArgumentTypeError("give at least one tokenizer name or path")
    return names


def add_question_commands(sub) -> list[argparse.ArgumentParser]:
    """The six subcommands added to ``sub`` (argparse's subparsers), each with ``--tokenizers``."""
    spelling_ = sub.add_parser("spelling", help="a word's tokens in six forms, and the letters they hide")
    spelling_.add_argument("word")
    numbers = sub.add_parser("numbers", help="how the integers 0..N are cut into tokens")
    numbers.add_argument("--upto", type=int, default=9_999, help="the largest integer (default 9999)")
    whitespace = sub.add_parser("whitespace", help="tokens spent on whitespace in a file (code, say)")
    whitespace.add_argument("file", help="a UTF-8 text file")
    specials = sub.add_parser("specials", help="a text read as ordinary text and with special tokens")
    specials.add_argument("text")
    boundary = sub.add_parser("boundary", help="a prompt's tokens, and which survive its continuation")
    boundary.add_argument("prompt")
    boundary.add_argument("continuation")
    written = "; ".join(f"{fmt}: {how}" for fmt, how in FORMAT_HELP.items())
    formats = sub.add_parser("formats", help="tokens of the same records as JSON, YAML, CSV, a table, XML",
                             description=f"The records of FILE written in each format, counted in tokens and "
                                         f"characters. How each is written: {written}.")
    formats.add_argument("file", help=f"a JSON array of flat objects (at most {MAX_RECORDS_BYTES >> 10} KiB)")
    commands = [spelling_, numbers, whitespace, specials, boundary, formats]
    for command in commands:
        command.add_argument("--tokenizers", type=_names, default=list(PRETRAINED_NAMES),
                             help="tokenizer names or saved tokenizers' paths, separated by commas "
                                  f"(default: {','.join(PRETRAINED_NAMES)})")
    return commands


def _each(args, answer) -> dict:
    return {name: answer(named_tokenizer(name)) for name in args.tokenizers}


def spelling_result(args) -> dict:
    return {"word": args.word, "tokenizers": _each(args, lambda tok: spelling(tok, args.word).to_dict())}


def numbers_result(args) -> dict:
    answer = _each(args, lambda tok: number_groupings(tok, args.upto).to_dict())
    return {"upto": args.upto, "tokenizers": answer}


def whitespace_result(args) -> dict:
    text = read_corpus(args.file)
    return {"tokenizers": _each(args, lambda tok: whitespace_cost(tok, text).to_dict())}


def specials_result(args) -> dict:
    return {"tokenizers": _each(args, lambda tok: special_readings(tok, args.text).to_dict())}


def boundary_result(args) -> dict:
    return {"tokenizers": _each(args, lambda tok: prompt_boundary(tok, args.prompt,
                                                                  args.continuation).to_dict())}


def formats_result(args) -> dict:
    records = read_records(read_corpus(args.file, max_bytes=MAX_RECORDS_BYTES), args.file)
    tokenizers = {name: named_tokenizer(name) for name in args.tokenizers}
    return {"records": len(records), "tokenizers": format_costs(records, tokenizers)}


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("s" if n != 1 else "")


def _cost(cell: dict) -> str:
    return f"{cell['tokens']:,} ({cell['characters']:,})"


def _tokens(tokens) -> str:
    return " · ".join(map(visible, tokens))


def spelling_table(result: dict, args) -> str:
    lines = []
    for name, row in result["tokenizers"].items():
        lines.append(f"{name}: {row['letters_in_longer_tokens']} of the word's letters sit in tokens of "
                     f"two or more characters")
        lines += [f"  {form!r:<12} {_tokens(row['forms'][form]['tokens'])}" for form in FORMS]
    return "\n".join(lines)


def numbers_table(result: dict, args) -> str:
    counts = sorted({int(n) for row in result["tokenizers"].values() for n in row["tokens_per_number"]})
    lines = [f"The integers 0 to {result['upto']:,} written plainly, by the tokens each takes",
             f"{'tokenizer':<16}" + "".join(f"{_plural(n, 'token'):>12}" for n in counts)
             + f"{'groupings':>11}"]
    for name, row in result["tokenizers"].items():
        cells = "".join(f"{row['tokens_per_number'].get(str(n), 0):>12,}" for n in counts)
        lines.append(f"{name:<16}{cells}{row['groupings']:>11}")
    return "\n".join(lines)


def whitespace_table(result: dict, args) -> str:
    lines = [f"{'tokenizer':<16}{'tokens':>10}{'whitespace':>12}{'share':>8}"]
    for name, row in result["tokenizers"].items():
        share = row["whitespace_tokens"] / max(1, row["tokens"])
        lines.append(f"{name:<16}{row['tokens']:>10,}{row['whitespace_tokens']:>12,}{share:>8.1%}")
    return "\n".join(lines)


def specials_table(result: dict, args) -> str:
    lines = []
    for name, row in result["tokenizers"].items():
        special = row["as_special"] or "(none of its special tokens is in the text)"
        lines += [f"{name}:", f"  as text     {_tokens(row['as_text']['tokens'])}  {row['as_text']['ids']}",
                  f"  as special  {special}"]
    return "\n".join(lines)


def boundary_table(result: dict, args) -> str:
    lines = []
    for name, row in result["tokenizers"].items():
        lost = row["prompt"][row["kept"]:]
        lines += [f"{name}: {row['kept']} of the prompt's {len(row['prompt'])} tokens kept"
                  + (f"; not kept: {_tokens(lost)}" if lost else ""),
                  f"  prompt  {_tokens(row['prompt'])}", f"  joined  {_tokens(row['joined'])}"]
    return "\n".join(lines)


def formats_table(result: dict, args) -> str:
    lines = [f"{result['records']:,} records; tokens (characters) in each format",
             f"{'tokenizer':<16}" + "".join(f"{fmt:>18}" for fmt in FORMATS)]
    for name, row in result["tokenizers"].items():
        cells = "".join(f"{_cost(row[fmt]):>18}" for fmt in FORMATS)
        lines.append(f"{name:<16}{cells}")
    return "\n".join(lines)


QUESTION_COMMANDS = {
    "spelling": (spelling_result, spelling_table), "numbers": (numbers_result, numbers_table),
    "whitespace": (whitespace_result, whitespace_table), "specials": (specials_result, specials_table),
    "boundary": (boundary_result, boundary_table), "formats": (formats_result, formats_table),
}
