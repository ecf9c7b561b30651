#!/bin/bash
# `ab --gpus` on a host of one GPU (sample-data/h100-gpus/): --gpus 1 refused, the planted
# arms, and what CUDA sees through the pinning. PERFDB=path/to/perfdb one_gpu.sh OUT
set -u
P=${PERFDB:-perfdb}
B=$(cd "$(dirname "$0")/../energy" && pwd)/bench.py
E=$(realpath -m "$1"); mkdir -p "$E"; cd "$E"
nvidia-smi -L > gpu.txt
cat > pin.py <<'PY'
import os, torch
import random, sys
print("CUDA_VISIBLE_DEVICES=%s CUDA_DEVICE_ORDER=%s devices=%d name=%s uuid=%s" % (os.environ.get("CUDA_VISIBLE_DEVICES"), os.environ.get("CUDA_DEVICE_ORDER"), torch.cuda.device_count(), torch.cuda.get_device_name(0), getattr(torch.cuda.get_device_properties(0), "uuid", "?")), file=sys.stderr)
print("[perf][pin] dim: (1,), dtype: torch.float32, torch avg: %.3f us" % (100 + random.random()))
PY
$P --warehouse wh ab --quiet --gpus 1 --base-env A=1 --head-env A=2 -- python pin.py > refuse.txt 2>&1; echo "refuse rc=$?" >> summary.txt
for mode in none 0 all; do
  extra=""; [ $mode != none ] && extra="--gpus $mode"
  t0=$(date +%s)
  $P --warehouse wh ab --energy --quiet --seed 11 --logs logs-$mode --label-base p-$mode-base --label-head p-$mode-head $extra \
    --base-env INPUT=random --head-env INPUT=zeros -- python $B > planted-$mode.txt 2> planted-$mode.err
  echo "planted $mode rc=$? $(( $(date +%s) - t0 ))s" >> summary.txt
done
$P --warehouse wh ab --quiet --seed 12 --gpus all --max-trials 4 --label-base pin-base --label-head pin-head --base-env A=1 --head-env A=2 -- python pin.py > pin.txt 2> pin.err
echo "pin rc=$?" >> summary.txt


cat summary.txt refuse.txt; tail -3 pin.err
