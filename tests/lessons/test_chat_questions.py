"""The chat templates station (core.lessons.chat_questions): its answer is the format that adds more
template tokens as core.chat counts them (GPT-OSS's checked against openai-harmony in tests/chat),
its feedback names the tokens each format writes, and bad arguments are named."""

import pytest

from core.chat import CHAT_MODELS, chat_tokenizer, count_chat
from core.chat.conversation import SAMPLE_MESSAGES
from core.lessons import COMPUTATIONS, LessonError, StationData, compute_answer, hint, load_path, read_given

STATION = load_path().station("13_chat_templates")


def test_the_answer_is_the_format_that_adds_more_template_tokens():
    answer = compute_answer(STATION)
    names = STATION.question.args["models"]
    counts = {n: count_chat(CHAT_MODELS[n], chat_tokenizer(n), SAMPLE_MESSAGES) for n in names}
    assert answer.value == max(names, key=lambda n: counts[n].template_tokens)
    first, second = (counts[n] for n in names)
    assert (answer.facts["first_template"], answer.facts["second_template"]) == (
        f"{first.template_tokens:,}", f"{second.template_tokens:,}")
    assert answer.facts["first_user"] == "<|start|> · user · <|message|> · <|end|>"
    assert answer.facts["second_user"] == "<|start_header_id|> · user · <|end_header_id|> · ↵↵ · <|eot_id|>"


def test_a_wrong_prediction_s_hint_names_the_template_s_tokens():
    answer = compute_answer(STATION)
    other = next(v for v in STATION.question.choices if v != answer.value)
    assert "<|start_header_id|>" in hint(STATION, answer, read_given(STATION, other))


def test_models_without_a_chat_format_are_named():
    with pytest.raises(LessonError, match="args.models must be two of"):
        COMPUTATIONS["costlier_template"].run(StationData(args={"models": ["gpt2", "llama3"]}))
