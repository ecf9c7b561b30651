#!/usr/bin/env bash
# Regenerate docs/screenshots/*.png from the bundled sample data: a warehouse with the
# H200 A/B logs and the 20-commit history, one saved comparison, `perfdb serve` on
# loopback and headless Chromium; then the same warehouse exported with `perfdb
# export-site` and opened from disk. Needs Debian's chromium.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/perfdb/target}"
cargo build --release --quiet --bin perfdb
P="$CARGO_TARGET_DIR/release/perfdb"
TMP="$(mktemp -d)"; WH="$TMP/wh"
trap 'kill ${PID:-0} 2>/dev/null; rm -rf "$TMP"' EXIT
for side in base head; do
  "$P" --warehouse "$WH" ingest sample-data/h200-gemm/ab/aiter/$side --label $side >/dev/null
done
for c in sample-data/h200-gemm/history/c*; do
  n=$(basename "$c"); t="2026-07-01T${n#c}:00:00Z"
  "$P" --warehouse "$WH" ingest "$c"/*.aiter.log --label history --commit "$n" --commit-time "$t" >/dev/null
done
"$P" --warehouse "$WH" compare base head --control torch --save >/dev/null 2>&1 || true
"$P" --warehouse "$WH" detect --label history >/dev/null || true
PORT=18090
"$P" --warehouse "$WH" serve --bind "127.0.0.1:$PORT" 2>/dev/null & PID=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/api/runs" >/dev/null 2>&1 && break; sleep 0.1; done
KEY='%7B%22K%22%3A%224096%22%2C%22M%22%3A%22512%22%2C%22N%22%3A%224096%22%2C%22dtype%22%3A%22torch.bfloat16%22%7D'
shot() {
  local url="$2"; [[ "$url" == file://* ]] || url="http://127.0.0.1:$PORT$url"
  chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --hide-scrollbars --window-size=1400,1000 \
    --screenshot="docs/screenshots/$1.png" "$url" 2>/dev/null
}
shot overview "/?label=history&metric=latency"
shot runs "/runs"
shot chart "/chart?table=gemm_a16w16&metric=throughput&runs=base"
shot history "/history?table=gemm_a16w16&variant=triton&metric=latency&label=history&key=$KEY"
shot compare "/compare?base=base&head=head&control=torch"
shot alerts "/alerts"
SAVED="$(ls "$WH/alerts" | head -1)"
shot compare-saved "/compare?saved=$SAVED"
"$P" --warehouse "$WH" export-site "$TMP/site" >/dev/null
shot site-contents "file://$TMP/site/contents.html"
shot site-history "file://$TMP/site/$(grep -o 'history-[0-9a-f]*\.html' "$TMP/site/alerts.html" | head -1)"
ls -l docs/screenshots/*.png
