#!/usr/bin/env bash
# Print the parse benchmarks' figures (MB/s = 10^6 bytes per second, criterion's middle
# estimate) from the last `cargo bench --bench ingest -- parse/` run.
set -euo pipefail
dir="${CARGO_TARGET_DIR:-target}/criterion/parse"
for b in "$dir"/*/; do
  name=$(basename "$b")
  [ -f "$b/new/estimates.json" ] || continue
  python3 - "$b" "$name" <<'PY'
import json, sys
b, name = sys.argv[1], sys.argv[2]
est = json.load(open(f"{b}/new/estimates.json"))
bench = json.load(open(f"{b}/new/benchmark.json"))
ns = est["mean"]["point_estimate"]
tp = bench.get("throughput") or {}
nbytes = tp.get("Bytes") or tp.get("BytesDecimal")
mbs = nbytes / ns * 1e3 if nbytes else float("nan")
print(f"{name:45s} {ns/1e6:8.2f} ms  {nbytes/1e6 if nbytes else 0:6.2f} MB  {mbs:7.1f} MB/s")
PY
done
