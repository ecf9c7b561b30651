#!/usr/bin/env bash
# `perfdb detect` at team scale: a generated warehouse of ROWS measurement rows left by
# CI (label `main`, one ingest per commit, 1,000 rows a run, PER_COMMIT trials a commit;
# one series steps 1.2x at the middle commit), then one detect over the whole history
# (the first: every step is stored as an alert) and a second (nothing new), each timed
# with its peak memory. Prints one line per detect. Figures: BENCHMARKS.md, "Detect".
#
#   bash benches/detect.sh [ROWS=10000000] [PER_COMMIT=75]
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS="${1:-10000000}"
PER_COMMIT="${2:-75}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/perfdb/target}"
cargo build --release --quiet --bin perfdb --example gen_warehouse
BIN="$CARGO_TARGET_DIR/release"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
WH="$TMP/wh"
"$BIN/examples/gen_warehouse" "$WH" "$ROWS" --commits "$PER_COMMIT"
"$BIN/perfdb" --warehouse "$WH" sql \
  "SELECT count(*) AS measurement_rows, count(DISTINCT run_id) AS runs FROM measurements WHERE label = 'main'"
"$BIN/perfdb" --warehouse "$WH" sql "SELECT count(DISTINCT \"commit\") AS commits FROM runs WHERE label = 'main'"
for run in first second; do
  /usr/bin/time -f "%e %M" -o "$TMP/time" "$BIN/perfdb" --warehouse "$WH" detect --label main \
    > "$TMP/out" || true
  # (time writes "Command exited with non-zero status 1" first when detect exits 1)
  read -r secs kb < <(tail -1 "$TMP/time")
  echo "detect ($run run): $(tail -1 "$TMP/out" | cut -c1-100); ${secs} s, $((kb / 1024)) MB max RSS"
done
