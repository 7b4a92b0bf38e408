"""A room shares work: two sessions asking for the same corpus and settings at once train one
tokenizer (the second waits for the first's), and the pieces that make the shared caches safe."""

import contextlib
import gc
import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.serving.bounded_cache import BoundedCache, KeyLocks

ROOT = Path(__file__).resolve().parents[2]


def test_one_key_is_made_once_while_other_keys_go_on():
    locks, made, inside = KeyLocks(), [], threading.Barrier(2, timeout=30)
    cache = BoundedCache(8, 2**20)

    def ask(key, meet: bool) -> None:
        with locks.hold(key):
            if meet:  # the two keys' holders are inside at the same time: nobody waits for another key
                inside.wait()
            if cache.get(key) is None:
                made.append(key)
                cache.put(key, key.upper())

    threads = [threading.Thread(target=ask, args=("a", i == 0)) for i in range(6)]
    threads.append(threading.Thread(target=ask, args=("b", True)))
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(made) == ["a", "b"] and cache.get("a") == "A"
    assert locks._locks == {}  # a key's lock goes when nobody holds or waits for it


def test_a_waiter_interrupted_as_it_gets_the_lock_still_lets_it_go():
    """A session told to rerun while it waits (its spinner raises as it closes) must not keep the
    key's lock, or every attendee waiting behind it for the same tokenizer waits forever."""
    locks, release = KeyLocks(), threading.Event()

    class Interrupted(Exception):
        pass

    @contextlib.contextmanager
    def spinner_that_raises_on_exit():
        yield
        raise Interrupted

    def first() -> None:
        with locks.hold("k"):
            release.wait(30)

    def second() -> None:
        with pytest.raises(Interrupted):
            with locks.hold("k", on_wait=spinner_that_raises_on_exit):
                pass

    holder = threading.Thread(target=first, daemon=True)
    holder.start()
    deadline = time.monotonic() + 30
    while "k" not in locks._locks:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    lock = locks._locks["k"][0]
    waiter = threading.Thread(target=second, daemon=True)
    waiter.start()
    while locks._locks["k"][1] < 2:  # the second session waits
        assert time.monotonic() < deadline
        time.sleep(0.01)
    release.set()
    holder.join(30)
    waiter.join(30)
    assert not lock.locked(), "the interrupted waiter kept the lock"


def test_a_value_made_for_an_object_is_never_served_for_another_at_its_address():
    cache = BoundedCache(8, 2**20)

    class Owner:
        pass

    first = Owner()
    assert cache.made_for(first, "k", lambda: "first's") == "first's"
    assert cache.made_for(first, "k", lambda: "again") == "first's"
    address = id(first)
    del first
    gc.collect()
    second = Owner()
    made = cache.made_for(second, "k", lambda: "second's")
    assert made == "second's", f"served the value of a freed object (same address: {id(second) == address})"


class SharedRuntimeSlot:
    """AppTest sets Streamlit's one runtime slot as a run starts and clears it as the run ends:
    with two sessions' runs at once, the first to end would pull the runtime from under the other
    (its components then fail: "Runtime hasn't been created!"). Through this stand-in for the
    ``Runtime`` name AppTest uses, the slot is cleared when the last run ends."""

    def __init__(self) -> None:
        object.__setattr__(self, "runs", 0)
        object.__setattr__(self, "guard", threading.Lock())

    def __setattr__(self, name: str, value) -> None:
        from streamlit.runtime import Runtime

        assert name == "_instance", name
        with self.guard:
            object.__setattr__(self, "runs", self.runs + (1 if value is not None else -1))
            if value is not None and Runtime._instance is None:
                Runtime._instance = value
            elif value is None and self.runs == 0:
                Runtime._instance = None

    def __getattr__(self, name: str):
        from streamlit.runtime import Runtime

        return getattr(Runtime, name)

    def __dir__(self):  # MagicMock(spec=Runtime) in AppTest reads the real class's attributes
        from streamlit.runtime import Runtime

        return dir(Runtime)


@pytest.mark.slow
def test_two_sessions_opening_one_corpus_train_it_once(monkeypatch):
    from streamlit.testing.v1 import app_test

    from ui.plumbing import cache

    monkeypatch.setattr(app_test, "Runtime", SharedRuntimeSlot())

    made, release = [], threading.Event()
    real = cache.BPETrainer

    def trainer(*args, **kwargs):  # the first training holds until the second session waits on it
        made.append(1)
        release.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(cache, "BPETrainer", trainer)
    corpus = f"a room of attendees opened this sample together at {time.time()} " * 20
    sessions = [AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120) for _ in range(2)]
    for at in sessions:
        at.session_state["corpus_name"] = "the room's sample"
        at.session_state["corpus_text"] = corpus
        at.switch_page("app_pages/learn_bpe.py")
    threads = [threading.Thread(target=at.run) for at in sessions]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 120
    while not any(users == 2 for _, users in cache._training._locks.values()):
        assert time.monotonic() < deadline, "the second session never waited for the first's training"
        time.sleep(0.05)
    release.set()
    for t in threads:
        t.join(120)
    assert len(made) == 1
    for at in sessions:
        assert not at.exception, [e.message for e in at.exception]
        assert at.session_state["corpus_text"] == corpus
