"""In a real browser against a real ``streamlit run``: an attendee who uploads a large corpus sees
the training's progress at once and then the step view, while another attendee's fresh tab opens
Learn BPE meanwhile (the training runs in the room's job engine, not on the server's threads)."""

import random
import time

import pytest

from test_browser import chromium_context, idle, serve

pytestmark = pytest.mark.browser


def big_corpus(chars: int = 300_000) -> str:
    """Words of a made-up language: thousands of distinct words, many merges to learn."""
    rng = random.Random(11)
    words = ["".join(rng.choice("abcdefghijklmnoprstuvwyz") for _ in range(rng.randint(2, 9)))
             for _ in range(3000)]
    return " ".join(rng.choice(words) for _ in range(chars // 5))[:chars]


def upload_corpus(pg, name: str, text: str) -> None:
    """Upload ``text`` as a file (pasting 300 KB into a text box takes Chromium minutes here)."""
    pg.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        files=[{"name": name, "mimeType": "text/plain", "buffer": text.encode()}])


def test_a_large_upload_shows_progress_and_another_tab_is_served_meanwhile(tmp_path, shots_dir):
    from playwright.sync_api import expect

    with serve(tmp_path / "runs") as url, chromium_context() as new_context:
        heavy = new_context().new_page()
        heavy.goto(f"{url}/learn_bpe")
        expect(heavy.get_by_text("Merge 1:", exact=False).first).to_be_visible(timeout=120_000)
        pasted = time.monotonic()
        upload_corpus(heavy, "big.txt", big_corpus())
        progress = heavy.get_by_text("Training char BPE", exact=False).first
        expect(progress).to_be_visible(timeout=60_000)
        shown_after = time.monotonic() - pasted
        heavy.screenshot(path=str(shots_dir / "heavy_job_progress.png"))

        calm = new_context().new_page()  # another attendee, on the default sample
        opened = time.monotonic()
        calm.goto(f"{url}/learn_bpe")
        expect(calm.get_by_text("Merge 1:", exact=False).first).to_be_visible(timeout=120_000)
        calm_s = time.monotonic() - opened
        still_training = progress.is_visible()

        expect(heavy.get_by_text("Merge 1:", exact=False).first).to_be_visible(timeout=600_000)
        idle(heavy)
        heavy.screenshot(path=str(shots_dir / "heavy_job_done.png"))
        print(f"progress shown {shown_after:.1f} s after the upload; the calm tab's step view in "
              f"{calm_s:.1f} s, the heavy training {'still running' if still_training else 'done'}")
        assert heavy.dialogs == [] and calm.dialogs == []
