"""The history model: a request carries the fixed part once and every exchange so far."""

from core.chat import CHAT_MODELS, chat_tokenizer, count_chat
from core.chat.conversation import SAMPLE_MESSAGES, SAMPLE_TOOLS
from core.chat.history import Growth


def test_each_request_sends_the_fixed_part_and_every_exchange_so_far():
    growth = Growth(fixed=100, per_request=30)
    assert [growth.sent(t) for t in (1, 2, 3)] == [130, 160, 190]
    assert growth.sent_in_all(3) == 130 + 160 + 190
    assert growth.requests_that_fit(190) == 3 and growth.requests_that_fit(189) == 2
    assert growth.requests_that_fit(129) == 0


def test_the_system_prompt_and_tools_are_fixed_and_the_rest_repeats():
    count = count_chat(CHAT_MODELS["llama3"], chat_tokenizer("llama3"), SAMPLE_MESSAGES, SAMPLE_TOOLS)
    bare = count_chat(CHAT_MODELS["llama3"], chat_tokenizer("llama3"), SAMPLE_MESSAGES)
    growth = Growth.of(count)
    assert growth.sent(1) == count.total
    # Llama writes the tools into a user message, which is not repeated
    assert growth.per_request == Growth.of(bare).per_request
    assert growth.fixed == Growth.of(bare).fixed + count.tools_tokens
