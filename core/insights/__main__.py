"""``python -m core.insights``: the tokenizer questions answered from a script, each a table or,
with ``--json``, one JSON object (the shapes the pages' numbers come from).

    python -m core.insights vocab tinyshakespeare.txt --variant byte --sizes 300,1000,4096
    python -m core.insights unreachable o200k_base
    python -m core.insights languages sample_corpora/udhr --tokenizers gpt2,o200k_base --reference eng
    python -m core.insights spelling strawberry      # also numbers, whitespace, specials, boundary, formats
    python -m core.insights chat chat.json --tools tools.json
"""

from __future__ import annotations

import argparse
import json
import sys

from ..bpe import PRETRAINED_NAMES, VARIANTS
from .chat_command import CHAT_COMMAND, add_chat_command
from .languages import language_costs, read_parallel
from .question_commands import QUESTION_COMMANDS, add_question_commands
from .tokenizers import named_tokenizer
from .unreachable import unreachable_tokens
from .vocab_curve import HELD_OUT, vocabulary_curve

DEFAULT_MAX_VOCAB = 4096
HELD_OUT_HELP = (f"The tokenizer trains on the first {1 - HELD_OUT:.0%} of the file's characters; the last "
                 f"{HELD_OUT:.0%} is held out (the cut a GPT run validates on).")


def _sizes(value: str) -> list[int]:
    try:
        sizes = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"sizes are whole numbers separated by commas, not {value!r}"
                                         ) from None
    if not sizes:
        raise argparse.ArgumentTypeError("give at least one vocabulary size")
    return sizes


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core.insights", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    vocab = sub.add_parser("vocab", help="characters per token at every vocabulary size, from one training",
                           description="Characters per token against vocabulary size, on the training part "
                                       "and on the held-out part, from one training. " + HELD_OUT_HELP)
    vocab.add_argument("file", help="a UTF-8 text file")
    vocab.add_argument("--variant", choices=VARIANTS, default="byte")
    vocab.add_argument("--sizes", type=_sizes, help="vocabulary sizes, e.g. 300,600,1200 (in the order "
                                                    "given; default: powers of two up to --max-vocab)")
    vocab.add_argument("--max-vocab", type=int, default=DEFAULT_MAX_VOCAB,
                       help=f"train up to this size when --sizes is not given (default {DEFAULT_MAX_VOCAB})")
    vocab.add_argument("--pattern", default=None,
                       help="the byte variant's split pattern: gpt2, gpt4 or a regex")
    unreachable = sub.add_parser("unreachable", help="tokens whose own text does not encode back to them")
    unreachable.add_argument("tokenizer", help=f"{', '.join(PRETRAINED_NAMES)} or a saved tokenizer's path")
    languages = sub.add_parser("languages", help="tokens per language on a parallel corpus, and the premium")
    languages.add_argument("dir",
                           help="a folder of UTF-8 files, one per language, named by its code (eng.txt)")
    languages.add_argument("--tokenizers", type=lambda v: [t for t in v.split(",") if t], required=True,
                           help="tokenizer names or paths, separated by commas")
    languages.add_argument("--reference", default="eng", help="the language premiums are over (default eng)")
    for command in (vocab, unreachable, languages, *add_question_commands(sub), add_chat_command(sub)):
        command.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    return parser


def vocab_result(args) -> dict:
    with open(args.file, encoding="utf-8") as f:
        text = f.read()
    top = max(args.sizes) if args.sizes else args.max_vocab
    curve = vocabulary_curve(text, top, args.variant, pattern=args.pattern)
    sizes = args.sizes or [curve.base_size] + [2 ** k for k in range(6, 20)
                                               if curve.base_size < 2 ** k <= curve.vocab_sizes[-1]]
    return {"variant": curve.variant, "sizes": curve.rows(sizes)}


def unreachable_result(args) -> dict:
    found = unreachable_tokens(named_tokenizer(args.tokenizer))
    return {"tokenizer": args.tokenizer, "vocab_size": found.vocab_size,
            "unreachable": list(found.unreachable), "partial": len(found.partial)}


def languages_result(args) -> dict:
    tokenizers = {name: named_tokenizer(name) for name in args.tokenizers}
    costs = language_costs(read_parallel(args.dir), tokenizers, args.reference)
    return {"reference": args.reference, "languages": costs}


def vocab_table(result: dict, args) -> str:
    lines = [f"{result['variant']} BPE. {HELD_OUT_HELP}",
             "vocab size  chars/token (train)  chars/token (held out)"]
    lines += [f"{r['vocab_size']:>10}  {r['train_chars_per_token']:>19.3f}  "
              f"{r['held_out_chars_per_token']:>22.3f}" for r in result["sizes"]]
    return "\n".join(lines)


def unreachable_table(result: dict, args) -> str:
    tok = named_tokenizer(args.tokenizer)
    lines = [f"{result['tokenizer']}: vocabulary {result['vocab_size']:,}; "
             f"{len(result['unreachable'])} tokens whose text does not encode back to them; "
             f"{result['partial']:,} part of a character"]
    lines += [f"{i:>8}  {tok.token_str(i)!r}" for i in result["unreachable"]]
    return "\n".join(lines)


def languages_table(result: dict, args) -> str:
    names = args.tokenizers
    lines = ["language  " + "  ".join(f"{name:>22}" for name in names),
             "          " + "  ".join(f"{'tokens (premium)':>22}" for _ in names)]
    for code, row in result["languages"].items():
        cells = (f"{row[n]['tokens']:>12,} ({row[n]['premium']:>5.2f}x)" for n in names)
        lines.append(f"{code:<8}  " + "  ".join(f"{c:>22}" for c in cells))
    return "\n".join(lines)


COMMANDS = {"vocab": (vocab_result, vocab_table), "unreachable": (unreachable_result, unreachable_table),
            "languages": (languages_result, languages_table), **QUESTION_COMMANDS, **CHAT_COMMAND}


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        compute, table = COMMANDS[args.command]
        result = compute(args)
    except (OSError, ValueError) as exc:
        parser.exit(2, f"python -m core.insights {args.command}: {exc}\n")
    print(json.dumps(result, ensure_ascii=False) if args.json else table(result, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
