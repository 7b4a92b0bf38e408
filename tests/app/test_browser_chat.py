"""Chat templates in a real Chromium, 1400 and 800 px wide, light and dark: the opening
conversation drawn by every model with its template's tokens in their own style, both charts drawn
and every model named in them, nothing the page shows cut short; screenshots
(``chat_<width>_<theme>.png`` in ``shots_dir``)."""

import pytest

from core.chat import CHAT_MODELS
from test_browser import NAVIGATION_MS, charts_drawn, chromium_context, drawn, idle, serve
from test_browser_800 import CHART_LABELS, CUT

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("runs")) as url, chromium_context() as new_context:
        yield url, new_context


@pytest.mark.parametrize("width", [1400, 800])
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_chat_page_reads_whole_in_both_themes(site, shots_dir, width, theme):
    from playwright.sync_api import expect

    url, new_context = site
    pg = new_context().new_page()
    pg.set_viewport_size({"width": width, "height": 3200})
    pg.emulate_media(color_scheme=theme)
    pg.goto(url + "/chat")
    main = pg.locator('[data-testid="stMainBlockContainer"]')
    expect(main.get_by_role("heading", name="Chat templates")).to_be_visible(timeout=NAVIGATION_MS)
    drawn(pg)  # no widget still a placeholder: what is measured below is what a person sees
    charts_drawn(pg)
    for model in CHAT_MODELS.values():  # each rendering, named for a screen reader
        expect(main.get_by_role("region", name=f"The conversation as {model.label} reads it")).to_be_visible()
    dashed = main.locator('.tok[style*="dashed"]')
    assert dashed.count() > 0 and "<|start_header_id|>" in main.inner_text()
    assert main.evaluate(CUT) == []
    # "What it costs": every column in sight, none past the column's edge
    costs = main.locator(".st-key-figures_chat_costs table")
    assert costs.evaluate("t => t.getBoundingClientRect().right <= "
                          "t.closest('[data-testid=stMainBlockContainer]').getBoundingClientRect().right")
    for chart in main.evaluate(CHART_LABELS):  # each chart names every model it draws
        assert all(model.label in " ".join(chart) for model in CHAT_MODELS.values()), chart
    pg.screenshot(path=str(shots_dir / f"chat_{width}_{theme}.png"))
    assert pg.dialogs == []


def test_the_tools_stay_open_while_messages_are_added_above_them(site):
    """Adding a message moves the tools' expander down the page: it stays as the attendee left it."""
    from playwright.sync_api import expect

    url, new_context = site
    pg = new_context().new_page()
    pg.set_viewport_size({"width": 1400, "height": 2400})
    pg.goto(url + "/chat")
    main = pg.locator('[data-testid="stMainBlockContainer"]')
    expect(main.get_by_role("heading", name="Chat templates")).to_be_visible(timeout=NAVIGATION_MS)
    idle(pg)
    main.get_by_text("Tools the model may call (JSON Schema functions)").click()
    tools = main.get_by_label("Tool definitions")
    expect(tools).to_be_visible()
    main.get_by_role("button", name="Add a message").click()
    expect(main.get_by_label("Message 5", exact=True)).to_be_visible(timeout=NAVIGATION_MS)
    idle(pg)
    expect(tools).to_be_visible()
