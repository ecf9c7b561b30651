#!/bin/bash
# `ab --gpus` with the GPUs stood in (no GPU needed): the stand-in NVML of
# tests/fixtures/nvml_standin.c with 8 GPUs, and an A/A arm that sleeps TRIAL_S seconds a
# trial (the GPU's time) and prints five rows at NOISE (uniform, +-NOISE/2). For 1, 2, 4
# and 8 GPUs and SEEDS seeds: the wall clock until every row is decided, the trials a side,
# the trial-seconds spent with the warm-ups (GPU-seconds) and rows flagged. What it measures is perfdb's
# scheduling of rounds (looks, ingest, the threads), not a GPU.
#   PERFDB_BIN=target/release/perfdb bash benches/gpus_standin.sh [TRIAL_S] [NOISE] [SEEDS]
set -e
HERE=$(cd "$(dirname "$0")/.." && pwd)
B=${PERFDB_BIN:-perfdb}
TRIAL_S=${1:-0.5}; NOISE=${2:-0.04}; SEEDS=${3:-3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cc -shared -fPIC -o "$W/libnvml.so" "$HERE/tests/fixtures/nvml_standin.c"
cat > "$W/arm.sh" <<'ARM'
g=${CUDA_VISIBLE_DEVICES#GPU-standin-}
d="$STANDIN_NVML_DIR/gpu$g"; mkdir -p "$d"
n=$(cat "$d/n" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$d/n"
sleep "$TRIAL_S"
h=$(echo "$SEED $g $n" | cksum | cut -d' ' -f1)
awk -v h="$h" -v noise="$NOISE" 'BEGIN {
  srand(h)
  for (i = 1; i <= 5; i++)
    printf "[perf][op%d] dim: (4096,), dtype: torch.float32, torch avg: %.3f us\n", i, 100 * i * (1 + noise * (rand() - 0.5))
}'
ARM
printf "%-5s %-5s %10s %12s %14s %8s\n" gpus seed wall_s trials_a_side trial_seconds flagged
for gpus in 1 2 4 8; do
  for seed in $(seq 1 "$SEEDS"); do
    nv="$W/nv-$gpus-$seed"; mkdir -p "$nv"; echo 8 > "$nv/count"
    t0=$(date +%s.%N)
    PERFDB_NVML_LIBRARY="$W/libnvml.so" STANDIN_NVML_DIR="$nv" SEED=$seed TRIAL_S=$TRIAL_S NOISE=$NOISE \
      "$B" --warehouse "$W/wh" ab --quiet --format json --seed "$seed" --gpus "0-$((gpus - 1))" \
      --label-base "b$gpus-$seed" --label-head "h$gpus-$seed" --logs "$W/logs-$gpus-$seed" \
      --base-env ARM=base --head-env ARM=head -- sh "$W/arm.sh" > "$W/out.json" 2> "$W/err.txt" || true
    t1=$(date +%s.%N)
    ran=$(ls "$W/logs-$gpus-$seed"/*.out | wc -l)
    python3 - "$W/out.json" "$gpus" "$seed" "$t0" "$t1" "$TRIAL_S" "$ran" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
s = v["sequential"]
flagged = sum(r.get("state") in ("regression", "improvement") or r.get("verdict") == "size_unknown" for r in v["rows"])
print("%-5s %-5s %10.1f %12d %14.1f %8d" % (sys.argv[2], sys.argv[3], float(sys.argv[5]) - float(sys.argv[4]), s["trials_per_arm"], int(sys.argv[7]) * float(sys.argv[6]), flagged))
PY
  done
done
