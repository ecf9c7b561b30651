#!/bin/bash
# The figures of BENCHMARKS.md, "Kernel identity: `run --affected` over 31 commits", from
# the nightly recorded on an H100 (sample-data/h100-affected/): the GPU-seconds each night
# reported as run, and the nights that time anything when the same identity passes are
# planned under this perfdb's rules (no audit; the stand-in prints the recorded trials,
# tests/fixtures/affected_pass.sh), priced at the seconds the device spent those nights.
#   PERFDB_BIN=target/debug/perfdb bash benches/affected_replay.sh
set -e
HERE=$(cd "$(dirname "$0")/.." && pwd)
S=$HERE/sample-data/h100-affected
B=${PERFDB_BIN:-perfdb}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
i=0
while read -r n c _ _; do
  mkdir -p "$W/st$i"
  if [ "$i" = 0 ]; then m=(--identity); else m=(--affected nightly@latest --audit 0); fi
  "$B" --warehouse "$W/wh" run --label nightly --commit "$c" --name bench --trials 4 "${m[@]}" \
    -- sh "$HERE/tests/fixtures/affected_pass.sh" "$S/c$i" "$W/st$i" > "$W/out$i" 2> /dev/null
  timed=$(grep -o ': [0-9]* row(s), [0-9]* timed' "$W/out$i" | awk '{print $4}')
  # The device's seconds that night: identity pass, timed passes.
  read -r id t < <(sed -n 's/^GPU-seconds: \([0-9.]*\) identity pass + \([0-9.]*\) timed.*/\1 \2/p' "$S/c$i/report.txt")
  echo "$i $timed $id $t"
  i=$((i + 1))
done < "$S/wall.txt" | awk '
  $1 == 0 { full = $4 }
  { id += $3; asrun += $4; if ($2 > 0) { now += $4; nights++ } }
  END {
    n = NR; every = n * full
    printf "nights %d, a full night %.1f s, every night in full %.0f s\n", n, full, every
    printf "as run: identity %.1f + timed %.1f = %.1f s (%.1fx; timed alone %.1fx)\n", id, asrun, id + asrun, every / (id + asrun), every / asrun
    printf "today: %d night(s) time anything; identity %.1f + timed %.1f = %.1f s (%.1fx; timed alone %.1fx)\n", nights, id, now, id + now, every / (id + now), every / now
    audit = (n - nights) * 0.05 * full
    printf "with the 5%% audit: +%.0f s: %.1fx (timed alone %.1fx)\n", audit, every / (id + now + audit), every / (now + audit)
    printf "identity pass after the first: mean %.1f s, %.0f%% of a full night\n", (id - first_id) / (n - 1), 100 * (id - first_id) / (n - 1) / full
  }
  $1 == 0 { first_id = $3 }'
