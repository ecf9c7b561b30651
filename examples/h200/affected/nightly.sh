#!/bin/bash
# `perfdb run --affected` over commits FIRST..LAST of make_repo.py's repository, one
# night a commit: the first commit records its identities (`--identity`, every row
# timed), each later one times what changed since the label's latest run. Each pass's
# output is kept under OUT/c<i>/ (record.sh), each night's report in OUT/c<i>/report.txt
# and its wall seconds in OUT/wall.txt. FULL=1 then times the last commit in full
# (RUNS plain `perfdb run`s) for the cost of a night without --affected. A night's
# timed pass runs RUNS times (each a trial: compare needs 3 a side).
#   PERFDB=path/to/perfdb bash nightly.sh OUT FIRST LAST [WAREHOUSE]
# STOP_AT (epoch seconds) stops before the next commit once passed.
set -e
OUT=$1; FIRST=$2; LAST=$3; WH=${4:-$OUT/wh}
HERE=$(cd "$(dirname "$0")" && pwd)
PERFDB=${PERFDB:-perfdb}
R=/tmp/nightly-repo
mkdir -p "$OUT"
[ -d $R ] || python "$HERE/make_repo.py" $R "$OUT/expect.json"
export TRITON_CACHE_DIR=/tmp/nightly-cache REP_MS=${REP_MS:-100}
RUNS=${RUNS:-6}
mkdir -p "$OUT"
i=0
for c in $(git -C $R rev-list --reverse main); do
  if [ $i -ge "$FIRST" ] && [ $i -le "$LAST" ]; then
    git -C $R checkout -q "$c"
    mkdir -p "$OUT/c$i"
    if [ $i -eq 0 ]; then mode=(--identity); else mode=(--affected nightly@latest); fi
    t0=$(date +%s.%N)
    rc=0
    (cd $R && "$PERFDB" --warehouse "$WH" run --label nightly --commit "$c" --name bench --trials "$RUNS" "${mode[@]}" \
        -- bash "$HERE/record.sh" "$OUT/c$i" python bench.py) > "$OUT/c$i/report.txt" 2> "$OUT/c$i/stderr.txt" || rc=$?
    t1=$(date +%s.%N)
    echo "$i $c $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') exit=$rc" | tee -a "$OUT/wall.txt"
    if [ -n "$STOP_AT" ] && [ "$(date +%s)" -ge "$STOP_AT" ]; then echo "stopped after commit $i: STOP_AT" | tee -a "$OUT/wall.txt"; break; fi
  fi
  i=$((i+1))
done
if [ "${FULL:-0}" = 1 ]; then
  t0=$(date +%s.%N)
  for k in $(seq "$RUNS"); do
    (cd $R && "$PERFDB" --warehouse "$OUT/full-wh" run --label full --commit "$(git rev-parse HEAD)" -- python bench.py) >> "$OUT/full.txt" 2>&1
  done
  t1=$(date +%s.%N)
  echo "full $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" | tee -a "$OUT/wall.txt"
fi
