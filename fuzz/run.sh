#!/usr/bin/env bash
# Run every fuzz target (or the ones named) for a fixed number of executions each and
# print a markdown table: executions, seconds, executions per second, corpus size and
# findings (crash, leak, timeout or out-of-memory inputs libFuzzer saved).
#
#   fuzz/run.sh [RUNS] [TARGET...]      RUNS defaults to 10,000,000 (BENCHMARKS.md's goal)
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). Targets run
# two at a time (one per core here). Seeds: every file of sample-data/ up to 64 KB; the
# corpus each target grows is kept under $PERFDB_FUZZ_DIR (default ~/.cache/perfdb/fuzz)
# so a later run starts from it. A finding is saved under $PERFDB_FUZZ_DIR/artifacts/
# <target>/; copy it to fuzz/regressions/<target>/ once fixed (ingest/tests/it/roundtrip.rs
# replays it).
# Per input: at most 10 s, 2 GB resident, 8 KB long (longer seeds are cut). Built
# without a sanitizer (`-s none`): the parsers are safe Rust, so what fuzzing looks for is
# panics, unbounded memory or time and round-trip failures, and ASan cost 8x in speed.
# PERFDB_FUZZ_SECONDS=N stops each target after N seconds instead of RUNS executions.
set -euo pipefail
cd "$(dirname "$0")"
RUNS=${1:-10000000}
PERFDB_FUZZ_SECONDS=${PERFDB_FUZZ_SECONDS:-0}
shift || true
export CARGO_TARGET_DIR=${PERFDB_FUZZ_TARGET_DIR:-$HOME/.cache/perfdb/fuzz-target}
WORK=${PERFDB_FUZZ_DIR:-$HOME/.cache/perfdb/fuzz}
JOBS=${PERFDB_FUZZ_JOBS:-2}
cargo +nightly fuzz build -O -s none >&2
if [ $# -gt 0 ]; then TARGETS="$*"; else TARGETS=$(cargo +nightly fuzz list); fi
mkdir -p "$WORK"
one() {
  local t=$1 corpus="$WORK/corpus/$1" log="$WORK/$1.log"
  local artifacts="$WORK/artifacts/$t"
  mkdir -p "$corpus" "$artifacts"
  if [ -z "$(ls -A "$corpus")" ]; then
    find ../sample-data -type f -size -64k | while read -r f; do
      cp "$f" "$corpus/seed-$(sha1sum "$f" | cut -c1-12)"
    done
  fi
  local start=$SECONDS rc=0
  "$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release/$t" "$corpus" \
    -runs="$RUNS" -max_total_time="${PERFDB_FUZZ_SECONDS:-0}" -rss_limit_mb=2048 -timeout=10 -max_len=8192 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1 || rc=$?
  local secs=$((SECONDS - start))
  local execs; execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  local found; found=$(find "$artifacts" -type f | wc -l)
  local size; size=$(ls "$corpus" | wc -l)
  echo "$t ${execs:-0} $secs $size $found $rc"
}
export -f one
export RUNS WORK CARGO_TARGET_DIR PERFDB_FUZZ_SECONDS
echo "| target | executions | seconds | exec/s | corpus | findings | exit |"
echo "|---|---|---|---|---|---|---|"
echo "$TARGETS" | tr ' ' '\n' | xargs -P "$JOBS" -I{} bash -c 'one {}' | sort |
  while read -r t execs secs size found rc; do
    rate=$(( secs > 0 ? execs / secs : execs ))
    echo "| \`$t\` | $execs | $secs | $rate | $size | $found | $rc |"
  done
