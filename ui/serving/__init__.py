"""Running the app for a room: ``supervisor`` (``python -m ui.serve``: N app processes behind
HAProxy), ``memory`` and ``bounded_cache`` (giving memory back when a room leaves; the bound of
every shared cache), ``page_queue`` (a process's page runs waiting in line, one after another),
``sockets`` (a run's messages sent at once, Nagle's algorithm off), ``vega_bundle`` (Vega for the
browser, served offline from Streamlit's static folder).  Below ``ui.plumbing``: imports none of it."""
