#!/usr/bin/env bash
# What Nsight Compute and proton write on a real GPU, beyond counters.sh's sections: the
# `--set full` details page and a `--set full` raw page (hundreds of columns, device
# attributes among them), of the padded add (counters_add.py) and of a GEMM whose tile
# goes 128 -> 64 (counters_gemm.py); an NVTX-ranged capture; a timing-loop benchmark
# profiled with one launch of each kernel (`--kernel-id ::regex:.:1`) against every
# launch; proton of the GEMM; five timed runs of each.
#   bash examples/h200/capture_full.sh OUT_DIR
set -uo pipefail
OUT="$1"; here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$OUT"; cd "$OUT"
cp "$here/counters_add.py" add.py; cp "$here/counters_gemm.py" gemm.py
ncu_csv() { ncu --clock-control none --csv "$@"; }
for pad in 0 0.2; do
  PAD=$pad LAUNCHES=2 ncu_csv --set full -k regex:add_kernel -c 2 python3 add.py > "ncu-full-add-pad$pad.csv" 2>&1
  for i in 1 2 3 4 5; do PAD=$pad python3 add.py; done > "timing-add-pad$pad.txt" 2>&1
done
for tile in 128 64; do
  TILE=$tile LAUNCHES=2 ncu_csv --set full -k regex:matmul -c 2 python3 gemm.py > "ncu-full-gemm-tile$tile.csv" 2>&1
  TILE=$tile LAUNCHES=2 ncu_csv --page raw --set full -k regex:matmul -c 1 python3 gemm.py > "ncu-rawfull-gemm-tile$tile.csv" 2>&1
  TILE=$tile LAUNCHES=2 python3 -c "
import runpy, triton.profiler as proton
proton.start('proton-gemm-tile$tile', hook='triton')
with proton.scope('matmul'):
    runpy.run_path('gemm.py')
proton.finalize()" > "proton-gemm-tile$tile.stdout" 2>&1
  for i in 1 2 3 4 5; do TILE=$tile python3 gemm.py; done > "timing-gemm-tile$tile.txt" 2>&1
done
TILE=64 NVTX=1 LAUNCHES=2 ncu_csv --nvtx --print-nvtx-rename kernel --section SpeedOfLight -c 4 python3 gemm.py > ncu-nvtx-gemm.csv 2>&1
# A timing-loop run (do_bench: hundreds of launches) under ncu: one launch of each kernel
# name, then every launch (capped by time), each timed.
t0=$(date +%s%N)
TILE=128 ncu_csv --kernel-id '::regex:.:1' --section SpeedOfLight python3 gemm.py > ncu-firstlaunch-gemm.csv 2>&1
echo "kernel-id first launch: $(( ($(date +%s%N) - t0) / 1000000 )) ms" > ncu-scope-times.txt
t0=$(date +%s%N)
TILE=128 timeout 120 ncu --clock-control none --csv --section SpeedOfLight python3 gemm.py > ncu-everylaunch-gemm.csv 2>&1
echo "every launch: exit $? $(( ($(date +%s%N) - t0) / 1000000 )) ms, $(grep -c '"Duration"' ncu-everylaunch-gemm.csv) launches" >> ncu-scope-times.txt
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv
  python3 -c 'import torch, triton; print("torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__)'
  ncu --version | tail -1; } > versions.txt 2>&1
rm -f add.py gemm.py
ls -la
