"""The room's two GPT runs as finished run folders (status, metrics, config), written where
``core.lessons.room_runs`` looks for them, so the char vs BPE station can be answered without
training a model."""

from pathlib import Path

from core.atomic import write_json
from core.room.rundir import CONFIG_FILE, METRICS_FILE, append_jsonl
from core.room.status import write_status
from core.lessons import load_path
from core.lessons.room_runs import run_paths

GPT_STATION = "07_char_vs_bpe_gpt"


def finished_room_runs(runs_dir: Path, char_bpc: float = 2.4, bpe_bpc: float = 2.1,
                       steps: int = 400) -> dict[str, Path]:
    """Both runs finished at ``steps`` with these final bits per character; their folders."""
    data = load_path().station(GPT_STATION).data(runs_dir)
    paths = run_paths(data)
    for kind, bpc in (("char", char_bpc), ("bpe", bpe_bpc)):
        folder = paths[kind]
        folder.mkdir(parents=True)
        write_json(folder / CONFIG_FILE, {"chars_per_token": 1.0 if kind == "char" else 2.3})
        for step, value in ((steps // 2, bpc + 0.5), (steps, bpc)):
            append_jsonl(folder / METRICS_FILE, {"step": step, "elapsed_s": step * 0.1, "train_loss": 1.0,
                                                 "val_bpc": value})
        write_status(folder, "finished", max_steps=steps)
    return paths
