#!/usr/bin/env bash
# The CI path, timed as CI runs it: three perfdb processes -- ingest 1,000 aiter trial
# logs for base, ingest 1,000 for head, compare head with base (control torch) -- on a
# fresh warehouse each time. hyperfine runs the three commands RUNS times and prints the
# whole A/B's mean, min and max; then one run with PERFDB_TRACE=1 shows where the time
# goes in each process. Figures: BENCHMARKS.md.
#
#   bash benches/cli_ab.sh [RUNS=20]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-20}"
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine >/dev/null; }
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/perfdb/target}"
cargo build --release --quiet --bin perfdb --example gen_logs
P="$CARGO_TARGET_DIR/release/perfdb"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
"$CARGO_TARGET_DIR/release/examples/gen_logs" "$TMP/logs" 2000 2>/dev/null
AB="$P --warehouse $TMP/wh ingest $TMP/logs/trial0*.log --label base >/dev/null && \
$P --warehouse $TMP/wh ingest $TMP/logs/trial1*.log --label head >/dev/null && \
$P --warehouse $TMP/wh compare base head --control torch >/dev/null; test \$? -le 1"
hyperfine --style basic --warmup 2 --runs "$RUNS" --prepare "rm -rf $TMP/wh" \
  --export-json "$TMP/ab.json" \
  --command-name "ingest base + ingest head + compare (1,000 trials an arm)" "$AB"
# The median too: this machine's occasional stalls pull the mean up.
python3 -c "
import json, statistics
t = json.load(open('$TMP/ab.json'))['results'][0]['times']
print(f'median {statistics.median(t) * 1e3:.1f} ms over {len(t)} runs (target <= 260 ms)')
"
echo "== where the time goes (one run, PERFDB_TRACE=1)"
rm -rf "$TMP/wh"
for side in base head; do
  n=$([ $side = base ] && echo 0 || echo 1)
  echo "-- ingest $side"
  PERFDB_TRACE=1 /usr/bin/time -f "process: %e s wall, %M KB max RSS" \
    "$P" --warehouse "$TMP/wh" ingest "$TMP"/logs/trial$n*.log --label $side >/dev/null
done
echo "-- compare"
PERFDB_TRACE=1 /usr/bin/time -f "process: %e s wall, %M KB max RSS" \
  "$P" --warehouse "$TMP/wh" compare base head --control torch >/dev/null || true
