"""A page run's messages leave the server at once (``ui.serving.sockets``): the server's sockets
have Nagle's algorithm off, so a browser does not wait 40 ms for the messages after the first.
Streamlit binds its listening socket as ``socket.socket(family)``, as these tests do; the
latency this saves is measured in bench/bench_page_cpu.py, not here."""

from __future__ import annotations

import socket
import sys

import pytest

from app_helpers import open_page
from ui.serving import sockets

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads the process's sockets from /proc, and relies on Linux "
                                       "copying a listening socket's options to the connections it accepts")


def nagle_off(sock: socket.socket) -> bool:
    return bool(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))


def accepted(listener: socket.socket) -> tuple[socket.socket, socket.socket]:
    """A connection to ``listener``: (the client's end, the end the listener accepted)."""
    client = socket.create_connection(listener.getsockname())
    return client, listener.accept()[0]


@pytest.fixture
def listener():
    """A listening socket made as Streamlit's server makes its own: its protocol left at 0, so
    asyncio leaves Nagle's algorithm on for what it accepts."""
    with socket.socket(socket.AF_INET) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock


def test_streamlit_s_kind_of_listener_accepts_connections_with_nagle_on(listener):
    client, server_end = accepted(listener)
    with client, server_end:
        assert server_end.proto == 0 and not nagle_off(server_end)


def test_connections_open_and_to_come_send_at_once(listener):
    client, open_before = accepted(listener)
    with client, open_before:
        assert sockets.send_at_once() >= 2  # the listener and the connection open now
        later_client, later = accepted(listener)
        with later_client, later:
            assert nagle_off(listener) and nagle_off(open_before) and nagle_off(later)


def test_a_page_run_turns_nagle_off_in_its_process(listener):
    sockets.start.cache_clear()  # as in a fresh app process
    open_page("start_here")
    client, server_end = accepted(listener)
    with client, server_end:
        assert nagle_off(server_end)
