#!/usr/bin/env bash
# `perfdb bisect` on a real GPU, its ends verified first: two 8-commit repositories whose
# Triton add (bisect_add.py) takes its block size from config.py, and whose c04 does not
# build (build.sh exits 1 there).
#   - false-alarm: the block size never changes: the ends do not differ, "the step does
#     not reproduce here", exit 3, no culprit, no search;
#   - step: 1024 until c06, 64 from it: the ends differ, the search skips c04 and names c06.
#
#   bash examples/h200/bisect_ends.sh PERFDB_BINARY OUT_DIR
# Each case may take BISECT_LIMIT seconds (default 480: on an H100 the step case's three
# steps take more than four minutes).
set -euo pipefail
P="$1"; OUT="$2"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$OUT"
for case in false-alarm step; do
  R="$(mktemp -d)/kernels"; W="$(mktemp -d)/wh"
  mkdir -p "$R"
  git -C "$R" init -q -b main
  cp "$here/bisect_add.py" "$R/bench.py"
  # Two digits (c00..c08), so that c04 exists: `seq -w 0 8` prints 4, not 04.
  for i in $(seq 0 8 | xargs printf '%02d\n'); do
    b=1024
    if [ "$case" = step ] && [ "$i" -ge 6 ]; then b=64; fi
    echo "BLOCK = $b" > "$R/config.py"
    if [ "$i" = 04 ]; then echo 'echo "error: config does not compile" >&2; exit 1' > "$R/build.sh"
    else echo 'exit 0' > "$R/build.sh"; fi
    echo "change $i" > "$R/notes.txt"
    git -C "$R" add -A
    GIT_AUTHOR_DATE="2026-12-04T00:$i:00Z" GIT_COMMITTER_DATE="2026-12-04T00:$i:00Z" \
      git -C "$R" -c user.name="Ada Kernel" -c user.email=ada@example.com commit -q -m "c$i: change $i"
  done
  git -C "$R" log --format='%H %s' > "$OUT/$case.commits.txt"
  cd "$(dirname "$R")"
  t0=$(date +%s%N)
  set +e
  timeout "${BISECT_LIMIT:-480}" "$P" --warehouse "$W" \
    bisect --repo "$R" --good main~8 --bad main --series triton --control torch --seed 7 \
    --max-trials 8 --build 'sh build.sh' --format json \
    -- python3 bench.py > "$OUT/$case.json" 2> "$OUT/$case.stderr"
  echo "exit $? wall $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$OUT/$case.stderr"
  set -e
  "$P" --warehouse "$W" sql "SELECT \"commit\", count(*) AS runs FROM runs GROUP BY 1 ORDER BY 1" > "$OUT/$case.runs.txt" || true
done
