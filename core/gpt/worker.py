"""The process that trains a run launched from the page: ``python -m core.gpt.worker RUN_DIR``,
started by the scheduler (``core.gpt.spawn.start_trainer``).

Everything it needs is in the run folder, written at launch by ``core.gpt.runs``: the config
(``train_config.json``, read straight into a ``TrainConfig``), the corpus and the tokenizer.  So
a run depends neither on the session that launched it nor on the server's working directory.
Leaves the flags to the command line (``core.gpt.cli``), whose progress lines and clean stop on
SIGTERM it shares.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..bpe import load_tokenizer
from ..corpus import read_corpus
from .cli import run_and_report
from .config import TrainConfig
from .limits import yield_cpu_to_server
from .rundir import CORPUS_FILE, TOKENIZER_FILE, TRAIN_CONFIG_FILE, read_json


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m core.gpt.worker RUN_DIR", file=sys.stderr)
        return 2
    run_dir = Path(argv[0]).absolute()

    def prepare():
        settings = read_json(run_dir / TRAIN_CONFIG_FILE)
        if not settings:
            raise ValueError(f"{run_dir / TRAIN_CONFIG_FILE} is missing or unreadable.")
        corpus = run_dir / CORPUS_FILE
        return (TrainConfig.from_dict(settings), corpus, read_corpus(corpus),
                load_tokenizer(run_dir / TOKENIZER_FILE))

    return run_and_report(prepare, run_dir)


if __name__ == "__main__":
    yield_cpu_to_server()
    sys.exit(main())
