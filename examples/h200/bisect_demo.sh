#!/usr/bin/env bash
# `perfdb bisect` on a real GPU: a 16-commit repository whose Triton add (bisect_add.py)
# takes its block size from config.py, 1024 until commit c11 and 64 from it on; bisect
# finds c11 from the ends alone. Then the GPU-state query's own cost, 20 times.
#
#   bash examples/h200/bisect_demo.sh PERFDB_BINARY OUT_DIR
set -euo pipefail
P="$1"; OUT="$2"
here="$(cd "$(dirname "$0")" && pwd)"
R="$(mktemp -d)/kernels"; W="$(mktemp -d)/wh"
mkdir -p "$R" "$OUT"
git -C "$R" init -q -b main
cp "$here/bisect_add.py" "$R/bench.py"
for i in $(seq -w 0 15); do
  if [ "$i" -ge 11 ]; then b=64; else b=1024; fi
  echo "BLOCK = $b" > "$R/config.py"
  echo "change $i" > "$R/notes.txt"
  git -C "$R" add -A
  GIT_AUTHOR_DATE="2026-12-01T00:$i:00Z" GIT_COMMITTER_DATE="2026-12-01T00:$i:00Z" \
    git -C "$R" -c user.name="Ada Kernel" -c user.email=ada@example.com commit -q -m "c$i: change $i"
done
git -C "$R" log --format='%H %s' > "$OUT/commits.txt"
cd "$(dirname "$R")"
# A cancelled bisect (SIGTERM at BISECT_LIMIT seconds) still prints the steps it made.
t0=$(date +%s%N)
timeout "${BISECT_LIMIT:-480}" "$P" --warehouse "$W" \
  bisect --repo "$R" --good main~15 --bad main --series triton --control torch --seed 7 \
  --max-trials 8 --format json \
  --logs "$OUT/logs" -- python3 bench.py > "$OUT/bisect.json" 2> "$OUT/bisect.stderr" || true
echo "bisect wall $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$OUT/bisect.stderr"
"$P" --warehouse "$W" sql "SELECT label, \"commit\", count(*) AS runs FROM runs GROUP BY 1, 2 ORDER BY 1, 2" > "$OUT/runs.txt" || true
# The query `perfdb ab` makes before and after each trial (ingest/src/gpu_state.rs).
q="--query-gpu=clocks.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active"
for i in $(seq 20); do
  t0=$(date +%s%N)
  nvidia-smi "$q" --format=csv,noheader,nounits -i 0 > /dev/null
  echo "$(( ($(date +%s%N) - t0) / 1000 )) us"
done > "$OUT/smi_query.txt"
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
