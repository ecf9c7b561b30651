#!/usr/bin/env bash
# perfdb's CI path against the tool it replaces, paired on one machine.
#
# The pull-request perf check as CI runs it, two ways: one perfdb process comparing the
# two folders of logs straight (`compare base/ head/ --control torch`: no warehouse),
# and three (ingest the base arm's aiter logs, ingest the head's, compare head with
# base gated on the torch control) on a fresh warehouse each time; against the perf
# stage of aiter's
# validate-kernel-pr skill (`scrape_perf.py --base ... --head ...`: parse, best-of-N,
# verdict) on the same logs. The logs are the real H200 A/B of sample-data/h200-gemm/ab
# (five trials a side) repeated to N trials a side. One hyperfine call runs every
# series (warm-up runs first, the warehouse removed before each three-process run),
# with the floor beside them: reading the same bytes (`cat > /dev/null`); the script
# prints the ratios of the medians; then one traced run of each perfdb form shows its
# steps (PERFDB_TRACE=1: the one-process form's "read and parse the file sides" is the
# parse alone). Figures: BENCHMARKS.md, "The CI path".
#
#   bash benches/ci_path.sh [TRIALS=1000] [RUNS=20] [SCRAPER=../shared/peer/scrape_perf.py]
#
# PERFDB=path/to/perfdb times that binary instead of building the release one (an older
# build beside a newer, say). compare's exit 3 counts as done: at one trial a side it is
# the honest answer ("too few trials"). Exit 2 when the scraper is not at SCRAPER: there
# is no ratio without it.
set -euo pipefail
cd "$(dirname "$0")/.."
TRIALS="${1:-1000}"
RUNS="${2:-20}"
SCRAPER="$(realpath -m "${3:-../shared/peer/scrape_perf.py}")"
[ -f "$SCRAPER" ] || { echo "ci_path.sh: no scraper at $SCRAPER (pass its path as the third argument)" >&2; exit 2; }
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine >/dev/null; }
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/perfdb/target}"
if [ -n "${PERFDB:-}" ]; then
  P="$(realpath "$PERFDB")"
else
  cargo build --release --quiet --bin perfdb
  P="$CARGO_TARGET_DIR/release/perfdb"
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# The real logs, trial k of a side copied to trial k, k+5, k+10, ... up to TRIALS.
for side in base head; do
  mkdir -p "$TMP/$side"
  src=(sample-data/h200-gemm/ab/aiter/$side/trial*.log)
  for ((i = 0; i < TRIALS; i++)); do
    cp "${src[$((i % ${#src[@]}))]}" "$(printf '%s/%s/trial%04d.log' "$TMP" "$side" "$i")"
  done
done

# compare exits 0 (no regression), 1 (a regression) or 3 (inconclusive); 2 is an error.
PERFDB="$P --warehouse $TMP/wh ingest $TMP/base --label base >/dev/null 2>&1 && \
$P --warehouse $TMP/wh ingest $TMP/head --label head >/dev/null 2>&1 && \
{ $P --warehouse $TMP/wh compare base head --control torch >/dev/null 2>&1; c=\$?; test \$c -le 1 -o \$c -eq 3; }"
ONE="{ $P --warehouse $TMP/none compare $TMP/base $TMP/head --control torch >/dev/null 2>&1; c=\$?; test \$c -le 1 -o \$c -eq 3; }"
PEER="python3 $SCRAPER --base $TMP/base/*.log --head $TMP/head/*.log >/dev/null"
CAT="cat $TMP/base/*.log $TMP/head/*.log >/dev/null"

# Both commands' verdicts first: the pair only counts if both read the logs.
$P --warehouse "$TMP/check" ingest "$TMP/base" --label base >/dev/null 2>&1
$P --warehouse "$TMP/check" ingest "$TMP/head" --label head >/dev/null 2>&1
c=0; $P --warehouse "$TMP/check" compare base head --control torch --format json >"$TMP/verdict.json" 2>/dev/null || c=$?
[ "$c" -le 1 ] || [ "$c" -eq 3 ] || { echo "ci_path.sh: perfdb compare failed (exit $c)" >&2; exit 1; }
python3 - "$TMP/verdict.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
rows = r.get("rows", [])
print(f"perfdb: {len(rows)} rows compared, verdict {r['verdict']}")
EOF
c=0; $P --warehouse "$TMP/none" compare "$TMP/base" "$TMP/head" --control torch --format json >"$TMP/verdict1.json" 2>/dev/null || c=$?
[ "$c" -le 1 ] || [ "$c" -eq 3 ] || { echo "ci_path.sh: perfdb compare of the folders failed (exit $c)" >&2; exit 1; }
python3 - "$TMP/verdict.json" "$TMP/verdict1.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for r in (a, b):
    r.pop("base"); r.pop("head")
same = "the same report" if a == b else "A DIFFERENT REPORT"
print(f"perfdb one process: {len(b['rows'])} rows, verdict {b['verdict']}: {same} as three processes")
EOF
[ ! -e "$TMP/none" ] || { echo "ci_path.sh: the one-process compare wrote a warehouse" >&2; exit 1; }
python3 "$SCRAPER" --base "$TMP"/base/*.log --head "$TMP"/head/*.log \
  | python3 -c "import json,sys; r=json.load(sys.stdin); print(f\"scraper: {r['matched_rows']} rows matched, status {r['status']}\")"

hyperfine --style basic --warmup 3 --runs "$RUNS" --prepare "rm -rf $TMP/wh" \
  --export-json "$TMP/pair.json" \
  --command-name "perfdb: ingest base + ingest head + compare ($TRIALS trials a side)" "$PERFDB" \
  --command-name "perfdb: compare base/ head/, one process ($TRIALS trials a side)" "$ONE" \
  --command-name "scrape_perf.py ($TRIALS trials a side)" "$PEER" \
  --command-name "cat the logs > /dev/null ($TRIALS trials a side)" "$CAT"
python3 - "$TMP/pair.json" "$TRIALS" <<'EOF'
import json, statistics, sys
res = json.load(open(sys.argv[1]))["results"]
med = [statistics.median(r["times"]) * 1e3 for r in res]
lo = [min(r["times"]) * 1e3 for r in res]
three, one, peer, cat = med
print(f"{sys.argv[2]} trials a side (medians): three processes {three:.1f} ms (min {lo[0]:.1f}), "
      f"one process {one:.1f} ms (min {lo[1]:.1f}), scraper {peer:.1f} ms (min {lo[2]:.1f}), "
      f"cat {cat:.1f} ms")
print(f"perfdb faster than the scraper: one process {peer / one:.2f}x, three processes {peer / three:.2f}x")
EOF

echo "== where perfdb's time goes (one run, PERFDB_TRACE=1)"
rm -rf "$TMP/wh"
for side in base head; do
  echo "-- ingest $side"
  PERFDB_TRACE=1 /usr/bin/time -f "process: %e s wall, %M KB max RSS" \
    "$P" --warehouse "$TMP/wh" ingest "$TMP/$side" --label $side 2>&1 >/dev/null | grep -v '^note:'
done
echo "-- compare"
PERFDB_TRACE=1 /usr/bin/time -f "process: %e s wall, %M KB max RSS" \
  "$P" --warehouse "$TMP/wh" compare base head --control torch >/dev/null || true
echo "== the one-process form (one run, PERFDB_TRACE=1)"
PERFDB_TRACE=1 /usr/bin/time -f "process: %e s wall, %M KB max RSS" \
  "$P" --warehouse "$TMP/none" compare "$TMP/base" "$TMP/head" --control torch >/dev/null || true
