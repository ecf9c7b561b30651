#!/bin/bash
# The figures of BENCHMARKS.md, "Kernel identity: `run --affected` over 31 commits", from
# the nightly recorded on an H100 (sample-data/h100-affected/): each night is replayed
# through this perfdb with the device's flags (the stand-in prints the recorded trials,
# tests/fixtures/affected_pass.sh) and must time as many rows as the device did; the
# seconds are the GPU-seconds the device's reports give, and a night in full is the
# recording's `full` line (four plain `perfdb run`s of the last commit).
#   PERFDB_BIN=target/debug/perfdb bash benches/affected_replay.sh
set -e
HERE=$(cd "$(dirname "$0")/.." && pwd)
S=$HERE/sample-data/h100-affected
B=${PERFDB_BIN:-perfdb}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
full=$(awk '$1 == "full" { print $2 }' "$S/wall.txt")
i=0
grep -E '^[0-9]+ ' "$S/wall.txt" | while read -r n c _ _; do
  mkdir -p "$W/st$i"
  if [ "$i" = 0 ]; then m=(--identity); else m=(--affected nightly@latest); fi
  "$B" --warehouse "$W/wh" run --label nightly --commit "$c" --name bench --trials 4 "${m[@]}" \
    -- sh "$HERE/tests/fixtures/affected_pass.sh" "$S/c$i" "$W/st$i" > "$W/out$i" 2> /dev/null || true
  count() { grep -o ': [0-9]* row(s), [0-9]* timed' "$1" | awk '{print $4}'; }
  if [ "$(count "$W/out$i")" != "$(count "$S/c$i/report.txt")" ]; then
    echo "night $i: the replay timed $(count "$W/out$i") row(s), the device $(count "$S/c$i/report.txt")" >&2
    exit 1
  fi
  # The device's seconds that night: identity pass, timed passes; whether only an audit ran.
  read -r id t < <(sed -n 's/^GPU-seconds: \([0-9.]*\) identity pass + \([0-9.]*\) timed.*/\1 \2/p' "$S/c$i/report.txt")
  audit_only=$(awk '/^timed:/ { on = 1; next } /^$/ { on = 0 } on && /  \[/ { n++; if ($0 !~ /  \[audit: /) other = 1 } END { print (n > 0 && !other) ? 1 : 0 }' "$S/c$i/report.txt")
  echo "$i $(count "$S/c$i/report.txt") $id $t $audit_only"
  i=$((i + 1))
done | awk -v full="$full" '
  $1 == 0 { first_id = $3 }
  { id += $3; timed += $4; if ($2 > 0) nights++; if ($5) { whole++; whole_s += $4 } }
  END {
    n = NR; every = n * full
    printf "nights %d; a night in full %.1f s; every night in full %.0f s\n", n, full, every
    printf "identity passes %.1f s + timed passes %.1f s = %.1f s: %.2fx fewer; timed passes alone %.2fx fewer\n", id, timed, id + timed, every / (id + timed), every / timed
    printf "%d night(s) timed anything, %d of them only an audit drawn whole (%.1f s)\n", nights, whole, whole_s
    printf "without those audits: %.2fx fewer (timed alone %.2fx)\n", every / (id + timed - whole_s), every / (timed - whole_s)
    printf "identity pass after the first: mean %.2f s, %.1f%% of a night in full\n", (id - first_id) / (n - 1), 100 * (id - first_id) / (n - 1) / full
  }'
