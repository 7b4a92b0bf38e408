"""Start here in a real Chromium: a fresh visitor lands on it, predicts wrong then right at a
station, a second attendee finishes another, and the instructor's room view counts both.
Screenshots of the first view, a station with feedback (also 800 px wide, light and dark) and the
room view go to the ignored ``tests/.screenshots/`` (``--update-screenshots``: ``tests/screenshots/``).
"""

import re

import pytest

from core.lessons.content import load_path
from test_browser import NAVIGATION_MS, chromium_context, idle, serve
from test_browser_room import open_instructor_box

pytestmark = pytest.mark.browser

KEY = "lessons-key-for-the-test"
ALICE, BOB, TEACHER = "alice-aaaaaaaaaaaaaaaa", "bob-bbbbbbbbbbbbbbbbbb", "teacher-tttttttttttttt"


def open_start(context, url: str, owner: str, width: int = 1400, theme: str = "light"):
    """A browser tab at the app's root (``?u=owner``): Start here, its first station drawn."""
    from playwright.sync_api import expect

    pg = context.new_page()
    pg.set_viewport_size({"width": width, "height": 2200})
    pg.emulate_media(color_scheme=theme)
    pg.goto(f"{url}/?u={owner}")
    expect(pg.get_by_role("heading", name="Start here")).to_be_visible(timeout=NAVIGATION_MS)
    expect(pg.get_by_role("button", name="Check my prediction")).to_be_visible(timeout=NAVIGATION_MS)
    idle(pg)
    return pg


def go_to(pg, station: str, heading: str) -> None:
    from playwright.sync_api import expect

    pg.get_by_role("radio", name=station, exact=True).click()  # a pill of the path
    expect(pg.get_by_role("heading", name=heading)).to_be_visible(timeout=60_000)
    idle(pg)


def pick(pg, choice: str) -> None:
    """Choose ``choice`` in the prediction's radio and press Check."""
    label = pg.locator("[data-testid=stRadio] label").filter(has_text=re.compile(f"^{re.escape(choice)}$"))
    label.click()
    idle(pg)
    pg.get_by_role("button", name="Check my prediction").click()
    idle(pg)


def station_box(pg):
    """The station's bordered box."""
    return pg.locator(".st-key-lesson_station_box")


def test_a_room_follows_the_path_and_the_instructor_sees_it(tmp_path, shots_dir):
    from playwright.sync_api import expect

    env = {"BPE_EXPLORER_INSTRUCTOR_KEY": KEY}
    with serve(tmp_path / "runs", env) as url, chromium_context() as new_context:
        alice = open_start(new_context(), url, ALICE)
        stations = len(load_path().stations)  # as many as the lessons folder holds
        expect(alice.get_by_text(f"0 of {stations} stations done")).to_be_visible()
        alice.screenshot(path=str(shots_dir / "start_here.png"))

        go_to(alice, "2 · First merge", "2. The BPE loop, one merge at a time")
        pick(alice, "e + s")
        said = alice.get_by_text("Not quite: you predicted e + s.", exact=False)
        expect(said).to_be_visible(timeout=60_000)
        alice.get_by_role("button", name="Show me the answer").click()
        expect(alice.get_by_text("the first new token is lo.", exact=False)).to_be_visible(timeout=60_000)
        idle(alice)
        station_box(alice).screenshot(path=str(shots_dir / "start_here_feedback.png"))
        pick(alice, "l + o")
        right = alice.get_by_text("Right, once you had seen the answer.", exact=True)
        expect(right).to_be_visible(timeout=60_000)
        expect(alice.get_by_role("radio", name="✓ · First merge")).to_be_visible()
        alice.get_by_role("button", name="Step it in Learn BPE ▶").click()  # the tool, set up
        expect(alice.get_by_role("heading", name="Learn BPE")).to_be_visible(timeout=60_000)
        expect(alice.get_by_text("Merge 1:", exact=False).first).to_contain_text("'l' + 'o'", timeout=60_000)
        assert "corpus=sample%3Alow+lower+newest+widest" in alice.url and "variant=word" in alice.url

        for theme in ("light", "dark"):  # an attendee's laptop: 800 px, either theme
            narrow = open_start(new_context(), url, BOB, width=800, theme=theme)
            go_to(narrow, "3 · New words", "3. Words it never saw")
            pick(narrow, "lowest → low · est</w>; slow → s · low</w>")
            expect(narrow.get_by_text("Not quite", exact=False)).to_be_visible(timeout=60_000)
            idle(narrow)
            wide = narrow.evaluate("document.documentElement.scrollWidth")
            assert wide <= 800, f"the page is {wide} px wide at 800 px ({theme})"
            narrow.screenshot(path=str(shots_dir / f"start_here_800_{theme}.png"))
            narrow.close()

        teacher = open_start(new_context(), url, TEACHER)
        box = open_instructor_box(teacher)
        box.fill(KEY)
        box.press("Enter")
        expect(teacher.get_by_role("heading", name="The room")).to_be_visible(timeout=60_000)
        table = teacher.locator("table").filter(has_text="most common wrong answer")
        row = table.locator("tr").filter(has_text="2. First merge")  # the room view is a fragment:
        expect(row).to_contain_text("0 of 1 (0%)", timeout=60_000)  # it may come a moment later
        expect(row).to_contain_text("e + s (1)")  # Alice: wrong at the first try, then right
        expect(table.locator("tr").filter(has_text="3. New words")).to_contain_text("low · est")  # Bob's
        idle(teacher)
        table.scroll_into_view_if_needed()
        teacher.screenshot(path=str(shots_dir / "start_here_room.png"))
        assert alice.dialogs == [] and teacher.dialogs == []
