#!/usr/bin/env bash
# perfdb's own cost per `perfdb ab` trial: ingesting the trial's output and the looks,
# not the benchmark's time. Each arm replays generated `[perf]` logs of ROWS rows a trial
# (ROWS/2 shapes, `torch` and `cand` each), 1% lognormal noise, no change; a 0.1%
# threshold keeps rows open through several looks (up to --max-trials 20). Prints ab's
# `perfdb_seconds_per_trial` and the wall time. Figures: BENCHMARKS.md, "ab".
#
#   bash benches/ab_trial.sh [ROWS=100]
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS="${1:-100}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/perfdb/target}"
cargo build --release --quiet --bin perfdb
BIN="$CARGO_TARGET_DIR/release/perfdb"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
python3 - "$TMP" "$ROWS" <<'PY'
import math, os, random, sys
out, rows = sys.argv[1], int(sys.argv[2])
rng = random.Random(1)
for arm in ("base", "head"):
    os.makedirs(f"{out}/{arm}")
    for t in range(1, 23):
        with open(f"{out}/{arm}/trial{t}.log", "w") as f:
            for s in range(rows // 2):
                m = 64 * (s + 1)
                a, b = (10 + s) * math.exp(rng.gauss(0, 0.01)), (11 + s) * math.exp(rng.gauss(0, 0.01))
                f.write(f"[perf] dim: ({m}, 4096, 4096), dtype: torch.bfloat16, torch avg: {a:.3f} us, cand avg: {b:.3f} us, uplift: 0.0%\n")
PY
cd "$TMP"
start=$(date +%s.%N)
"$BIN" --warehouse wh ab --quiet --no-gpu-state --seed 1 --control torch --threshold 0.001 \
  --max-trials 20 --format json \
  --base "sh $OLDPWD/tests/fixtures/replay.sh $TMP/base $TMP/b.n" \
  --head "sh $OLDPWD/tests/fixtures/replay.sh $TMP/head $TMP/h.n" > ab.json 2> ab.err || true
end=$(date +%s.%N)
python3 - "$start" "$end" <<'PY'
import json, sys
s = json.load(open("ab.json"))["sequential"]
n = 2 * s["trials_per_arm"] + 2 * s["warmup"]
print(f"ab: {s['trials_per_arm']} trials a side, looks {s['looks']}, stopped {s['stopped']}; "
      f"perfdb per measured trial {s['perfdb_seconds_per_trial'] * 1e3:.1f} ms; "
      f"wall {float(sys.argv[2]) - float(sys.argv[1]):.2f} s for {n} processes")
PY
