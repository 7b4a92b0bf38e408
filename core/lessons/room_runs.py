"""The room's two GPT runs (the char vs BPE station): trained once for everyone, not once per
attendee, and the answer read from their own metrics.

The runs belong to :data:`ROOM_OWNER`, an owner id no attendee can have (the app's ids are 16-64
characters), and are shared, so every attendee sees them read-only on Train a GPT and only the
instructor can stop or delete them.  They train the station's corpus with fixed settings (its
``preset`` and ``steps``, one seed): one run reads characters, the other the BPE tokenizer the
station's tool settings give.  :func:`start_room_runs` launches whichever is missing through
``core.room.runs.launch_run`` (two attendees starting them at once still get one run each), and
records where each run is, so a launcher that hands back an existing identical run elsewhere is
followed too.

``room_bpc`` answers "which reaches fewer bits per character?" from the last evaluation of both
runs once both have finished; until then it raises :class:`AnswerNotReady` saying how far they are.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from ..atomic import atomic_write
from ..gpt.config import make_config
from ..room import (ROOM_OWNER, SERVER, RunInfo, RunStatus, default_runs_dir, is_run, launch_run, locked,
                     read_metrics, run_info, set_shared)
from ..settings import ServerSettings
from .computations import Answer, StationData, computation
from .errors import AnswerNotReady
from .progress import FOLDER, LOCK

KINDS = {"char": "characters", "bpe": "BPE"}
RECORD = ".room-runs.json"   # in the progress folder: station -> {kind: run folder, relative}
SEED = 1337


def _runs_dir(data: StationData) -> Path:
    return Path(data.runs_dir or default_runs_dir()).absolute()


def _record_file(runs_dir: Path) -> Path:
    return runs_dir / FOLDER / RECORD


def _recorded(runs_dir: Path) -> dict:
    try:
        data = json.loads(_record_file(runs_dir).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def run_paths(data: StationData) -> dict[str, Path]:
    """Where the station's two runs are: as recorded at launch, else their names under the room."""
    runs_dir = _runs_dir(data)
    recorded = _recorded(runs_dir).get(data.station, {})
    return {kind: runs_dir / recorded.get(kind, f"{ROOM_OWNER}/{data.station}-{kind}") for kind in KINDS}


def room_runs(data: StationData) -> dict[str, RunInfo | None]:
    """The station's two runs as they are now (``None``: not launched)."""
    return {kind: run_info(path) if is_run(path) else None for kind, path in run_paths(data).items()}


def room_config(data: StationData):
    """The station's runs' settings: its preset and steps, one seed for the room."""
    return make_config(str(data.args.get("preset", "quick")), max_steps=int(data.args.get("steps", 300)),
                       seed=SEED)


def start_room_runs(data: StationData, settings: ServerSettings | None = None) -> dict[str, RunInfo]:
    """Launch the runs that are missing (queued; the scheduler trains them), shared with the room."""
    runs_dir = _runs_dir(data)
    settings = settings or ServerSettings.from_env()
    settings = replace(settings, max_runs_per_owner=max(len(KINDS), settings.max_runs_per_owner))
    text, config, launched = data.text(), room_config(data), {}
    for kind, path in run_paths(data).items():
        if is_run(path):
            launched[kind] = run_info(path)
            continue
        # None: launch_run's characters; BPE learned from the training part only, as the model is
        tokenizer = data.training_part_tokenizer() if kind == "bpe" else None
        try:
            info = launch_run(config, path.name, runs_dir, owner=ROOM_OWNER, text=text, tokenizer=tokenizer,
                              settings=settings)
        except ValueError:
            if not is_run(path):  # not another attendee's launch of the same run a moment ago
                raise
            info = run_info(path)
        launched[kind] = set_shared(info.path, SERVER, True)
        _remember(runs_dir, data.station, kind, info.path)
    return launched


def _remember(runs_dir: Path, station: str, kind: str, path: Path) -> None:
    folder = runs_dir / FOLDER
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    with locked(folder / LOCK):
        record = _recorded(runs_dir)
        record.setdefault(station, {})[kind] = str(path.relative_to(runs_dir))
        with atomic_write(_record_file(runs_dir)) as f:
            json.dump(record, f)


def progress_line(runs: dict[str, RunInfo | None]) -> str:
    """Where the runs are, in one line: "characters: step 120 of 400 (running); BPE: queued"."""
    def one(kind: str, run: RunInfo | None) -> str:
        if run is None:
            return f"{KINDS[kind]}: not started"
        if run.status in (RunStatus.RUNNING, RunStatus.STARTING, RunStatus.FINISHED):
            return f"{KINDS[kind]}: step {run.step:,} of {run.max_steps or 0:,} ({run.status})"
        return f"{KINDS[kind]}: {run.status}"
    return "; ".join(one(kind, run) for kind, run in runs.items())


def _final_bpc(run: RunInfo) -> float:
    evals = [r for r in read_metrics(run.path) if "val_bpc" in r]
    if not evals:
        raise AnswerNotReady(f"The room's run {run.name} finished without an evaluation.")
    return float(evals[-1]["val_bpc"])


@computation("choice", ("char_bpc", "bpe_bpc", "steps", "held_out_chars_per_token", "runs"),
             {"preset": str, "steps": int}, needs=("corpus", "variant", "merges", "marker", "split"),
             live=True)
def room_bpc(data: StationData) -> Answer:
    """Which of the room's two GPTs (characters, BPE) ends with fewer validation bits per character."""
    runs = room_runs(data)
    if any(run is None for run in runs.values()):
        raise AnswerNotReady("The room's two models are not trained yet: start them from this station "
                             "(once for everyone).")
    failed = [run for run in runs.values() if run.status in (RunStatus.FAILED, RunStatus.STOPPED)]
    if failed:
        what = RunStatus.FAILED if failed[0].status == RunStatus.FAILED else "was stopped"
        raise AnswerNotReady(f"The room's run {failed[0].name} {what}: the instructor can resume it on "
                             f"Train a GPT, or delete it there so that it is trained again from here.")
    if any(run.status != RunStatus.FINISHED for run in runs.values()):
        raise AnswerNotReady(f"The room's models are still training ({progress_line(runs)}). Your "
                             f"prediction can be checked when both have finished.")
    bpc = {kind: _final_bpc(run) for kind, run in runs.items()}
    return Answer(min(bpc, key=bpc.get), {
        "char_bpc": f"{bpc['char']:.3f}", "bpe_bpc": f"{bpc['bpe']:.3f}",
        "steps": f"{runs['char'].step:,}",
        "held_out_chars_per_token": f"{float(runs['bpe'].config.get('chars_per_token', 1.0)):.2f}",
        "runs": ", ".join(run.name for run in runs.values())})
