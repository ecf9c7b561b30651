#!/usr/bin/env bash
# Hardware counters of a Triton add, as kernel engineers capture them, on a real GPU:
# ncu's details page and raw page (the program's own output in the same stream, as
# `ncu ... python3 bench.py > out.csv` leaves it), an ncu report imported to CSV, Triton
# proton's hatchet profile; unpadded and padded by 20% (the padded add moves more bytes).
# Then the roofs roofs.py measures, and the versions underneath.
#   bash examples/h200/counters.sh OUT_DIR
set -uo pipefail
OUT="$1"; here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$OUT"; cd "$OUT"
cp "$here/counters_add.py" bench.py
for pad in 0 0.2; do
  tag="pad$pad"
  PAD=$pad python3 bench.py > "timing-$tag.txt" 2>&1
  PAD=$pad LAUNCHES=3 ncu --clock-control none --csv -k regex:add -c 6 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy \
    python3 bench.py > "ncu-details-$tag.csv" 2> "ncu-details-$tag.stderr"
  PAD=$pad LAUNCHES=3 ncu --clock-control none --csv --page raw -k regex:add -c 6 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active \
    python3 bench.py > "ncu-raw-$tag.csv" 2> "ncu-raw-$tag.stderr"
  PAD=$pad LAUNCHES=2 ncu --clock-control none -f -o "report-$tag" -k regex:add_kernel -c 2 --section SpeedOfLight \
    python3 bench.py > "ncu-report-$tag.stdout" 2>&1
  ncu --import "report-$tag.ncu-rep" --csv > "ncu-import-$tag.csv" 2>&1
  rm -f "report-$tag.ncu-rep"
  PAD=$pad LAUNCHES=3 python3 -c "
import runpy, triton.profiler as proton
proton.start('proton-$tag', hook='triton')
runpy.run_path('bench.py')
proton.finalize()" > "proton-$tag.stdout" 2>&1
done
python3 "$here/../../src/commands/devices/roofs.py" > roofs.json 2> roofs.stderr
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv
  python3 -c 'import torch, triton; print("torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__)'
  ncu --version | tail -1; } > versions.txt 2>&1
ls -la
