"""What one attendee does never becomes what another's page opens on, and each page works on the
attendee's newest corpus: in a real Chromium against a real ``streamlit run``.

- Alice's sweep of small GPTs on a corpus too short for them failed (a run the room shares, left
  as older code left it): Bob, new, opens station 7's tool and lands on the station's runs, never
  on hers, and the room's comparison chart draws none of hers.
- Compare tokenizers, after a paste into the sidebar, compares the pasted text.
"""

import json

import pytest

from test_browser import NAVIGATION_MS, chromium_context, idle, paste_corpus, serve
from test_browser_lessons import BOB, open_start

pytestmark = pytest.mark.browser

ALICE = "alice-aaaaaaaaaaaaaaaa"
FAILED = "vocab-320-quick-0a1b2c3d"


def failed_sweep_run(runs_dir) -> None:
    """Alice's failed sweep run, shared with the room, as a run folder holds it."""
    run = runs_dir / ALICE / FAILED
    run.mkdir(parents=True)
    (run / "status.json").write_text(json.dumps({
        "status": "failed", "started": "2026-11-28T00:00:00", "max_steps": 300, "step": 0,
        "error": "The training part of the corpus is only 11 tokens long; block_size 64 needs at least 65."}))
    (run / "metrics.jsonl").write_text("")
    (run / "shared.json").write_text(json.dumps({"shared": True}))


def test_another_attendee_s_failed_sweep_is_not_what_station_7_opens_on(tmp_path, shots_dir):
    from playwright.sync_api import expect

    runs_dir = tmp_path / "runs"
    failed_sweep_run(runs_dir)
    with serve(runs_dir) as url, chromium_context() as new_context:
        pg = open_start(new_context(), url, BOB)
        pg.goto(f"{url}/?u={BOB}&station=07_char_vs_bpe_gpt")
        open_tool = pg.get_by_role("button", name="Watch them in Train a GPT ▶")
        expect(open_tool).to_be_visible(timeout=NAVIGATION_MS)
        idle(pg)
        open_tool.click()
        expect(pg.get_by_role("heading", name="Train a GPT")).to_be_visible(timeout=NAVIGATION_MS)
        expect(pg.get_by_text("You have no runs yet", exact=False)).to_be_visible(timeout=NAVIGATION_MS)
        idle(pg)
        pg.screenshot(path=str(shots_dir / "station7_tool_for_a_new_attendee.png"))
        assert FAILED not in pg.get_by_role("combobox", name="Run", exact=True).input_value()  # listed only
        assert "Run failed" not in pg.locator("[data-testid=stMain]").inner_text()
        chosen = pg.locator("[data-testid=stMultiSelect]").filter(has_text="Runs").first
        assert FAILED not in chosen.inner_text()


def test_compare_tokenizers_compares_the_text_just_pasted(tmp_path, shots_dir):
    from playwright.sync_api import expect

    pasted = "Pasted for the comparison: tokenizers cut 12345678 and strawberry differently."
    with serve(tmp_path / "runs") as url, chromium_context() as new_context:
        pg = new_context().new_page()
        pg.goto(f"{url}/compare_tokenizers")
        box = pg.get_by_role("textbox", name="Text to compare (pick one above or paste your own)")
        expect(box).not_to_have_value("", timeout=NAVIGATION_MS)  # the built-in multilingual sample
        idle(pg)
        paste_corpus(pg, pasted)
        expect(box).to_have_value(pasted, timeout=NAVIGATION_MS)
        idle(pg)
        expect(pg.get_by_role("combobox", name="Pick a text")).to_have_value("The corpus in the sidebar")
        pg.screenshot(path=str(shots_dir / "compare_tokenizers_after_a_paste.png"))
