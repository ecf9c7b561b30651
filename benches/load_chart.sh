#!/usr/bin/env bash
# Load test of the chart endpoint on loopback: a synthetic warehouse of ROWS measurement
# rows, `perfdb serve`, and wrk with 32 connections for DURATION (bounded in time; wrk
# stops by itself). Prints wrk's latency percentiles. Figures: BENCHMARKS.md.
#
#   bash benches/load_chart.sh [ROWS=1000000] [DURATION=20s]
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS="${1:-1000000}"
DURATION="${2:-20s}"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/perfdb/target}"
cargo build --release --quiet --bin perfdb --example gen_warehouse
BIN="$CARGO_TARGET_DIR/release"
WH="$(mktemp -d)/wh"
"$BIN/examples/gen_warehouse" "$WH" "$ROWS"
"$BIN/perfdb" --warehouse "$WH" sql "SELECT count(*) AS measurement_rows FROM measurements"
PORT=18089
"$BIN/perfdb" --warehouse "$WH" serve --addr "127.0.0.1:$PORT" 2>/dev/null &
PID=$!
trap 'kill $PID 2>/dev/null; rm -rf "$(dirname "$WH")"' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/api/runs" >/dev/null 2>&1 && break; sleep 0.1; done
URL="http://127.0.0.1:$PORT/chart?table=gemm&metric=latency&runs=history"
curl -sf -o /dev/null -w "one request: %{http_code} in %{time_total}s, %{size_download} bytes\n" "$URL"
wrk -t2 -c32 -d"$DURATION" --timeout 10s --latency "$URL"
