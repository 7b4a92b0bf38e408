"""A process's page runs wait in line (``ui.serving.page_queue``): a run waits while another holds the
front, but not for a long holder past ``LONG_S``, which leaves the front to the next in line only;
and every run gives its place back however it ends: a place kept would make every later run of
every attendee in the process wait."""

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
    with page_queue.place_in_line():  # another attendee's long run holds the front throughout
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
        with line.place():
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


def test_a_session_whose_last_run_was_long_waits_behind_calm_ones_but_not_past_its_patience():
    """Heavy attendees' reruns, each holding the front, kept a room's calm runs waiting: a run whose
    session's last run was long lets calm runs that come after it go first, until it has waited
    ``patience_s``."""
    line, order = page_queue.PageQueue(long_s=60, patience_s=1.0), []
    first_in, let_go = threading.Event(), threading.Event()

    def run(name: str, behind: bool = False, hold: threading.Event | None = None) -> None:
        with line.place(behind):
            order.append(name)
            if hold is not None:
                first_in.set()
                assert hold.wait(30)

    first = threading.Thread(target=run, args=("holder", False, let_go))
    first.start()
    assert first_in.wait(30)
    waiting = []
    for name, behind in (("heavy", True), ("calm", False), ("old heavy", True)):
        waiting.append(threading.Thread(target=run, args=(name, behind)))
        waiting[-1].start()
        wait_for(lambda: line.waiting == len(waiting), timeout=30, interval=0.01)
    # both heavy runs have waited past their patience (and the holder held the front as long)
    wait_for(lambda: time.monotonic() - line._line[-1][1].since > 1.0, timeout=30, interval=0.01)
    waiting.append(threading.Thread(target=run, args=("late calm", False)))
    waiting[-1].start()
    wait_for(lambda: line.waiting == len(waiting), timeout=30, interval=0.01)
    let_go.set()
    for thread in (first, *waiting):
        thread.join(30)
    assert order == ["holder", "calm", "heavy", "old heavy", "late calm"]
    assert not line.held


def test_a_run_that_held_the_front_twice_its_lines_long_s_says_so_for_its_sessions_next():
    line = page_queue.PageQueue(long_s=1.0)  # its own, not the module's LONG_S
    with line.place() as calm:
        time.sleep(0.5)  # the run's own work, holding the front: past twice LONG_S, not its line's
    with line.place() as heavy:
        time.sleep(2.05)
    assert heavy.long and not calm.long


def test_a_long_holder_leaves_the_front_to_the_next_in_line_only():
    """Past ``long_s`` the holder goes on beside, and the first run waiting takes the front: the
    second still waits, now for the new holder (when all of them went on at once, they shared the
    GIL and all finished late)."""
    line, order = page_queue.PageQueue(long_s=3.0), []
    let_go = {name: threading.Event() for name in ("long", "next", "last")}

    def run(name: str) -> None:
        with line.place():
            order.append(name)
            assert let_go[name].wait(60)

    threads = {name: threading.Thread(target=run, args=(name,)) for name in let_go}
    threads["long"].start()
    wait_for(lambda: order == ["long"], timeout=30, interval=0.01)
    threads["next"].start()
    wait_for(lambda: line.waiting == 1, timeout=30, interval=0.01)
    threads["last"].start()
    wait_for(lambda: len(order) > 1, timeout=30, interval=0.01)  # the long one's 3 s passed
    assert order == ["long", "next"]  # "last" waits for "next", whose 3 s have only begun
    let_go["next"].set()
    wait_for(lambda: order == ["long", "next", "last"], timeout=30, interval=0.01)
    for name in ("long", "last"):
        let_go[name].set()
    for thread in threads.values():
        thread.join(30)
    assert not line.held and not line.waiting


def test_a_long_run_makes_way_for_the_runs_waiting_in_line_and_then_carries_on():
    """A heavy attendee's long run shared the GIL with every calm run at the front: between two
    pieces of its work (``make_way``) it goes back into line behind the runs waiting, and carries
    on once they have gone; with nobody waiting, or for a run that is not long, it goes straight on."""
    line, order = page_queue.PageQueue(long_s=3.0), []
    go = {name: threading.Event() for name in ("heavy", "front", "calm")}

    def run(name: str) -> None:
        with line.place():
            order.append(name)
            assert go[name].wait(60)
            line.make_way()
            order.append(f"{name} again")

    threads = {name: threading.Thread(target=run, args=(name,)) for name in go}
    threads["heavy"].start()
    wait_for(lambda: order == ["heavy"], timeout=30, interval=0.01)
    threads["front"].start()
    wait_for(lambda: order == ["heavy", "front"], timeout=30, interval=0.01)  # heavy's 3 s: it is long
    threads["calm"].start()
    wait_for(lambda: line.waiting == 1, timeout=30, interval=0.01)
    go["heavy"].set()  # it makes way: back in line, behind "calm", while "front" holds the front
    wait_for(lambda: line.waiting == 2, timeout=30, interval=0.01)
    assert order == ["heavy", "front"]
    go["front"].set()  # not long: it makes no way, and leaves the front to "calm", then "heavy"
    wait_for(lambda: order[-1] == "calm", timeout=30, interval=0.01)
    go["calm"].set()
    for thread in threads.values():
        thread.join(30)
    assert order == ["heavy", "front", "front again", "calm", "calm again", "heavy again"]
    assert not line.held and not line.waiting


def test_one_long_run_at_a_time_goes_on_beside_the_front_unless_the_front_is_twice_long():
    """With a long run going on, a holder past ``long_s`` keeps the front up to twice that: the
    runs waiting share the interpreter with one long run, not every heavy attendee's; but never
    wait on it for long (it may be waiting for a lock or a job that a run in line holds)."""
    long_s = 1.5
    line, order = page_queue.PageQueue(long_s=long_s, long_at_once=1), []
    let_go = {name: threading.Event() for name in ("first", "second", "third")}

    def run(name: str) -> None:
        with line.place():
            order.append((name, time.monotonic()))
            assert let_go[name].wait(60)

    threads = {name: threading.Thread(target=run, args=(name,)) for name in let_go}
    for n, name in enumerate(("first", "second"), 1):
        threads[name].start()
        wait_for(lambda: len(order) == n, timeout=30, interval=0.01)  # "first" goes on as the long run
    threads["third"].start()
    wait_for(lambda: line.waiting == 1, timeout=30, interval=0.01)
    began = order[1][1]
    wait_for(lambda: time.monotonic() - began > 1.25 * long_s, timeout=30, interval=0.01)
    assert [n for n, _ in order] == ["first", "second"] and line.long_runs == 1  # "second" is long too
    wait_for(lambda: len(order) == 3, timeout=30, interval=0.01)  # but not for twice long_s
    assert order[2][1] - began >= 2 * long_s and line.long_runs == 2
    for event in let_go.values():
        event.set()
    for thread in threads.values():
        thread.join(30)
    assert not line.held and not line.waiting and not line.long_runs


def test_a_run_back_in_line_holding_what_the_long_run_waits_for_is_not_kept_waiting():
    """A heavy run steps aside holding a lock (a tokenizer being asked of the engine), the long
    run waits for that lock, and another run holds the front: the run coming back takes the front
    after twice ``long_s`` however many long runs go on, so nobody waits forever."""
    line, lock = page_queue.PageQueue(long_s=0.05, long_at_once=1), threading.Lock()
    aside, front_taken, done, let_go = (threading.Event() for _ in range(4))

    def holds_the_lock() -> None:
        with line.place():
            with lock:
                with line.aside():
                    assert aside.wait(30)  # the engine's answer, once the others are where they wait
        done.set()

    def waits_for_the_lock() -> None:
        with line.place(), lock:
            pass

    def holds_the_front() -> None:
        with line.place():
            front_taken.set()
            assert let_go.wait(60)

    threads = [threading.Thread(target=holds_the_lock)]
    threads[0].start()
    wait_for(lambda: lock.locked() and not line.held, timeout=30, interval=0.01)
    threads.append(threading.Thread(target=waits_for_the_lock))
    threads[-1].start()
    wait_for(lambda: line.held, timeout=30, interval=0.01)
    threads.append(threading.Thread(target=holds_the_front))
    threads[-1].start()
    assert front_taken.wait(30) and line.long_runs == 1  # the lock's waiter went on as the long run
    aside.set()
    assert done.wait(30), "the run back in line waited for the long run, which waited for it"
    let_go.set()
    for thread in threads:
        thread.join(30)
    assert not line.held and not line.waiting and not line.long_runs


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
        with line.place():
            with line.aside():
                waiting.set()
                assert answered.wait(30)  # the engine's answer, which the other run does not wait for
            order.append("asked")

    first = threading.Thread(target=asks_the_engine)
    first.start()
    assert waiting.wait(30)
    with line.place():  # at once: the front is free, nobody waits 60 s for the asker
        order.append("calm")
        answered.set()
    first.join(30)
    assert order == ["calm", "asked"] and not line.held


def test_a_run_waiting_for_what_another_session_makes_leaves_the_line_meanwhile():
    """Three attendees opening the same large text wait for one tokenizer (a ``KeyLocks`` key):
    held in line, each waiting run kept the front, or the one place of a long run, for nothing."""
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
    wait_for(lambda: locks._locks["tokenizer"][1] == 2 and not line.held and not line.long_runs, 30)
    made.set()
    assert done.wait(30)
    maker.join(30)
    waiter.join(30)
    assert not line.held and not line.long_runs
