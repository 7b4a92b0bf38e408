"""Running the app for a room: ``serve`` (``python -m ui.serve``: N app processes behind HAProxy),
``memory`` (giving memory back when a room leaves), ``turns`` (a process's page runs one after
another), ``sockets`` (a run's messages sent at once, Nagle's algorithm off), ``vega_bundle``
(Vega for the browser, served offline from Streamlit's static folder)."""
