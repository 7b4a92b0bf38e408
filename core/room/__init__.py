"""The room: many attendees' work on one server.  ``jobs``: the room's heavy work (training a
tokenizer on a pasted corpus, encoding it, a page's data) in worker processes, fair between
attendees, shared, cancelled and bounded.  Importing this package loads nothing (no torch)."""
