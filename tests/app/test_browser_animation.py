"""A real Chromium plays the Learn BPE animation on a 100 KB corpus: the merges shown per second
reach the chosen rate, Pause stops on the merge shown when it was clicked, and the step shown
never runs backwards.

The page's "Merges done" slider is sampled in the browser on every animation frame, so the rate is
what a person sees, not what the server computes.
"""

import pytest

from test_browser import chromium_context, idle, serve
from ui.samples import python_docs_corpus

pytestmark = pytest.mark.browser

SLIDER_JS = """document.querySelector('input[type="range"][aria-label="Merges done"]')"""
# Records (time in ms, step shown) whenever the shown step changes, and the step shown at the
# moment a Pause button is pressed (capture phase: before the app reacts to the click).
RECORDER = """() => {
  window.__steps = []; window.__paused_at = null;
  const read = () => {
    const s = %s;
    return s ? Number(s.value) : null;
  };
  const tick = () => {
    const v = read(), last = window.__steps[window.__steps.length - 1];
    if (v !== null && (!last || last[1] !== v)) window.__steps.push([performance.now(), v]);
    requestAnimationFrame(tick);
  };
  document.addEventListener('pointerdown', (e) => {
    const b = e.target.closest('button');
    if (b && b.innerText.includes('Pause')) window.__paused_at = read();
  }, true);
  requestAnimationFrame(tick);
}""" % SLIDER_JS


def paste_long(pg, text: str) -> None:
    """``paste_corpus`` for a long text: typing 100 KB key by key is too slow, so the value is set
    at once (as a paste does) and sent with Ctrl+Enter."""
    box = pg.get_by_role("textbox", name="Or paste your own text")
    box.evaluate("""(el, text) => {
      const set = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set;
      set.call(el, text); el.dispatchEvent(new Event('input', {bubbles: true}));
    }""", text)
    box.press("Control+Enter")


def shown_step(pg) -> int:
    return int(pg.evaluate(f"{SLIDER_JS}.value"))


def choose_speed(pg, speed: int) -> None:
    thumb = pg.locator('input[type="range"][aria-label="Play speed (merges per second)"]')
    for _ in range(10):
        shown = int(thumb.get_attribute("aria-valuetext"))
        if shown == speed:
            return
        thumb.press("ArrowRight" if shown < speed else "ArrowLeft")
        idle(pg)
    raise AssertionError(f"could not choose play speed {speed}")


@pytest.mark.skip(reason="issue 11, open: Play is a server rerun per merge and the browser redraws the "
                         "whole step; measured under 1-2 merges/s on a 100 KB corpus (the target is the "
                         "chosen rate, up to 20/s). Remove this mark with the client-side animation.")
@pytest.mark.parametrize("speed", [5, 20])
def test_play_reaches_the_chosen_rate_and_pause_is_exact(tmp_path, shots_dir, speed):
    with serve(tmp_path) as url, chromium_context() as new_context:
        pg = new_context().new_page()
        pg.goto(url)
        pg.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
        paste_long(pg, python_docs_corpus(100_000))
        pg.get_by_text("Merges done").wait_for(timeout=120_000)
        # the 100 KB corpus gets 300 merges by default: wait until the slider reaches that far
        pg.wait_for_function(f"{SLIDER_JS}?.max === '300'", timeout=120_000)
        idle(pg)
        choose_speed(pg, speed)
        pg.evaluate(RECORDER)
        pg.get_by_role("button", name="▶ Play").click()
        # measure over 3 s of play worth of merges, with a bound far above it
        want = 3 * speed
        pg.wait_for_function(f"window.__steps.length && window.__steps[window.__steps.length - 1][1] >= {want}",
                             timeout=60_000)
        pg.get_by_role("button", name="⏸ Pause").click()
        idle(pg)
        paused_at = pg.evaluate("window.__paused_at")
        steps = pg.evaluate("window.__steps")
        pg.screenshot(path=str(shots_dir / f"learn_play_{speed}.png"))
        shown = [s for _, s in steps]
        assert shown == sorted(shown), f"the step ran backwards: {shown}"
        # the rate from the first merge shown after Play to the last one counted
        playing = [(t, s) for t, s in steps if s >= 1]
        (t0, s0), (t1, s1) = playing[0], next(p for p in playing if p[1] >= want)
        rate = (s1 - s0) / ((t1 - t0) / 1000)
        print(f"speed {speed}: {rate:.1f} merges/s shown; paused at {paused_at}, ended at {shown_step(pg)}")
        assert rate >= speed * 0.9, f"played {rate:.1f} merges/s at speed {speed}"
        assert shown_step(pg) == paused_at
