"""``python -m core.train ...``: the command line for training a GPT, kept at this name so its
documented command and flags keep working.  It only calls ``core.gpt.cli.main``; the loop is
``core.gpt.loop`` and every flag is described in ``core.gpt.cli``.

Its CPU threads wait without spinning, as the app's GPT workers do (``CPU_SHARING_ENV``): set
before torch loads, since OpenMP reads it once, and only where the caller has not chosen."""

import os
import sys

from core.room.cpu_policy import CPU_SHARING_ENV

for _name, _value in CPU_SHARING_ENV.items():
    os.environ.setdefault(_name, _value)

from core.gpt.cli import main  # noqa: E402  (after the environment above, which torch reads)

if __name__ == "__main__":
    sys.exit(main())
