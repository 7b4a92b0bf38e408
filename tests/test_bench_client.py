"""The benchmarks' websocket client asks what a browser asks: it keeps the large elements the server
marks cacheable, names them in each rerun, reads a reference as the element it names, and forgets
what a reload or ``maxCachedMessageAge`` runs without use forget in Streamlit's frontend; and, as the
frontend, stops sending a widget's value once a page's run no longer draws that widget."""

from __future__ import annotations

import asyncio
import sys

from conftest import ROOT
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

sys.path.insert(0, str(ROOT / "bench"))
from streamlit_client import Session  # noqa: E402

BIG, SMALL = "big-step-view", "small-caption"


class FakeSocket:
    """Serves each rerun the messages the test gives, records what the client sent."""

    def __init__(self, runs: list[list[ForwardMsg]]):
        self.runs, self.sent, self.queue = runs, [], []

    async def send(self, data: bytes) -> None:
        msg = BackMsg()
        msg.ParseFromString(data)
        self.sent.append(msg)
        self.queue = [m.SerializeToString() for m in self.runs.pop(0)]

    async def recv(self) -> bytes:
        return self.queue.pop(0)

    async def close(self) -> None:
        pass


def element(hash_: str, body: str, index: int, cacheable: bool) -> ForwardMsg:
    msg = ForwardMsg(hash=hash_)
    msg.metadata.cacheable = cacheable
    msg.metadata.delta_path.extend([0, index])
    msg.delta.new_element.markdown.body = body
    return msg


def reference(hash_: str, index: int) -> ForwardMsg:
    msg = ForwardMsg(ref_hash=hash_)
    msg.metadata.delta_path.extend([0, index])
    return msg


def finished() -> ForwardMsg:
    msg = ForwardMsg()
    msg.script_finished = ForwardMsg.FINISHED_SUCCESSFULLY
    return msg


def run_all(session: Session, reruns: int) -> None:
    async def go():
        for _ in range(reruns):
            await session.rerun()
    asyncio.run(go())


def test_a_rerun_names_the_kept_element_and_reads_its_reference_as_the_element():
    first = [element(BIG, "the step view", 1, True), element(SMALL, "a caption", 2, False), finished()]
    again = [reference(BIG, 3), element(SMALL, "a caption", 2, False), finished()]
    socket = FakeSocket([first, again])
    s = Session("http://127.0.0.1:1", _ws=socket)
    run_all(s, 2)
    assert list(socket.sent[0].rerun_script.cached_message_hashes) == []
    assert list(socket.sent[1].rerun_script.cached_message_hashes) == [BIG]  # the small one is not kept
    shown = {e.path: e.proto.body for e in s.shown()}
    assert shown == {(0, 3): "the step view", (0, 2): "a caption"}  # at the reference's place


def test_an_element_unused_for_more_runs_than_the_servers_age_is_forgotten():
    runs = [[element(BIG, "the step view", 1, True), finished()]] + [[finished()] for _ in range(4)]
    socket = FakeSocket(runs)
    s = Session("http://127.0.0.1:1", _ws=socket)
    run_all(s, 5)  # used in run 1; the server's default age is 2 runs
    named = [list(m.rerun_script.cached_message_hashes) for m in socket.sent]
    assert named == [[], [BIG], [BIG], [], []]


def test_a_reload_starts_with_no_kept_element():
    s = Session("http://127.0.0.1:1", _ws=FakeSocket([[element(BIG, "the step view", 1, True), finished()]]))
    run_all(s, 1)
    assert list(s.cached) == [BIG]

    async def reload():
        s.connect = lambda: asyncio.sleep(0)  # the same fake socket serves the reloaded page's run
        s._ws.runs.append([finished()])
        await s.reload()
    asyncio.run(reload())
    assert list(s._ws.sent[-1].rerun_script.cached_message_hashes) == []


def box(widget_id: str, index: int) -> ForwardMsg:
    msg = ForwardMsg()
    msg.metadata.delta_path.extend([1, index])
    msg.delta.new_element.text_area.id = widget_id
    msg.delta.new_element.text_area.label = "Or paste your own text"
    return msg


def test_a_pasted_value_is_sent_while_its_box_is_drawn_and_not_after_the_app_replaced_the_box():
    runs = [[box("paste-1", 0), finished()], [box("paste-1", 0), finished()],
            [box("paste-2", 0), finished()], [box("paste-2", 0), finished()]]
    socket = FakeSocket(runs)
    s = Session("http://127.0.0.1:1", _ws=socket)
    run_all(s, 1)
    s.keep("Or paste your own text", string_value="8 MB of text")
    run_all(s, 3)
    sent = [[(w.id, w.string_value) for w in m.rerun_script.widget_states.widgets] for m in socket.sent]
    assert sent == [[], [("paste-1", "8 MB of text")], [("paste-1", "8 MB of text")], []]
