#!/usr/bin/env bash
# A year of a team's data: ~100M measurement rows (COMMITS commits x 3 machine classes x
# 5 trials x 1,840 rows; `gen_warehouse --year`), compacted daily (every 36 commits) as
# it is built, then each operation a team runs on it, timed with its peak memory.
# Prints a line per figure. BENCHMARKS.md, "A year of data".
#
#   bash benches/year.sh [COMMITS=3625] [DURATION=10s]
#   YEAR_COMPACT=0 bash benches/year.sh 2054     # never compacted
#
# The warehouse is kept in $YEAR_WH (default ~/.cache/perfdb/year-wh) and reused when it
# is there: building it (~18 min here) is most of the run. Every step bounds itself
# (wrk -d). Needs ~6 GB of disk while it builds (replaced files until the vacuum).
set -euo pipefail
cd "$(dirname "$0")/.."
COMMITS="${1:-3625}"
DURATION="${2:-10s}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/perfdb/target}"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
cargo build --release --quiet --bin perfdb --example gen_warehouse
BIN="$CARGO_TARGET_DIR/release"
P="$BIN/perfdb"
WH="${YEAR_WH:-$HOME/.cache/perfdb/year-wh}"
TMP="$(mktemp -d)"
PORT="${PORT:-18091}"
trap 'kill ${PID:-0} 2>/dev/null; rm -rf "$TMP"' EXIT
timed() { # NAME CMD...: run, print seconds and max RSS
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$TMP/time" "$@" > "$TMP/out" 2> "$TMP/err" || true
  read -r secs kb < <(tail -1 "$TMP/time")
  printf '%-34s %8.2f s  %6d MB max RSS  %s\n' "$name" "$secs" "$((kb / 1024))" "$(tail -1 "$TMP/out" | cut -c1-90)"
}
if [ ! -d "$WH/_delta_log" ] && [ ! -d "$WH/runs" ]; then
  if [ "${YEAR_COMPACT:-1}" = 0 ]; then
    timed "generate ($COMMITS commits)" "$BIN/examples/gen_warehouse" "$WH" "$COMMITS" --year
  else
    timed "generate ($COMMITS commits, daily compact)" "$BIN/examples/gen_warehouse" "$WH" "$COMMITS" --year --compact-every 36
    timed "compact (the last day)" "$P" --warehouse "$WH" compact --grace 0
    timed "vacuum (replaced files)" "$P" --warehouse "$WH" vacuum --retain 0 --force
  fi
fi
"$P" --warehouse "$WH" sql "SELECT count(*) AS measurement_rows FROM measurements"
"$P" --warehouse "$WH" sql "SELECT count(*) AS runs, count(DISTINCT \"commit\") AS commits FROM runs"
du -sh "$WH" | sed 's/^/warehouse on disk: /'

# One CI run of a pull request: 5 trials of 100 rows (10 shapes x 10 variants), as the
# aiter summary tables print them, on one machine class.
mkdir -p "$TMP/pr"
for t in 1 2 3 4 5; do
  {
    echo "[aiter] gemm_a16w16 summary (markdown):"
    echo "| M | N | K | dtype | v0 us | v1 us | v2 us | v3 us | v4 us | v5 us | v6 us | v7 us | v8 us | v9 us |"
    echo "|---:|---:|---:|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for shape in "1 4096 4096 18.4" "16 4096 4096 18.6" "128 4096 4096 18.5" "512 4096 4096 28.2" \
      "4096 4096 4096 177.0" "16 8192 8192 43.6" "256 8192 8192 55.0" "2048 8192 8192 351.9" \
      "8192 8192 8192 1570.2" "4096 14336 4096 699.7"; do
      set -- $shape
      row="| $1 | $2 | $3 | bf16 |"
      for v in 0 1 2 3 4 5 6 7 8 9; do row="$row $(awk -v b="$4" -v v="$v" -v t="$t" 'BEGIN{printf "%.3f", b*(1+v*0.01)*(1+t*0.001)}') |"; done
      echo "$row"
    done
  } > "$TMP/pr/trial$t.log"
done
LAST="$("$P" --warehouse "$WH" sql "SELECT max(\"commit\") AS c FROM runs WHERE label = 'main'" --format csv | tail -1)"
timed "ingest one CI run (5 x 100 rows)" "$P" --warehouse "$WH" ingest "$TMP/pr" --label "pr-$$" --commit pr --arch sm_90 --machine h200-a
timed "compare main@latest pr" "$P" --warehouse "$WH" compare "main@$LAST" "pr-$$"
timed "detect, whole history" "$P" --warehouse "$WH" detect --label main
# One more commit on the three classes, then detect again: what CI runs after each commit.
NEXT="$(printf 'y%05d' "$COMMITS")"
for m in h200-a h200-b h200-c; do
  "$P" --warehouse "$WH" ingest "$TMP/pr" --label main --commit "$NEXT" --commit-time 2030-01-01T00:00:00Z --arch sm_90 --machine "$m" >/dev/null
done
timed "detect after one new commit" "$P" --warehouse "$WH" detect --label main --since "$NEXT"
timed "status (the overview's rows)" "$P" --warehouse "$WH" status --limit 5
# A day of the year's CI onto it (36 commits x 3 classes x 5 trials x 1,840 rows: 108
# files, 1M rows), then the nightly compaction of that day's files. (On a warehouse
# reused from an earlier run the day is already there and the compaction has nothing
# to do: the figure is a fresh build's.)
"$BIN/examples/gen_warehouse" "$WH" "$((COMMITS + 37))" --year --from "$((COMMITS + 1))" 2>/dev/null
[ "${YEAR_COMPACT:-1}" = 0 ] || timed "compact one day's files" "$P" --warehouse "$WH" compact --grace 0

"$P" --warehouse "$WH" serve --bind "127.0.0.1:$PORT" 2>/dev/null &
PID=$!
for _ in $(seq 600); do curl -sf "http://127.0.0.1:$PORT/api/runs?limit=1" >/dev/null 2>&1 && break; sleep 0.1; done
KEY='%7B%22K%22%3A%224096%22%2C%22M%22%3A%22512%22%2C%22N%22%3A%224096%22%2C%22dtype%22%3A%22bf16%22%7D'
PAGES=(
  "overview|/"
  "history|/history?table=gemm_a16w16&metric=latency&variant=v3&label=main&machine=sm_90%2Fh200-a&key=$KEY"
  "chart|/chart?table=gemm_a16w16&metric=latency&runs=$LAST"
  "compare|/compare?base=main%40$LAST&head=pr-$$"
)
first() { curl -s -o /dev/null -w "%{http_code} in %{time_total} s" "http://127.0.0.1:$PORT$1"; }
for p in "${PAGES[@]}"; do
  name="${p%%|*}"; url="${p#*|}"
  printf '%-10s first: %s\n' "$name" "$(first "$url")"
  printf '%-10s warm:  ' "$name"
  wrk -t2 -c32 -d"$DURATION" --timeout 10s -s benches/wrk_report.lua "http://127.0.0.1:$PORT$url" | tail -1
done
# The first request to each page after an ingest.
"$P" --warehouse "$WH" ingest "$TMP/pr" --label "after-$$" --arch sm_90 --machine h200-a >/dev/null
for p in "${PAGES[@]}"; do
  printf '%-10s first after an ingest: %s\n' "${p%%|*}" "$(first "${p#*|}")"
done
echo "serve max RSS: $(( $(grep VmHWM /proc/$PID/status | awk '{print $2}') / 1024 )) MB"
