#!/usr/bin/env bash
# The GPU paths, checked in one call of a lent GPU machine (the device tool): the GPT tests on CUDA,
# what an app process (torch-free) is told about the machine, a run launched as Train a GPT's Launch
# does, then the GPU benchmarks of docs/benchmarks.md.  Each step has its own time limit, so one that
# hangs leaves the others their time; everything is logged under $OUT (or /tmp/gpu-checks).
#
#   bash bench/gpu_checks.sh            # in the repository root; .gpu/ holds Tiny Shakespeare
#   STEPS="launched to_target" bash bench/gpu_checks.sh    # only these steps
#
# That machine has its own python3 and torch (not this project's pins) and no ../shared beside the
# checkout: the corpus travels in .gpu/ (ignored, carried) and is put where core.corpus looks.
set -u
OUT=${OUT:-/tmp/gpu-checks}
mkdir -p "$OUT" ../shared/corpora
cp -n .gpu/*.txt ../shared/corpora/ 2>/dev/null
export PYTHONUNBUFFERED=1 BPE_EXPLORER_ENGINE_IDLE_S=10
step() {  # step NAME SECONDS COMMAND...: run it, its output to $OUT/NAME.log and the tail here
  local name=$1 limit=$2; shift 2
  [[ -z "${STEPS:-}" || " $STEPS " == *" $name "* ]] || return 0
  echo "=== $name (limit ${limit}s) $(date +%T)"
  local began=$SECONDS
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  echo "--- $name: rc=$? in $((SECONDS - began)) s"
  tail -n "${TAIL:-12}" "$OUT/$name.log"
}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))"
TAIL=6 step tests 120 python3 -m pytest -q -p no:cacheprovider tests/gpt
step machine 60 python3 -c "
import sys
from core.room.limits import detect_device, this_machine
print(this_machine(names=True), '->', detect_device('auto'), '| torch here:', 'torch' in sys.modules)"
step launched 150 python3 bench/bench_estimate.py --launched --presets quick small --device cuda
step to_target 90 python3 bench/bench_gpt.py --device cuda --preset small --target 1.47 \
    --eval-interval 250 --eval-iters 200 --run-dir /tmp/gpu-run
step sampled_on_cpu 60 python3 -c "
from core.room.probe import sample_checkpoint
print(repr(sample_checkpoint('/tmp/gpu-run', 'ROMEO:', 60)))"
TAIL=14 step runs_per_gpu 130 python3 bench/bench_gpu_turns.py --preset small --most 4 --seconds 12
TAIL=10 step one_step 120 python3 bench/bench_gpt_step.py --device cuda --preset small
