"""``python -m core.lessons check`` refuses each kind of contradiction an attendee met between a
station's words and its tool (``core.lessons.agreement``): one test a kind, each on a copy of a
shipped station with the contradiction put back, and the shipped station passing the same rule."""

from pathlib import Path

import pytest

from core.lessons import Answer, Given, hint, load_path
from core.lessons.agreement import plain_text_problems, unseen_problems
from core.lessons.check import check_station
from tests.conftest import shared_path
from tests.lessons.test_content import GOOD

LESSONS = Path(__file__).resolve().parents[2] / "lessons"


def station(tmp_path: Path, name: str, text: str):
    """The one station of a folder holding ``text`` as ``name``."""
    folder = tmp_path / "lessons"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    [found] = [s for s in load_path(folder).stations if s.file.endswith(name)]
    return found


def problems(tmp_path: Path, name: str, text: str) -> list[str]:
    return check_station(station(tmp_path, name, text), tmp_path / "runs")[1]


def shipped(name: str) -> str:
    return (LESSONS / name).read_text(encoding="utf-8")


def test_an_answer_its_tool_states_otherwise_is_refused(tmp_path):
    """The script station ranked emoji with the scripts while Compare tokenizers left them out."""
    text = shipped("05_languages.toml")
    assert not problems(tmp_path, "05_languages.toml", text)
    with_emoji = text.replace('args = { tokenizer = "cl100k_base", leave_out = ["Emoji & symbols"] }',
                              'args = { tokenizer = "cl100k_base", leave_out = [] }')
    assert with_emoji != text
    with_emoji = with_emoji.replace('"Latin",', '"Latin", "Emoji & symbols",')
    found = problems(tmp_path, "05_languages.toml", with_emoji)
    stated = "but the tool (compare_tokenizers) states 'Han (Chinese, Japanese)'"
    assert any(stated in p for p in found), found


def test_a_character_never_seen_is_not_one_token_under_bytes(tmp_path):
    claim = GOOD.replace('text = "Two sentences. Here."',
                         'text = "A character it never saw counts as one token. Here."')
    assert not [p for p in problems(tmp_path, "01_a.toml", claim) if "never seen" in p]
    as_bytes = claim.replace('variant = "word", merges = 10', 'variant = "byte", merges = 10')
    assert any("text says a character never seen is one token" in p
               for p in problems(tmp_path, "02_b.toml", as_bytes))


def test_the_language_caption_follows_the_tokenizer_s_variant():
    from core import BPETokenizer
    from ui.views.insights_view import unseen_note

    for variant in ("char", "byte"):
        tok = BPETokenizer.from_text("the cat sat on the mat", 3, variant=variant)
        assert not unseen_problems(unseen_note(tok), variant)
    assert unseen_problems("Yours counts a character it never saw as one token.", "byte")


def test_a_term_the_feedback_uses_is_defined_in_the_station_s_text(tmp_path):
    text = shipped("09_what_a_language_pays.toml")
    assert not [p for p in problems(tmp_path, "09_x.toml", text) if "never defines" in p]
    undefined = text.replace("other languages pay a *premium*,\ntheir tokens over English's,",
                             "other languages pay more,")
    assert undefined != text
    assert any("use 'premium', which the station's text never defines" in p
               for p in problems(tmp_path, "09_x.toml", undefined))


def test_ordered_choices_get_a_hint_for_each_side(tmp_path):
    text = shipped("08_vocabulary_size.toml")
    assert not [p for p in problems(tmp_path, "08_x.toml", text) if "question.hint" in p]
    one_hint = text.split("hint.lower")[0] + 'hint = "Think of how often it sees each token."\n' + \
        text[text.index("[tool]"):]
    assert any("question.hint is one text for wrong answers below and above" in p
               for p in problems(tmp_path, "08_x.toml", one_hint))
    # and the page tells each wrong answer the way the answer lies
    sweep = station(tmp_path, "08_x.toml", text)
    answer = Answer("512", {"table": "", "best": "512", "best_bpc": "2.0", "share": "9%"})
    assert "think smaller" in hint(sweep, answer, Given("1024"))
    assert "Think larger" in hint(sweep, answer, Given("320"))


def test_a_tool_opens_on_a_corpus_where_its_page_means_something(tmp_path):
    shared_path("corpora", "tinyshakespeare.txt")
    text = shipped("09_what_a_language_pays.toml")
    assert not [p for p in problems(tmp_path, "09_x.toml", text) if "vocabulary curve stops" in p]
    no_corpus = "\n".join(line for line in text.splitlines() if not line.startswith("params ="))
    found = problems(tmp_path, "09_x.toml", no_corpus)
    assert any("the tool's vocabulary curve stops at 265 tokens of the 1,024" in p for p in found), found


@pytest.mark.parametrize("text, markdown, expected", [
    ("press *Train small GPTs at these sizes* (once)", False,
     "has Markdown ('*Train small GPTs at these sizes*')"),
    ("press “Train small GPTs at these sizes” (once)", False, None),
    ("at 320, 512, 1024 tokens", True, "writes 1024 without thousands separators"),
    ("at 320, 512 and 1,024 tokens; 366,432 parameters; GPT-4 cuts 2024 as 202 · 4", True, None),
])
def test_plain_text_has_no_markdown_and_figures_their_separators(text, markdown, expected):
    found = plain_text_problems("where", text, markdown)
    assert (expected is None and not found) or any(expected in p for p in found), found


def test_the_sweep_station_s_message_while_not_ready_is_plain_text(tmp_path):
    shared_path("corpora", "tinyshakespeare.txt")
    found = problems(tmp_path, "08_x.toml", shipped("08_vocabulary_size.toml"))
    assert not found, found
