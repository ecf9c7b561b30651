#!/usr/bin/env bash
# Warm page times of `perfdb serve` on a remote warehouse: the A/B sample ingested into
# a fresh prefix of each store whose variables are set (S3: AWS_ENDPOINT_URL, the keys,
# PERFDB_S3_BUCKET; Azure: AZURE_STORAGE_USE_EMULATOR=true or an account,
# PERFDB_AZ_CONTAINER), then 3 requests to warm and 20 timed, one at a time (curl),
# for three pages. Figures: BENCHMARKS.md, "Object storage" (scripts/with-stores starts the stores).
#
#   bash benches/remote_pages.sh            (PERFDB_BIN=path: time another build)
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
[ -n "${PERFDB_BIN:-}" ] || cargo build --release -q
bin="${PERFDB_BIN:-$target/release/perfdb}"
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
stamp=$(date +%s)-$$
stores=()
[ -n "${AWS_ENDPOINT_URL:-}" ] && stores+=("s3://${PERFDB_S3_BUCKET:-perfdb}/bench/pages-$stamp")
[ -n "${AZURE_STORAGE_USE_EMULATOR:-}${AZURE_STORAGE_ACCOUNT_NAME:-}" ] &&
  stores+=("az://${PERFDB_AZ_CONTAINER:-perfdb}/bench/pages-$stamp")
[ ${#stores[@]} -gt 0 ] || { echo "no store configured (see the head of this script)" >&2; exit 1; }
port=$((20000 + $$ % 10000))
for wh in "${stores[@]}"; do
  export PERFDB_CACHE_DIR="$work/cache-${wh%%:*}"
  "$bin" --warehouse "$wh" ingest sample-data/h200-gemm/ab/aiter/base --label base >/dev/null
  "$bin" --warehouse "$wh" ingest sample-data/h200-gemm/ab/aiter/head --label head >/dev/null
  "$bin" --warehouse "$wh" serve --bind "127.0.0.1:$port" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 150); do curl -s -o /dev/null "http://127.0.0.1:$port/api/runs" && break; sleep 0.2; done
  for path in "/compare?base=base&head=head&control=torch" "/api/runs" "/history"; do
    for _ in 1 2 3; do curl -s -o /dev/null "http://127.0.0.1:$port$path"; done
    for _ in $(seq 20); do curl -s -o /dev/null -w "%{time_total}\n" "http://127.0.0.1:$port$path"; done |
      sort -n | awk -v at="$wh" -v p="$path" '{ t[NR] = $1 * 1000 }
        END { printf "%-44s %-44s min %5.1f  median %5.1f  max %5.1f ms\n", at, p, t[1], t[int((NR + 1) / 2)], t[NR] }'
  done
  kill "$pid"; wait "$pid" 2>/dev/null || true
  pid=
  port=$((port + 1))
done
