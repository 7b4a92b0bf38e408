"""A real Chromium plays the Learn BPE animation on a 100 KB corpus: the merges shown per second
reach the chosen rate, Pause stops on the merge shown when it was clicked (and the text then is
``core``'s at that step), and the step shown never runs backwards or skips a merge.

The browser plays the merges itself (``ui/views/step_view.py``); its step counter is watched from inside
the page (a ``MutationObserver``: every change, timed when it happens), so the rate is what a
person sees.  The bound comes from the frames measured in the same interval: a merge due at time t
is drawn at the first frame after t, one merge a frame, so the last merge may be as late as the
frames it waited for make it (``soonest_shown``), plus one frame gap for the time it takes to draw
(on a busy machine frames come slower and the bound widens with them).
"""

import pytest

from core import BPETokenizer
from core.bpe.explain import segment, text_window
from test_browser import chromium_page, idle, paste_corpus, serve
from core.samples import python_docs_corpus

pytestmark = pytest.mark.browser

SLIDER = 'input[type="range"][aria-label="Merges done"]'
COUNTER = ".bpe-step"  # the step view, whose data-step is the step shown
PAUSE = '.bpe-step button[data-do="pause"]'
# Records (time in ms, step) at every change of the animation's step counter from the step at
# Play, the times of animation frames, and at a click on Pause (window capture: before the page's
# own listeners) the step the animation shows.
RECORDER = """(before) => {
  if (window.__recorder) window.__recorder();  // one recorder at a time: stop the last test's
  window.__steps = []; window.__frames = []; window.__paused = null;
  let last = before, on = true;
  const watch = new MutationObserver((records) => {
    for (const r of records) {
      if (!r.target.matches || !r.target.matches('%(counter)s')) continue;
      const step = Number(r.target.dataset.step);
      if (step !== last) window.__steps.push([performance.now(), step]);
      last = step;
    }
  });
  watch.observe(document.body, {subtree: true, attributes: true, attributeFilter: ['data-step']});
  const frame = (t) => { if (on) { window.__frames.push(t); requestAnimationFrame(frame); } };
  requestAnimationFrame(frame);
  const click = (e) => {
    if (!e.target.closest || !e.target.closest('%(pause)s')) return;
    window.__paused = {step: Number(document.querySelector('%(counter)s').dataset.step),
      rate: document.querySelector('.bpe-step').dataset.rate};
  };
  window.addEventListener('click', click, true);
  window.__recorder = () => {
    on = false;
    watch.disconnect();
    window.removeEventListener('click', click, true);
  };
}""" % {"counter": COUNTER, "pause": PAUSE}


def paste_long(pg, text: str) -> None:
    """``paste_corpus`` for a long text: typing 100 KB key by key is too slow, so the value is set
    at once (as a paste does) and sent with Ctrl+Enter."""
    box = pg.get_by_role("textbox", name="Or paste your own text")
    box.evaluate("""(el, text) => {
      const set = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set;
      set.call(el, text); el.dispatchEvent(new Event('input', {bubbles: true}));
    }""", text)
    box.press("Control+Enter")


def ids_shown(pg) -> list[int]:
    """The token ids of the text the view shows, once the lines far from the box's view have
    changed too (they change when the browser is idle)."""
    pg.wait_for_function("document.querySelector('.bpe-step').dataset.later !== '1'", timeout=30_000)
    return pg.eval_on_selector_all(".bpe-step .bpe-text .tok", "ts => ts.map((t) => Number(t.dataset.id))")


def choose_speed(pg, speed: int) -> None:
    pg.get_by_role("combobox", name="Play speed (merges per second)").select_option(str(speed))


def core_ids(text: str, merges: int, k: int, **settings) -> list[int]:
    """The ids ``core`` gives the page's window of ``text`` after ``k`` of ``merges`` merges."""
    tok = BPETokenizer.from_text(text, merges, **settings)
    return [t.id for t in segment(tok, text_window(text, 0, 2000), k)]


LONG = python_docs_corpus(100_000)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("runs")) as url, chromium_page(f"{url}/learn_bpe") as pg:
        pg.get_by_role("heading", name="Learn BPE").wait_for(timeout=60_000)
        paste_long(pg, LONG)
        # the 100 KB corpus gets 300 merges by default: wait until the slider reaches that far
        pg.wait_for_function(f"document.querySelector('{SLIDER}')?.max === '300'", timeout=120_000)
        idle(pg)
        yield pg


@pytest.mark.parametrize("speed", [5, 20])
def test_play_reaches_the_chosen_rate_and_pause_is_exact(page, shots_dir, speed):
    from playwright.sync_api import expect

    pg = page
    choose_speed(pg, speed)
    before = int(pg.locator(SLIDER).input_value())
    pg.evaluate(RECORDER, before)
    pg.get_by_role("button", name="▶ Play").click()
    want = 3 * speed  # 3 s of play at the chosen rate
    pg.wait_for_function(f"window.__steps.length && window.__steps.at(-1)[1] >= {before + want}",
                         timeout=120_000)
    pg.locator(PAUSE).click()
    paused = pg.evaluate("window.__paused")
    assert paused is not None, "the click on Pause was not seen"
    # the view stays on exactly the step shown when Pause was clicked, as core computes it
    expect(pg.locator(SLIDER)).to_have_value(str(paused["step"]), timeout=60_000)
    expect(pg.get_by_text(f"Merge {paused['step'] + 1}:", exact=False).first).to_be_visible(timeout=30_000)
    assert ids_shown(pg) == core_ids(LONG, 300, paused["step"]), "the browser's merges differ from core's"
    pg.screenshot(path=str(shots_dir / f"learn_play_{speed}.png"))
    steps, frames = pg.evaluate("window.__steps"), pg.evaluate("window.__frames")
    shown = [s for _, s in steps]
    assert shown == list(range(before + 1, paused["step"] + 1)), \
        f"a step ran backwards or was skipped: {shown}"
    (t0, s0), (t1, s1) = steps[0], next(p for p in steps if p[1] >= before + want)
    gaps = [b - a for a, b in zip(frames, frames[1:]) if t0 <= b <= t1]  # frames up to s1's
    late_ms = max(gaps)
    soonest = soonest_shown(frames, t0, s1 - s0, speed)
    rate = (s1 - s0) / ((t1 - t0) / 1000)
    print(f"speed {speed}: {rate:.2f} merges/s shown over {(t1 - t0) / 1000:.2f} s (the clock's "
          f"{(s1 - s0) / speed:.2f} s, the frames' {(soonest - t0) / 1000:.2f} s), longest frame gap "
          f"{late_ms:.0f} ms (the page says {paused['rate']}); paused at {paused['step']}")
    assert t1 <= soonest + late_ms, \
        f"played {rate:.2f} merges/s at speed {speed} (allowing {late_ms:.0f} ms for one frame)"
    assert pg.dialogs == []


def soonest_shown(frames: list[float], t0: float, merges: int, speed: int) -> float:
    """The first frame at which the page could show ``merges`` more merges than it showed at
    ``t0``: each is due ``1 / speed`` s after the last, and at most one is drawn per frame (so
    every merge is seen), so on a busy machine whose frames come late the page falls behind by
    what those frames lost, and no more."""
    later = iter(f for f in frames if f > t0)
    shown = t0
    for i in range(1, merges + 1):
        due = t0 + i * 1000 / speed
        shown = next((f for f in later if f >= due), shown)
    return shown


def test_byte_tokens_of_one_character_play_under_that_character(page):
    """Greek, Hindi and emoji in the byte variant: the browser draws split characters as the
    server does (one purple outline, the character above its bytes) and merges as the engine."""
    from playwright.sync_api import expect

    pg = page
    pg.get_by_role("radio", name="byte", exact=True).check(force=True)
    text = "Γειά σου κόσμε. नमस्ते दुनिया. 🙂👍 Γειά नमस्ते 🙂👍 " * 3
    paste_corpus(pg, text)
    # the step view of the new text, at its first step (an earlier page can still be on screen)
    expect(pg.locator(".bpe-step .bpe-glyph").first).to_have_text("Γ", timeout=60_000)
    expect(pg.locator(SLIDER)).to_have_value("0", timeout=60_000)
    idle(pg)
    choose_speed(pg, 5)
    pg.evaluate(RECORDER, 0)
    pg.get_by_role("button", name="▶ Play").click()
    pg.wait_for_function("window.__steps.length && window.__steps.at(-1)[1] >= 3", timeout=120_000)
    groups = pg.eval_on_selector_all(".bpe-step .bpe-char .bpe-glyph", "gs => gs.map(g => g.textContent)")
    assert "Γ" in groups and "🙂" in groups
    pg.locator(PAUSE).click()
    paused = pg.evaluate("window.__paused")
    expect(pg.locator(SLIDER)).to_have_value(str(paused["step"]), timeout=60_000)
    merges = int(pg.locator(SLIDER).get_attribute("max"))
    assert ids_shown(pg) == core_ids(text, merges, paused["step"], variant="byte", pattern="gpt2")
