"""A process's page runs wait in line (``ui.serving.page_queue``): a run waits while another holds the
front, but not for a long holder past ``LONG_S``; and every run gives its place back however it
ends: a place kept would make every later run of every attendee in the process wait."""

from __future__ import annotations

import threading
import time

from app_helpers import open_page, step_view, paste_box
from conftest import wait_for
from ui.serving import page_queue
from ui.serving.bounded_cache import KeyLocks


def test_a_page_run_waits_in_line_but_goes_on_beside_a_long_holder():
    at = open_page("learn_bpe")
    began = time.monotonic()
    with page_queue.place_in_line() as had:  # another attendee's long run holds the front throughout
        assert had
        at.run()
        waited = time.monotonic() - began
    assert not at.exception, [e.message for e in at.exception]
    assert step_view(at)[2]["n"] > 0  # the page ran to its result beside the holder
    assert waited >= page_queue.LONG_S  # and not before the holder had held the front that long
    assert not page_queue._process.held


def test_runs_reach_the_front_one_after_another_in_the_order_they_came():
    line, order = page_queue.PageQueue(long_s=60), []
    first_in, let_go = threading.Event(), threading.Event()

    def run(name: str, hold: threading.Event | None = None) -> None:
        with line.place() as had:
            assert had
            order.append(name)
            if hold is not None:
                first_in.set()
                assert hold.wait(30)

    first = threading.Thread(target=run, args=("first", let_go))
    first.start()
    assert first_in.wait(30)
    waiting = []
    for name in ("second", "third"):
        waiting.append(threading.Thread(target=run, args=(name,)))
        waiting[-1].start()
        wait_for(lambda: line.waiting == len(waiting), timeout=30, interval=0.01)  # it waits in line
    assert order == ["first"]  # nobody ran while the first held the front
    let_go.set()
    for thread in (first, *waiting):
        thread.join(30)
    assert order == ["first", "second", "third"]
    assert not line.held


def test_a_run_beside_a_long_holder_leaves_the_holder_at_the_front():
    line = page_queue.PageQueue(long_s=0.01)
    with line.place() as had:
        assert had
        with line.place() as beside:
            assert not beside
        assert line.held  # still the holder's
    assert not line.held


def test_every_page_run_gives_its_place_back_however_it_ends():
    at = open_page("learn_bpe")  # ended with its result
    assert not page_queue._process.held
    paste_box(at).set_value(" ").run()  # ended early: nothing to learn from
    assert not at.exception, [e.message for e in at.exception]
    assert at.info and not page_queue._process.held
    at.switch_page("app_pages/char_vs_bpe.py").run()  # ended by a page switch, then run again
    assert not at.exception, [e.message for e in at.exception]
    assert not page_queue._process.held


def test_a_run_waiting_on_another_process_leaves_the_front_free_meanwhile():
    """A run that asks the engine, or waits for a probe's child, holds no GIL while it waits: the
    next run takes the front then, and the first takes its place in line again after."""
    line, order = page_queue.PageQueue(long_s=60), []
    waiting, answered = threading.Event(), threading.Event()

    def asks_the_engine() -> None:
        with line.place() as had:
            assert had
            with line.aside():
                waiting.set()
                assert answered.wait(30)  # the engine's answer, which the other run does not wait for
            order.append("asked")

    first = threading.Thread(target=asks_the_engine)
    first.start()
    assert waiting.wait(30)
    with line.place() as had:  # at once: the front is free, nobody waits 60 s for the asker
        assert had
        order.append("calm")
        answered.set()
    first.join(30)
    assert order == ["calm", "asked"] and not line.held


def test_a_run_waiting_for_what_another_session_makes_leaves_the_line_meanwhile():
    """Three attendees opening the same large text wait for one tokenizer (a ``KeyLocks`` key):
    held in line, each waiting run kept the front for nothing."""
    locks, made, done = KeyLocks(), threading.Event(), threading.Event()

    def makes() -> None:  # the first session, out of line (its job runs on the engine)
        with locks.hold("tokenizer"):
            assert made.wait(30)

    def waits() -> None:
        with page_queue.place_in_line(), locks.hold("tokenizer"):
            done.set()

    maker = threading.Thread(target=makes)
    maker.start()
    wait_for(lambda: "tokenizer" in locks._locks, 30)
    waiter = threading.Thread(target=waits)
    waiter.start()
    line = page_queue._process  # the waiter waits for the lock, and holds no place in line meanwhile
    wait_for(lambda: locks._locks["tokenizer"][1] == 2 and not line.held, 30)
    made.set()
    assert done.wait(30)
    maker.join(30)
    waiter.join(30)
    assert not line.held
