#!/usr/bin/env bash
# perfdb bisect's own cost: a generated repository of N commits (default 20) whose `[perf]`
# script (a few ms, 1-2% noise seeded by the trial's count) steps +30% at commit STEP
# (default 13), bisected RUNS times (default 3) on a fresh warehouse each time, release
# build. Prints each run's wall and max RSS, then the steps the last run took, its ends'
# check, and the trials it stored (warm-ups included): the runs a culprit cost.
#
#   bash benches/bisect.sh [N=20] [STEP=13] [RUNS=3]
#   PERFDB_BIN=path/to/perfdb bash benches/bisect.sh ...   (a build already made)
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-20}"; STEP="${2:-13}"; RUNS="${3:-3}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/perfdb/target}"
if [ -n "${PERFDB_BIN:-}" ]; then
  P="$PERFDB_BIN"
else
  cargo build --release --quiet --bin perfdb
  P="$CARGO_TARGET_DIR/release/perfdb"
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
R="$TMP/r"
git init -q -b main "$R"
cat > "$R/bench.sh" <<'SH'
n=$(cat .trial 2>/dev/null || echo 0); n=$((n + 1)); echo $n > .trial
awk -v n="$n" -v base="$(cat kernel.conf)" 'BEGIN { srand(n * 7919 + 17)
  printf "[perf] dim: (64,) dtype: bf16, torch avg: %.3f us, ck avg: %.3f us\n", 5 * (1 + 0.004 * (rand() - 0.5)), base * (1 + 0.02 * (rand() + rand() + rand() - 1.5)) }'
SH
echo .trial > "$R/.gitignore"
for i in $(seq 0 "$N"); do
  if [ "$i" -ge "$STEP" ]; then echo 13 > "$R/kernel.conf"; else echo 10 > "$R/kernel.conf"; fi
  echo "$i" > "$R/n.txt"
  git -C "$R" add -A
  git -C "$R" -c user.name=bench -c user.email=bench@example.com commit -qm "c$i"
done
for _ in $(seq "$RUNS"); do
  rm -rf "$TMP/wh"
  (cd "$TMP" && /usr/bin/time -f "wall %e s, max RSS %M KB" "$P" --warehouse "$TMP/wh" bisect \
    --repo "$R" --good "main~$N" --bad main --quiet --control torch --seed 7 --format json \
    -- sh bench.sh 2>&1 >"$TMP/out.json" | tail -1)
done
python3 -c "
import json; v = json.load(open('$TMP/out.json'))
e = v.get('ends') or {}
print(len(v['steps']), 'steps, culprit', v['parts'][0]['culprit']['subject'] if v['parts'] else v['range'],
      '| ends:', e.get('found'), e.get('trials_a_side'), 'a side | trials (seconds):', round(v['gpu_seconds'], 1))"
echo "trials stored: $("$P" --warehouse "$TMP/wh" sql --format json "SELECT count(*) AS n FROM runs" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["n"])')"
