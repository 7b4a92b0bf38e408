"""The room's GPT runs as finished run folders (status, metrics, config), written where
``core.lessons.room_runs`` looks for them (the char vs BPE station's two) and where a launch of the
vocabulary station's sweep finds them (``core.insights.sweep.room_sweep``), so both stations can
be answered without training a model."""

from pathlib import Path

from core.atomic import write_json
from core.runfolder.layout import CONFIG_FILE, METRICS_FILE, append_jsonl
from core.runfolder.status import write_status
from core.lessons import load_path
from core.lessons.room_runs import run_paths

GPT_STATION = "07_char_vs_bpe_gpt"
VOCABULARY_STATION = "08_vocabulary_size"


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


def finished_sweep_runs(runs_dir: Path, bpc: dict[int, float] | None = None,
                        status: str = "finished") -> None:
    """The vocabulary station's sweep as run folders under the room (``status``, with these final
    bits per character by size), each with the identity a launch of it would have."""
    from core.gpt.config import make_config  # torch
    from core.gpt.device import detect_device
    from core.insights.sweep import SEED, run_name, sweep_tokenizers
    from core.room.identical import run_identity, write_identity

    bpc = bpc or {320: 2.31, 512: 2.22, 1024: 2.40}
    data = load_path().station(VOCABULARY_STATION).data(runs_dir)
    config = make_config("quick", seed=SEED)
    text = data.text()
    for size, tok in sweep_tokenizers(text, bpc).items():
        folder = runs_dir / "room" / run_name(text, size, "quick")
        folder.mkdir(parents=True)
        write_identity(folder, run_identity(text, tok, config.to_dict(), detect_device(config.device)))
        write_json(folder / CONFIG_FILE, {"n_params": 300_000 + 96 * size, "model_config": {"n_embd": 96}})
        for step in (150, 300):
            append_jsonl(folder / METRICS_FILE, {"step": step, "elapsed_s": step * 0.1,
                                                 "val_bpc": bpc[size]})
        write_status(folder, status, max_steps=300)
