#!/usr/bin/env bash
# Load test of the web app on loopback, as a team's dashboard sees it: a generated
# warehouse of ROWS measurement rows left by CI (one ingest per commit on label `main`,
# 1,000 rows a run, PER_COMMIT trials a commit, plus labels base/head and one saved
# comparison), `perfdb serve`, then for each page wrk with 32 connections for DURATION
# (bounded in time; wrk stops by itself). Then one ingest, and the first request to
# each page after it. Prints one line per page. Figures: BENCHMARKS.md.
#
#   bash benches/load_web.sh [ROWS=1000000] [DURATION=10s] [PER_COMMIT=ROWS/125000]
#   (PERFDB_BIN=path: serve and ingest with another build, for an A/B in the same minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS="${1:-1000000}"
DURATION="${2:-10s}"
PER_COMMIT="${3:-$(( ROWS / 125000 > 0 ? ROWS / 125000 : 1 ))}"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/perfdb/target}"
cargo build --release --quiet --bin perfdb --example gen_warehouse
BIN="$CARGO_TARGET_DIR/release"
TMP="$(mktemp -d)"
WH="$TMP/wh"
PORT="${PORT:-18089}"
"$BIN/examples/gen_warehouse" "$WH" "$ROWS" --commits "$PER_COMMIT"
PERFDB="${PERFDB_BIN:-$BIN/perfdb}"
"$PERFDB" --warehouse "$WH" compare base head --save >/dev/null || true
"$PERFDB" --warehouse "$WH" sql \
  "SELECT count(*) AS measurement_rows, count(DISTINCT run_id) AS runs FROM measurements"
"$PERFDB" --warehouse "$WH" sql "SELECT count(DISTINCT \"commit\") AS commits FROM runs"
"$PERFDB" --warehouse "$WH" serve --bind "127.0.0.1:$PORT" 2>/dev/null &
PID=$!
trap 'kill $PID 2>/dev/null; rm -rf "$TMP"' EXIT
# Ready when it answers (a URL the test does not time, so the first /api/runs is cold).
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/api/runs?limit=1" >/dev/null 2>&1 && break; sleep 0.1; done

SAVED="$(ls "$WH/alerts" | head -1)"
KEY='%7B%22M%22%3A%22448%22%2C%22N%22%3A%224096%22%7D'
LAST="$(printf 'c%04d' $(( ROWS / 1000 / PER_COMMIT - 1 )))"
PAGES=(
  "chart|/chart?table=gemm&metric=latency&runs=$LAST"
  "history|/history?table=gemm&metric=latency&variant=triton&label=main&key=$KEY"
  "compare-live|/compare?base=base&head=head"
  "compare-saved|/compare?saved=$SAVED"
  "api-runs|/api/runs"
)
first() { curl -s -o /dev/null -w "%{http_code} in %{time_total} s, %{size_download} bytes" "http://127.0.0.1:$PORT$1"; }
echo "== first request after serve starts, then warm under 32 connections for $DURATION"
for p in "${PAGES[@]}"; do
  name="${p%%|*}"; url="${p#*|}"
  printf '%-14s first: %s\n' "$name" "$(first "$url")"
  printf '%-14s warm:  ' "$name"
  wrk -t2 -c32 -d"$DURATION" --timeout 10s -s benches/wrk_report.lua "http://127.0.0.1:$PORT$url" | tail -1
done
echo "== one ingest (a new commit on main), then the first request to each page"
"$PERFDB" --warehouse "$WH" ingest sample-data/h200-gemm/ab/aiter/base/trial1.log \
  --label main --commit cnew >/dev/null
for p in "${PAGES[@]}"; do
  name="${p%%|*}"; url="${p#*|}"
  printf '%-14s after ingest: %s\n' "$name" "$(first "$url")"
done
