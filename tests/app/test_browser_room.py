"""A workshop room in a real Chromium: three people, three browser contexts, one server.

Alice and Bob each train a run on a corpus of their own; Bob cannot see Alice's run until she
shares it, and then only read-only (no Stop); the instructor, with the key the server was started
with, sees and stops both.  Every locator is scoped to the app's main block or its sidebar and
names the app's own labels exactly: Streamlit shows a "Stop" button of its own in the header
while a script runs.  Two runs share the cores with the server, Chromium and this test, so a
page's rerun gets 60 s, twice what it took with two CPU hogs beside everything (why:
docs/benchmarks.md, "Pages while runs fill the cores").
"""

import re

import pytest

from test_browser import NAVIGATION_MS, chromium_context, idle, paste_corpus, serve

pytestmark = [pytest.mark.browser, pytest.mark.slow]

KEY = "room-key-for-the-test"
ALICE, BOB, CAROL = "alice-aaaaaaaaaaaaaaaa", "bob-bbbbbbbbbbbbbbbbbb", "carol-cccccccccccccccc"
STARTED = re.compile(r"step [1-9][\d,]* / 20,000")
STOP = "⏹ Stop training"


def corpus(owner: str) -> str:
    """A corpus of this attendee's own (the same one twice would be the same run, trained once)."""
    return "\n".join(f"{owner[:5]} line {i}: the quick brown fox jumps over the lazy dog" for i in range(120))


def main(pg):
    """The app's own page content (not Streamlit's header, whose Stop button shows during a rerun)."""
    return pg.locator('[data-testid="stMainBlockContainer"]')


def open_train_page(context, url: str, owner: str):
    from playwright.sync_api import expect

    pg = context.new_page()
    pg.goto(f"{url}/train_gpt?u={owner}")
    expect(main(pg).get_by_role("heading", name="Train a GPT")).to_be_visible(timeout=NAVIGATION_MS)
    # the heading comes first; the widgets are grey placeholders until the first run ends
    expect(main(pg).get_by_role("button", name="🚀 Launch", exact=True)).to_be_visible(timeout=NAVIGATION_MS)
    return pg


def launch(pg, owner: str, run_name: str) -> None:
    """Paste a corpus, ask for a long run, launch it and wait until it trains."""
    from playwright.sync_api import expect

    text = corpus(owner)
    paste_corpus(pg, text)
    expect(main(pg).get_by_text(f"{len(text):,} characters", exact=False)).to_be_visible(timeout=60_000)
    for label, value in (("Steps", "20000"), ("Run name", run_name)):
        type_until_kept(pg, label, value)
    main(pg).get_by_role("button", name="🚀 Launch", exact=True).click()
    # a first turn needs a GPT worker to import torch: slow on a busy machine
    expect(main(pg).get_by_text(STARTED)).to_be_visible(timeout=300_000)


def type_until_kept(pg, label: str, value: str, tries: int = 5) -> None:
    """Type ``value`` into the box ``label`` until the page keeps it: a value typed while a rerun
    is on its way can be overwritten when that rerun's widgets arrive (seen on a busy machine)."""
    for _ in range(tries):
        idle(pg)
        box = main(pg).get_by_label(label, exact=True)
        box.fill(value)
        box.press("Enter")
        idle(pg)
        if main(pg).get_by_label(label, exact=True).input_value() == value:
            return
    raise AssertionError(f"{label!r} did not keep {value!r} after {tries} tries")


def open_instructor_box(pg):
    """Open the sidebar's Instructor expander; returns its key box.  A click that lands while a
    rerun redraws the sidebar can be lost (seen on a busy machine), so it clicks again until
    the box shows, never on a box already open."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    sidebar = pg.locator('[data-testid="stSidebar"]')
    key = sidebar.get_by_role("textbox", name="Instructor key", exact=True)
    for _ in range(5):
        idle(pg)
        if key.is_visible():
            return key
        sidebar.get_by_text("Instructor", exact=True).click()
        try:
            key.wait_for(state="visible", timeout=15_000)
            return key
        except PlaywrightTimeout:
            continue
    raise AssertionError("the Instructor box did not open after 5 clicks")


def pick_run(pg, label_part: str) -> None:
    picker = main(pg).locator('[data-testid="stSelectbox"]').filter(has_text="Run").first
    idle(pg)
    picker.click()
    pg.get_by_role("option", name=re.compile(re.escape(label_part))).click()


def test_runs_are_private_until_shared_and_the_instructor_manages_all(tmp_path, shots_dir):
    from playwright.sync_api import expect

    env = {"BPE_EXPLORER_INSTRUCTOR_KEY": KEY, "BPE_EXPLORER_MAX_RUNNING": "2"}
    with serve(tmp_path, env) as url, chromium_context() as new_context:
        alice = open_train_page(new_context(), url, ALICE)
        launch(alice, ALICE, "alice-run")
        bob = open_train_page(new_context(), url, BOB)
        expect(main(bob).get_by_text("No runs yet", exact=False)).to_be_visible(timeout=60_000)
        launch(bob, BOB, "bob-run")
        assert main(bob).get_by_text("alice-run", exact=False).count() == 0

        idle(alice)
        main(alice).get_by_text("Share with the room", exact=True).click()
        share = main(alice).get_by_role("switch", name="Share with the room", exact=True)
        expect(share).to_be_checked(timeout=60_000)
        bob.reload()
        pick_run(bob, "alice-run")
        expect(main(bob).get_by_text("Shared by another attendee: read-only", exact=False)).to_be_visible(
            timeout=60_000)
        idle(bob)  # the run Bob looked at before may still be on screen until the rerun ends
        expect(main(bob).get_by_role("button", name=STOP, exact=True)).to_have_count(0)
        bob.screenshot(path=str(shots_dir / "room_shared_run.png"))

        carol = open_train_page(new_context(), url, CAROL)
        key = open_instructor_box(carol)
        key.fill(KEY)
        key.press("Enter")
        expect(carol.locator('[data-testid="stSidebar"]').get_by_text("Instructor mode: you see", exact=False)
               ).to_be_visible(timeout=60_000)
        for run in ("alice-run", "bob-run"):
            pick_run(carol, run)
            idle(carol)
            main(carol).get_by_role("button", name=STOP, exact=True).click()
            expect(main(carol).get_by_text(re.compile(r"step [\d,]+ / 20,000 · stopped"))).to_be_visible(
                timeout=60_000)
        for page in (alice, bob, carol):
            assert page.dialogs == []
