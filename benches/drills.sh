#!/usr/bin/env bash
# The reliability drills at full length, against the release build: the crash drill
# with 200 SIGKILLs (ingest, compact, detect), the disk-full drill, the concurrency drill
# five times, and the malformed-input generator at full size (benches/malformed.sh).
# Prints the figures BENCHMARKS.md records under "Reliability".
#
#   bash benches/drills.sh [KILLS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
KILLS=${1:-200}
ROUNDS=${2:-5}
export PERFDB_DRILL_ITERATIONS=$KILLS
cargo test --release --test it crash_drill -- --nocapture 2>&1 | grep -E "crash drill|panicked|FAILED" || true
cargo test --release --test it a_full_disk -- --nocapture 2>&1 | grep -E "disk full|panicked|FAILED" || true
for i in $(seq "$ROUNDS"); do
  cargo test --release --test it concurrency_drill -- --nocapture 2>&1 | grep -E "concurrency drill|panicked|FAILED" || true
done
bash benches/malformed.sh
