"""core.lessons.room_runs: the char vs BPE station's two GPT runs are launched once for the whole
room (shared, owned by the room), really trained by the scheduler, and the answer is read from
their own metrics."""


import pytest

from conftest import wait_for
from core.bpe import BPETokenizer, load_tokenizer
from core.insights.vocab_curve import split_held_out
from core.runfolder.layout import TOKENIZER_FILE
from core.room.queries import list_runs, pid_alive, read_metrics, run_info
from core.room.runs import SERVER, Viewer, launch_run, stop_run
from core.lessons import ROOM_OWNER, StationData, room_runs, start_room_runs
from core.lessons.computations import COMPUTATIONS
from core.lessons.room_runs import room_config
from core.settings import ServerSettings

ALICE = Viewer("alice-0123456789ab")


@pytest.fixture
def runs_dir(tmp_path):
    yield tmp_path
    for run in list_runs(tmp_path):
        if run.status == "queued":
            stop_run(run.path, SERVER)
        elif run.pid and pid_alive(run.pid):
            stop_run(run.path, SERVER, timeout=10)


@pytest.mark.slow
def test_the_room_s_runs_train_once_shared_and_answer_from_their_metrics(runs_dir):
    data = StationData(corpus="sample:python source", variant="char", merges=20, runs_dir=runs_dir,
                       station="07_test", args={"preset": "tiny", "steps": 3})
    strict = ServerSettings(max_runs_per_owner=1, max_running=1)  # the room still gets its two runs
    launched = start_room_runs(data, strict)
    assert set(launched) == {"char", "bpe"}
    assert all(run.owner == ROOM_OWNER and run.shared for run in launched.values())
    everyone_sees = {run.name for run in list_runs(runs_dir, ALICE)}
    assert everyone_sees == {"07_test-char", "07_test-bpe"}
    assert not ALICE.can_manage(launched["char"])  # only the instructor can stop or delete them
    # the BPE model's merges come from the training part alone, as the model is trained on it
    learned = load_tokenizer(launched["bpe"].path / TOKENIZER_FILE)
    trained_part = BPETokenizer.from_text(split_held_out(data.text())[0], 20, variant="char")
    assert learned.merge_triples == trained_part.merge_triples
    assert learned.merge_triples != BPETokenizer.from_text(data.text(), 20, variant="char").merge_triples
    start_room_runs(data, strict)  # a second attendee's click: nothing more is launched
    assert len(list_runs(runs_dir)) == 2
    wait_for(lambda: all(r is not None and r.status == "finished" for r in room_runs(data).values()),
             timeout=300, what="the room's runs finishing")
    runs = room_runs(data)
    assert runs["bpe"].config["vocab_size"] > runs["char"].config["vocab_size"]
    bpc = {kind: [r for r in read_metrics(run.path) if "val_bpc" in r][-1]["val_bpc"]
           for kind, run in runs.items()}
    answer = COMPUTATIONS["room_bpc"].run(data)
    assert answer.value == min(bpc, key=bpc.get)
    assert answer.facts["char_bpc"] == f"{bpc['char']:.3f}" and answer.facts["steps"] == "3"


@pytest.mark.slow
def test_the_room_never_rests_on_an_attendee_s_identical_run(runs_dir):
    """Alice launched the station's very run from Train a GPT before anyone clicked the station's
    button: the room trains its own, and her run stays hers, private, for her alone to stop."""
    data = StationData(corpus="sample:python source", variant="char", merges=20, runs_dir=runs_dir,
                       station="07_test", args={"preset": "tiny", "steps": 3})
    settings = ServerSettings(max_runs_per_owner=2, max_running=1)
    hers = launch_run(room_config(data), "mine", runs_dir, owner=ALICE.owner, text=data.text(),
                      settings=settings)
    launched = start_room_runs(data, settings)
    assert launched["char"].path.parent.name == ROOM_OWNER and launched["char"].path != hers.path
    assert not ALICE.can_manage(launched["char"])
    assert not run_info(hers.path).shared
