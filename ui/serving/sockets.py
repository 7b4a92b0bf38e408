"""Sending a page run's messages the moment they are written, not a delayed ACK later.

A page run sends its browser about 35 small websocket messages.  Streamlit (1.67, on uvicorn)
binds its listening socket itself, as ``socket.socket(family)``, so the connections it accepts
report protocol 0, and asyncio turns Nagle's algorithm off (``TCP_NODELAY``) only on sockets
that report TCP (``asyncio.base_events._set_nodelay``; uvicorn's issue #3149 is the same trap).
With Nagle on, the first message goes out and the rest wait in the kernel for its
acknowledgement, which the browser's side delays (its delayed-ACK timer), having nothing to send
back.  Traced with ``strace`` on a bare page: the server wrote every message at once, and the
client received the first at once and the others only when the timer fired, every run, whatever
the page cost the server.  A Chromium tab gains less, as it is busy redrawing for most of that
wait; a tab idle when the messages come waits all of it (why: docs/benchmarks.md, "What one page
run costs the server").

:func:`send_at_once` sets ``TCP_NODELAY`` on every TCP socket the process has open: the
listening socket, whose options Linux copies to each connection it accepts from then on, and
the connections already accepted.  It reads the process's open files from ``/proc``; where there
is none (macOS, Windows) it does nothing.
"""

from __future__ import annotations

import functools
import os
import socket
import stat

_FDS = "/proc/self/fd"


def _tcp_socket(fd: int) -> socket.socket | None:
    """A socket object on a duplicate of ``fd`` when it is a TCP socket (closing it leaves ``fd``
    open), else None."""
    try:
        if not stat.S_ISSOCK(os.fstat(fd).st_mode):
            return None
        duplicate = os.dup(fd)
    except OSError:  # closed meanwhile
        return None
    try:
        sock = socket.socket(fileno=duplicate)
    except OSError:  # not a socket Python can wrap: the duplicate is ours to close
        os.close(duplicate)
        return None
    if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM:
        return sock
    sock.close()
    return None


def send_at_once() -> int:
    """Turn Nagle's algorithm off on every TCP socket of this process; how many were set."""
    try:
        fds = [int(name) for name in os.listdir(_FDS)]
    except OSError:  # no /proc: not Linux
        return 0
    count = 0
    for fd in fds:
        sock = _tcp_socket(fd)
        if sock is None:
            continue
        with sock:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                count += 1
            except OSError:  # a socket being closed by its owner
                pass
    return count


@functools.cache
def start() -> None:
    """:func:`send_at_once`, once per process: the first page run's, before its messages go (two
    first runs at once may both do it, which sets the same option twice)."""
    send_at_once()
