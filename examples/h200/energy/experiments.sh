#!/bin/bash
# The energy experiments of BENCHMARKS.md ("Energy"), as run on a lent H100: one planted
# energy-only change, one time change, and A/A runs, each a `perfdb ab` over bench.py with
# its report in OUT/NAME.txt, its trials' outputs in OUT/NAME/ and all of them stored in
# OUT/wh. SECONDS bounds when a new A/A run starts.
#   PERFDB=path/to/perfdb bash experiments.sh OUT [SECONDS]
set -u
OUT=$1; STOP=$(( $(date +%s) + ${2:-3600} ))
HERE=$(cd "$(dirname "$0")" && pwd)
P=${PERFDB:-perfdb}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader > "$OUT/gpu.txt"
run_ab() {
  name=$1; shift
  [ -f "$OUT/$name.txt" ] && return 0
  t0=$(date +%s)
  "$P" --warehouse "$OUT/wh" ab --energy --quiet --logs "$OUT/$name" --label-base "$name-base" --label-head "$name-head" "$@" \
     -- python "$HERE/bench.py" > "$OUT/$name.txt" 2> "$OUT/$name.err"
  echo "$name rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/summary.txt"
}
run_ab planted --base-env INPUT=random --head-env INPUT=zeros --seed 1
run_ab time --base-env KIND=add --head-env KIND=add2 --seed 2
for i in $(seq 1 10); do
  [ "$(date +%s)" -lt "$STOP" ] || break
  run_ab "aa$i" --base-env INPUT=random --head-env INPUT=random --seed $((100 + i))
done
