"""An app process never loads torch (``core.gpt.machine`` says why): every page opened, a step
timed, a run launched and stopped, a trained run's tokens charted, all in a process of its own
(this test process has torch already)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from app_helpers import ROOT
from core.room.runs import Viewer, list_runs, stop_run

OWNER = "alice-0123456789"
VISIT = """
import sys, time
from pathlib import Path
from streamlit.testing.v1 import AppTest
sys.path.insert(0, "tests/app")
from app_helpers import JOB_WAIT_S, job_progress_texts
from core.room.runs import list_runs

runs_dir, owner = sys.argv[1], sys.argv[2]


def jobs_done(at):
    deadline = time.monotonic() + JOB_WAIT_S
    while job_progress_texts(at) and time.monotonic() < deadline:
        time.sleep(0.2)
        at.run()
    assert not job_progress_texts(at), job_progress_texts(at)


def page(name):
    at = AppTest.from_file("streamlit_app.py", default_timeout=300)
    at.query_params["u"] = owner
    at.session_state["gpt_runs_dir"] = runs_dir
    at.switch_page(f"app_pages/{name}.py").run()
    jobs_done(at)
    assert not at.exception, (name, [e.message for e in at.exception])
    return at


for path in sorted(Path("app_pages").glob("*.py")):
    page(path.stem)
train = page("train_gpt")
train.selectbox(key="gpt_preset").select("custom").run()
for key, value in {"gpt_n_layer": 1, "gpt_n_head": 2, "gpt_n_embd": 32, "gpt_block_size": 16,
                   "gpt_batch_size": 8, "gpt_steps": 20}.items():
    train.number_input(key=key).set_value(value)
train.text_input(key="w_gpt_run_name").input("launched").run()
train.button(key="gpt_estimate").click().run()
assert any("ms per step" in i.value for i in train.info), [i.value for i in train.info]
train.button(key="gpt_launch").click().run()
assert not train.exception, [e.message for e in train.exception]
assert any(r.name == "launched" for r in list_runs(Path(runs_dir))), "launched"
insights = page("insights")
insights.selectbox(key="insights_embedding_run").select("trained").run()
jobs_done(insights)
assert any(c.value.startswith("At step 7:") for c in insights.caption), "the embedding chart"
print("torch" in sys.modules)
"""


@pytest.mark.slow
def test_no_page_loads_torch_into_the_server(tmp_path):
    from tests.insights.test_embeddings import checkpointed_run

    checkpointed_run(tmp_path / OWNER / "trained")
    env = {**os.environ, "BPE_EXPLORER_RUNS_DIR": str(tmp_path)}
    try:
        done = subprocess.run([sys.executable, "-c", VISIT, str(tmp_path), OWNER], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=900)
    finally:  # the launched run trains in the runs folder's engine: stopped, whatever happened
        for run in list_runs(tmp_path):
            if run.active:
                stop_run(run.path, Viewer(OWNER))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-1] == "False", "torch was loaded into the app process"
