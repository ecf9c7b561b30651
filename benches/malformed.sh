#!/usr/bin/env bash
# The generated malformed inputs of tests/it/malformed.rs at full size, against the release
# binary: a 100 MB single line, a table of 10^5 columns, one of 10^6 rows, the same cut
# mid-row. Each is ingested under a 2 GiB address-space limit (prlimit --as); prints its
# outcome, seconds and peak resident memory (GNU time) as a markdown table.
#
#   bash benches/malformed.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
BIN=${CARGO_TARGET_DIR:-target}/release/perfdb
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
python3 - "$DIR" <<'PY'
import sys, os
d = sys.argv[1]
with open(os.path.join(d, "line_100mb.log"), "w") as f:
    chunk = "x" * (1 << 20)
    for _ in range(100):
        f.write(chunk)
n = 100_000
with open(os.path.join(d, "columns_1e5.log"), "w") as f:
    f.write("[aiter] wide summary (markdown):\n| M |" + "".join(f" k{i} us |" for i in range(n)))
    f.write("\n|---:|" + "---:|" * n + "\n| 1 |" + "".join(f" {i % 97}.5 |" for i in range(n)) + "\n")
rows = 1_000_000
body = "".join(f"| {i} | 4096 | {10 + i % 7}.25 |\n" for i in range(rows))
head = "[aiter] long summary (markdown):\n| M | N | ck us |\n|---:|---:|---:|\n"
open(os.path.join(d, "rows_1e6.log"), "w").write(head + body)
open(os.path.join(d, "rows_1e6_cut.log"), "w").write(head + body + f"| {rows} | 40")
PY
echo "| input | size | outcome | seconds | peak RSS |"
echo "|---|---|---|---|---|"
for f in line_100mb.log columns_1e5.log rows_1e6.log rows_1e6_cut.log; do
  WH="$DIR/wh-$f"
  set +e
  /usr/bin/time -f "%e %M" -o "$DIR/time" prlimit --as=$((2 << 30)) -- \
    "$BIN" --warehouse "$WH" ingest "$DIR/$f" --label m >"$DIR/out" 2>"$DIR/err"
  rc=$?
  set -e
  read -r secs kb < <(tail -1 "$DIR/time")
  size=$(du -h "$DIR/$f" | cut -f1)
  if [ $rc -eq 0 ]; then
    outcome="ingested: $(grep -o '[0-9]* value(s)' "$DIR/out" | head -1)"
  else
    outcome="rejected (exit $rc): $(grep -m1 '^error' "$DIR/err" | sed "s|$DIR/||" | cut -c1-90)"
  fi
  echo "| \`$f\` | $size | $outcome | $secs | $((kb / 1024)) MB |"
done
