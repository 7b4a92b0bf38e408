"""``python -m core.train ...``: the command line for training a GPT, kept at this name so its
documented command and flags keep working.  It only calls ``core.gpt.cli.main``; the loop is
``core.gpt.loop`` and every flag is described in ``core.gpt.cli``."""

import sys

from core.gpt.cli import main

if __name__ == "__main__":
    sys.exit(main())
