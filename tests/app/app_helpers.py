"""What the AppTest files share: the app opened at one of its pages, a text typed in on the way."""

import re
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def open_page(page: str, key: str | None = None, text: str | None = None,
              timeout: int = 60) -> AppTest:
    """The app run at ``app_pages/<page>.py`` (inside its frame), with ``text`` typed into the text
    area ``key`` when given; fails on any exception the page raised."""
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=timeout).run()
    at.switch_page(f"app_pages/{page}.py").run()
    if text is not None:
        box = paste_box(at) if key == "corpus_paste" else at.text_area(key=key)
        box.set_value(text).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def markdown_tables(at: AppTest, area=None) -> list[list[list[str]]]:
    """Every Markdown table of ``area`` (the main area unless given: ``at.sidebar``), as rows of cells
    read as a person does: the header first, without the alignment row, each cell as shown (its
    escapes dropped: ``ui.plumbing.render.markdown_table``)."""
    import html

    tables = []
    for text in (m.value for m in (area or at.main).get("markdown")):
        lines = [line for line in text.splitlines() if line.startswith("|")]  # not show_table's box
        if len(lines) < 2 or not re.fullmatch(r"\|(:?-+:?\|)+", lines[1]):
            continue
        tables.append([[html.unescape(re.sub(r"\\(.)", r"\1", cell)).strip()
                        for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
                       for line in lines[:1] + lines[2:]])
    return tables


def tables_with(at: AppTest, column: str) -> list:
    """The Markdown tables of the main area with ``column``, in page order, each a DataFrame indexed
    by its first column (a tokenizer, a number), each cell as the page shows it."""
    import pandas as pd

    return [pd.DataFrame(rows, columns=header).set_index(header[0])
            for header, *rows in markdown_tables(at) if column in header]


def table_with(at: AppTest, column: str):
    """The first of :func:`tables_with`."""
    found = tables_with(at, column)
    assert found, f"no table with {column!r}"
    return found[0]


def paste_box(at: AppTest):
    """The sidebar's paste box (its key changes each time the server rewrites it)."""
    [box] = [t for t in at.sidebar.text_area if (t.key or "").startswith("corpus_paste_")]
    return box


def step_view(at: AppTest) -> tuple[int, int, dict]:
    """What Learn BPE sends its step view (``ui.views.step_view``): ``(epoch, opening step, payload)``."""
    import json

    from ui.views.step_view import NAME

    [view] = [e for e in at.get("bidi_component") if e.proto.component_name == NAME]
    opening, _key, body = view.proto.bytes.split(b"\n", 2)
    epoch, step = map(int, opening.split())
    return epoch, step, json.loads(body)


JOB_WAIT_S = 120  # a job worker's first start and a large training, on a busy 2-core machine


def progress_texts(at: AppTest) -> list[str]:
    return [p.proto.text for p in at.get("progress")]


def job_progress_texts(at: AppTest) -> list[str]:
    """The progress bars of jobs (``ui.plumbing.heavy_jobs``: each says how long it has waited,
    "(12 s)"), not a page's own (Start here's stations done)."""
    return [t for t in progress_texts(at) if re.search(r"\(\d+ s\)$", t)]


def poll_until_done(at: AppTest) -> None:
    """Rerun the page (what the progress fragment does every half second) until nothing runs."""
    deadline = time.monotonic() + JOB_WAIT_S
    while progress_texts(at) and time.monotonic() < deadline:
        time.sleep(0.2)
        at.run()
    assert not progress_texts(at), progress_texts(at)


def finished_run(runs_dir: Path, owner: str, name: str, started: str, bpc: float,
                 corpus: str | None = None, shared: bool = False) -> Path:
    """A run folder as a finished run leaves it, written by hand (no training needed): its status
    and one evaluated step; with ``corpus``, the corpus copy and a checkpoint file too."""
    import json

    run = runs_dir / owner / name
    run.mkdir(parents=True)
    (run / "status.json").write_text(json.dumps({"status": "finished", "started": started,
                                                 "max_steps": 10, "step": 10}))
    (run / "metrics.jsonl").write_text(json.dumps({
        "step": 10, "train_loss": 2.0, "lr": 1e-3, "tokens_per_s": 1.0, "elapsed_s": 1.0,
        "val_loss": 2.0, "val_bpc": bpc}) + "\n")
    if corpus is not None:
        (run / "corpus.txt").write_text(corpus, encoding="utf-8")
        (run / "ckpt.pt").write_bytes(b"")
    if shared:
        (run / "shared.json").write_text(json.dumps({"shared": True}))
    return run
