"""Who is at this browser: an owner id without accounts, and instructor mode.

The owner id is a random token (``secrets.token_urlsafe(12)``, 16 characters) kept in the page
URL as ``?u=...``, created on a first visit.  Why the URL: Streamlit offers no way to set a cookie
or read local storage without a custom frontend component, while ``st.query_params`` survives a
reload of the tab, a restart of the server and a bookmark.  The URL is therefore the bearer token:
whoever has it owns those runs, so sharing your URL shares your runs (share a run with the room
with its Share toggle instead).  ``st.navigation`` may drop query parameters on a page switch, so
the id is also kept in the session and written back to the URL on every run; a value that is not
a 16-64 character token (``?u=../x``, a guessable ``?u=admin``) is replaced by a fresh one.

Instructor mode: the person starting the server sets a key (``BPE_EXPLORER_INSTRUCTOR_KEY`` or
``instructor_key`` in ``.streamlit/secrets.toml``); typing it in the sidebar's password field
(compared in constant time) makes this session an instructor, who sees and manages every run.
Permissions themselves are enforced in ``core.room.runs``; this module only says who is asking.
"""

from __future__ import annotations

import hmac
import re
import secrets

import streamlit as st

from core.room.owners import Viewer

from ui.plumbing import state
from ui.plumbing.cache import server_settings

OWNER_PARAM = "u"
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")


def owner_id() -> str:
    """This browser's owner id (see the module docstring), written back into the URL."""
    in_url = st.query_params.get(OWNER_PARAM)
    if in_url and _TOKEN.fullmatch(in_url):
        state.set_owner(in_url)
    elif state.stored_owner() is None:
        state.set_owner(secrets.token_urlsafe(12))
    owner = state.stored_owner()
    if in_url != owner:
        st.query_params[OWNER_PARAM] = owner
    return owner


def is_instructor() -> bool:
    """Whether this session is in instructor mode: the pages ask here, beside who the owner is
    (``ui.plumbing.state`` only keeps the flag)."""
    return state.is_instructor()


def viewer() -> Viewer:
    """Who is asking, for every ``core.room.runs`` call the page makes."""
    return Viewer(owner_id(), is_instructor())


def key_matches(entered: str, key: str | None) -> bool:
    """Whether ``entered`` is the instructor key, in time that does not depend on how much of it
    is right; never True when the server set no key."""
    return bool(key) and bool(entered) and hmac.compare_digest(entered.encode(), key.encode())


def _check_key() -> None:
    matches = key_matches(state.take_instructor_key(), server_settings().instructor_key)
    state.set_instructor(matches, None if matches else "That is not the instructor key.")


def _leave() -> None:
    state.set_instructor(False)


def identity_sidebar() -> None:
    """The sidebar's instructor box (only when the server set a key): a password field, or, in
    instructor mode, a note and a way out."""
    if not server_settings().instructor_key:
        return
    with st.sidebar.expander("Instructor", expanded=is_instructor()):
        if is_instructor():
            st.caption("Instructor mode: you see every attendee's runs and can stop or delete them.")
            st.button("Leave instructor mode", key="instructor_leave", on_click=_leave)
            return
        st.text_input("Instructor key", type="password", key=state.INSTRUCTOR_KEY_INPUT,
                      on_change=_check_key, help="Set by the person who started the server.")
        if state.instructor_message():
            st.error(state.instructor_message())
