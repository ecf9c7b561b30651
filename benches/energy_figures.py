"""The figures of BENCHMARKS.md, "Energy", from the trials recorded on an H100
(sample-data/h100-energy/trials.csv): how the NVML counter's energy of each trial
compares with the sampler's integrated power, and each arm's energy, seconds, power and
spread. The verdicts are the recorded reports' (`*.txt` there), which
`tests/it/energy.rs` replays.
  python3 benches/energy_figures.py
"""
import csv
import os
import statistics as st

HERE = os.path.dirname(os.path.abspath(__file__))
rows = list(csv.DictReader(open(os.path.join(HERE, "..", "sample-data", "h100-energy", "trials.csv"))))
ratio = [float(r["energy_j"]) / float(r["power_integrated_j"]) for r in rows]
print(
    "counter / integrated over %d trials: %.3f-%.3f, mean %.3f, median deviation %.1f%%, within 5%%: %d"
    % (len(ratio), min(ratio), max(ratio), st.mean(ratio), 100 * st.median(abs(x - 1) for x in ratio),
       sum(abs(x - 1) < 0.05 for x in ratio))
)
arms = {}
for r in rows:
    arms.setdefault((r["experiment"], r["arm"], r["command"]), []).append(r)
for (exp, arm, cmd), v in arms.items():
    e = [float(x["energy_j"]) for x in v]
    s = [float(x["duration_s"]) for x in v]
    us = [float(x["add_us"]) for x in v]
    print(
        "%-8s %-4s %2d trials: %4.0f J (spread %.1f%%), %.2f s, %3.0f W, add %.2f us (spread %.3f%%)  [%s]"
        % (exp, arm, len(v), st.mean(e), 100 * st.stdev(e) / st.mean(e), st.mean(s), st.mean(e) / st.mean(s),
           st.mean(us), 100 * st.stdev(us) / st.mean(us), cmd.split(" python")[0])
    )
