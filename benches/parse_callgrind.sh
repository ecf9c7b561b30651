#!/usr/bin/env bash
# Instructions spent in parsing (perfdb_ingest::formats::parse_in and what it calls),
# one parse of each named input of examples/parse_prof.rs, under callgrind: a count
# that stays put when the machine is busy, for comparing two versions of a parser.
#   bash benches/parse_callgrind.sh [NAME...]      (names as parse_prof takes them)
# Needs valgrind. Builds the example first.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --example parse_prof -q
bin="${CARGO_TARGET_DIR:-target}/release/examples/parse_prof"
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(triton_csv torch pytest google rocm aiter_tuned flydsl serving aorta triton_perf aiter_2000)
out=$(mktemp)
for n in "${names[@]}"; do
  PERFDB_PARSE_ITERS=1 valgrind --tool=callgrind --callgrind-out-file="$out" \
    --toggle-collect='perfdb_ingest::formats::parse_in*' "$bin" "$n" >/dev/null 2>&1
  printf '%-14s %s\n' "$n" "$(callgrind_annotate "$out" | awk '/PROGRAM TOTALS/ {print $1}')"
done
rm -f "$out"
