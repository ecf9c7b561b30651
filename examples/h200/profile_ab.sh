#!/usr/bin/env bash
# `perfdb ab --profile ncu` and `perfdb bisect --profile ncu` on a real GPU: a
# seven-commit repository (profile_bench.py) where c02 pads the add's buffers by 20% (its
# DRAM bytes grow with its time) and c04 halves the GEMM's tile, 128 -> 64 (its compute
# throughput falls, its DRAM traffic does not); the other commits touch notes only.
#   - ab-pad:  c01 against c02, profiled: the add's row explained by add_kernel;
#   - ab-tile: c03 against c04, profiled: the matmul's row explained by matmul_kernel;
#   - bisect:  c00..c06 watching the matmul rows, profiled: culprit c04.
#   bash examples/h200/profile_ab.sh PERFDB_BINARY OUT_DIR   (PARTS="ab" or "bisect": one part)
# Each command's report is OUT/NAME.json (stderr beside it, with its exit and wall
# time); its trials' output and the profiles under OUT/logs-NAME.
set -uo pipefail
P="$1"; OUT="$2"; here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$OUT"; OUT="$(cd "$OUT" && pwd)"
work="$(mktemp -d)"; R="$work/kernels"; W="$work/wh"
mkdir -p "$R"; git -C "$R" init -q -b main
cp "$here/profile_bench.py" "$R/bench.py"
for i in 00 01 02 03 04 05 06; do
  pad=0; tile=128
  if [ "$i" -ge 02 ]; then pad=0.2; fi
  if [ "$i" -ge 04 ]; then tile=64; fi
  printf 'PAD = %s\nTILE = %s\n' "$pad" "$tile" > "$R/config.py"
  echo "note $i" > "$R/notes.txt"
  git -C "$R" add -A
  GIT_AUTHOR_DATE="2026-12-06T00:$i:00Z" GIT_COMMITTER_DATE="2026-12-06T00:$i:00Z" \
    git -C "$R" -c user.name="Ada Kernel" -c user.email=ada@example.com commit -q -m "c$i: config PAD=$pad TILE=$tile"
done
git -C "$R" log --format='%H %s' > "$OUT/commits.txt"
at() { git -C "$R" log --format=%H --grep="^c$1:"; }
for c in 01 02 03 04; do git -C "$R" worktree add -q "$work/c$c" "$(at $c)"; done
cd "$work"
run() { # name, then perfdb's arguments
  local name="$1"; shift
  local t0=$(date +%s%N)
  "$P" --warehouse "$W" "$@" > "$OUT/$name.json" 2> "$OUT/$name.stderr"
  echo "exit $? wall $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$OUT/$name.stderr"
}
parts="${PARTS:-ab bisect}"
if [[ " $parts " == *" ab "* ]]; then
run ab-pad ab --base-dir c01 --head-dir c02 --control torch --profile ncu --seed 3 \
  --max-trials 6 --quiet --format json --logs "$OUT/logs-pad" -- python3 bench.py
run ab-tile ab --base-dir c03 --head-dir c04 --control torch --profile ncu --seed 3 \
  --max-trials 6 --quiet --format json --logs "$OUT/logs-tile" -- python3 bench.py
fi
if [[ " $parts " == *" bisect "* ]]; then
run bisect bisect --repo "$R" --good "$(at 00)" --bad main --series 'triton M=2048' \
  --control torch --profile ncu --seed 7 --max-trials 6 --quiet --format json \
  --logs "$OUT/logs-bisect" -- python3 bench.py
fi
"$P" --warehouse "$W" sql "SELECT label, count(*) AS runs, count(*) FILTER (WHERE tags LIKE '%profiled%') AS profiled FROM runs GROUP BY 1 ORDER BY 1" > "$OUT/runs.txt" 2>&1
ls -la "$OUT"
