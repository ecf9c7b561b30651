#!/bin/bash
# How much slower the background load (background.py) makes a GPU, on one GPU: the add
# of examples/h200/energy/bench.py timed alone and beside each load, three processes
# each, interleaved. Prints `load us_alone us_beside slowdown%` per load.
#   calibrate.sh OUT [LOADS...]   (a load is MB:PAUSE_MS; default 4:1 16:1 64:1 64:0.2)
set -u
OUT=$(realpath -m "$1"); shift
mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
B="$HERE/../energy/bench.py"
loads=${*:-4:1 16:1 64:1 64:0.2}
us() { CALLS=2000 python "$B" | sed -n 's/.*torch avg: \([0-9.]*\) us/\1/p'; }
for load in $loads; do
  mb=${load%%:*}; pause=${load##*:}
  alone=(); beside=()
  for r in 1 2 3; do
    alone+=("$(us)")
    MB=$mb PAUSE_MS=$pause python "$HERE/background.py" > "$OUT/bg.txt" 2>&1 &
    bg=$!
    for _ in $(seq 150); do grep -q ready "$OUT/bg.txt" 2>/dev/null && break; sleep 0.2; done
    beside+=("$(us)")
    kill $bg; wait $bg 2>/dev/null
  done
  python3 - "$load" "${alone[*]}" "${beside[*]}" <<'PY' | tee -a "$OUT/calibrate.txt"
import statistics as st, sys
a = [float(v) for v in sys.argv[2].split()]; b = [float(v) for v in sys.argv[3].split()]
print("%-8s %9.2f %9.2f %+6.2f%%  (alone %s; beside %s)" % (sys.argv[1], st.median(a), st.median(b), 100 * (st.median(b) / st.median(a) - 1), sys.argv[2], sys.argv[3]))
PY
done
nvidia-smi -L > "$OUT/gpu.txt"
