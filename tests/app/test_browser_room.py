"""A workshop room in a real Chromium: three people, three browser contexts, one server.

Alice and Bob each train a run; Bob cannot see Alice's run until she shares it, and then only
read-only (no Stop); the instructor, with the key the server was started with, sees and stops both.
"""

import re

import pytest

from test_browser import chromium_context, idle, paste_corpus, serve

pytestmark = pytest.mark.browser

KEY = "room-key-for-the-test"
ALICE, BOB, CAROL = "alice-aaaaaaaaaaaaaaaa", "bob-bbbbbbbbbbbbbbbbbb", "carol-cccccccccccccccc"
CORPUS = "\n".join(f"line {i}: the quick brown fox jumps over the lazy dog" for i in range(120))
STARTED = re.compile(r"step [1-9][\d,]* / 20,000")


def open_train_page(context, url: str, owner: str):
    from playwright.sync_api import expect

    pg = context.new_page()
    pg.goto(f"{url}/train_gpt?u={owner}")
    expect(pg.get_by_role("heading", name="Train a GPT")).to_be_visible(timeout=60_000)
    return pg


def launch(pg, run_name: str) -> None:
    """Paste a corpus, ask for a long run, launch it and wait until it trains."""
    from playwright.sync_api import expect

    paste_corpus(pg, CORPUS)
    expect(pg.get_by_text(f"{len(CORPUS):,} characters", exact=False)).to_be_visible(timeout=30_000)
    for label, value in (("Steps", "20000"), ("Run name", run_name)):
        type_until_kept(pg, label, value)
    pg.get_by_role("button", name="Launch").click()
    # a first evaluation needs the trainer to import torch and compile kernels: slow on a busy machine
    expect(pg.get_by_text(STARTED)).to_be_visible(timeout=300_000)


def type_until_kept(pg, label: str, value: str, tries: int = 5) -> None:
    """Type ``value`` into the box ``label`` until the page keeps it: a value typed while a rerun
    is on its way can be overwritten when that rerun's widgets arrive (seen on a busy machine)."""
    for _ in range(tries):
        idle(pg)
        box = pg.get_by_label(label)
        box.fill(value)
        box.press("Enter")
        idle(pg)
        if pg.get_by_label(label).input_value() == value:
            return
    raise AssertionError(f"{label!r} did not keep {value!r} after {tries} tries")


def pick_run(pg, label_part: str) -> None:
    picker = pg.locator('[data-testid="stSelectbox"]').filter(has_text="Run").first
    idle(pg)
    picker.click()
    pg.get_by_role("option", name=re.compile(re.escape(label_part))).click()


def test_runs_are_private_until_shared_and_the_instructor_manages_all(tmp_path, shots_dir):
    from playwright.sync_api import expect

    env = {"BPE_EXPLORER_INSTRUCTOR_KEY": KEY, "BPE_EXPLORER_MAX_RUNNING": "2"}
    with serve(tmp_path, env) as url, chromium_context() as new_context:
        alice = open_train_page(new_context(), url, ALICE)
        launch(alice, "alice-run")
        bob = open_train_page(new_context(), url, BOB)
        expect(bob.get_by_text("No runs yet", exact=False)).to_be_visible(timeout=30_000)
        launch(bob, "bob-run")
        assert bob.get_by_text("alice-run", exact=False).count() == 0

        idle(alice)
        alice.get_by_text("Share with the room").click()
        expect(alice.get_by_role("switch", name="Share with the room")).to_be_checked(timeout=30_000)
        bob.reload()
        pick_run(bob, "alice-run")
        expect(bob.get_by_text("Shared by another attendee: read-only", exact=False)).to_be_visible(
            timeout=30_000)
        idle(bob)  # the run Bob looked at before may still be on screen until the rerun ends
        expect(bob.get_by_role("button", name="Stop")).to_have_count(0)
        bob.screenshot(path=str(shots_dir / "room_shared_run.png"))

        carol = open_train_page(new_context(), url, CAROL)
        idle(carol)
        carol.get_by_text("Instructor", exact=True).click()
        key = carol.get_by_role("textbox", name="Instructor key")
        key.fill(KEY)
        key.press("Enter")
        expect(carol.get_by_text("Instructor mode: you see", exact=False)).to_be_visible(timeout=30_000)
        for run in ("alice-run", "bob-run"):
            pick_run(carol, run)
            idle(carol)
            carol.get_by_role("button", name="Stop").click()
            expect(carol.get_by_text(re.compile(r"step [\d,]+ / 20,000 · stopped"))).to_be_visible(
                timeout=60_000)
        for page in (alice, bob, carol):
            assert page.dialogs == []
