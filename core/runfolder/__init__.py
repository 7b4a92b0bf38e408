"""A run folder, shared by the two libraries that use it: ``core.gpt`` writes one as it trains
(``python -m core.train`` alone, or a GPT worker's turn) and ``core.room`` queues, lists and stops
the runs in it.  Here, so neither imports the other for it (``core.room`` imports ``core.gpt``,
never the reverse); it imports neither, nor torch.

- ``layout``  every file of a run folder and of the runs folder that holds them, JSON and
  JSON-lines records, time stamps;
- ``status``  a run's status (``RunStatus``), how a turn ended (``TurnOutcome``) and
  ``status.json`` (``StatusRecord``), read and written there alone;
- ``locks``   the file locks that end with the process holding them (one process training a run
  folder, one engine of a runs folder).
"""
