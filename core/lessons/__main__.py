"""``python -m core.lessons check [--dir FOLDER] [--runs-dir FOLDER]``: check every station and
list the answers ``core`` computes (exit status 1 on any problem); ``python -m core.lessons
computations``: the computations a station may name."""

from __future__ import annotations

import argparse
import sys

from .check import check_path, computations_text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.lessons", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="check every station file and compute its answer")
    check.add_argument("--dir", help="the folder of station files (default: lessons/, or "
                                     "$BPE_EXPLORER_LESSONS_DIR)")
    check.add_argument("--runs-dir", help="the runs folder the room's GPT runs are in (default: the app's)")
    sub.add_parser("computations", help="list the computations a station's question may name")
    args = parser.parse_args(argv)
    if args.command == "computations":
        print(computations_text())
        return 0
    report = check_path(args.dir, args.runs_dir)
    print(report.text())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
