"""The figures of BENCHMARKS.md, "Energy per call", from what was recorded on an H100
(sample-data/h100-energy-per-call/counter-around-loop/): the counter's step interval and
each loop length's energy a call (`per_call.txt`), `do_bench` with and without the
hook, the GPU seconds a reading took (the trials' `perfdb-energy call` lines), and each
experiment's verdicts as `ab` printed them (`NAME.txt`; `tests/it/energy_per_call.rs`
reaches them again by ingesting the trials' outputs and comparing).
  python3 benches/energy_per_call.py
"""
import glob
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
REC = os.path.join(HERE, "..", "sample-data", "h100-energy-per-call", "counter-around-loop")
lines = open(os.path.join(REC, "per_call.txt")).read().splitlines()
for l in lines:
    if l.startswith("tick "):
        print(l)
loops = {}
for l in lines:
    if l.startswith("loop "):
        _, kind, inp, secs, j, *_ = l.split()
        loops.setdefault((kind, inp, secs), []).append(float(j))
for (kind, inp, secs), js in loops.items():
    print("loop %-4s %-6s %4s s: %d loops, %.3f-%.3f J a call" % (kind, inp, secs, len(js), min(js), max(js)))
plain = [float(m) for m in re.findall(r"plain_ms=([0-9.]+)", "\n".join(lines))]
hooked = [float(m) for m in re.findall(r"hooked_ms=([0-9.]+)", "\n".join(lines))]
print("do_bench %d pairs: plain %.4f-%.4f ms, hooked %.4f-%.4f ms" % (len(plain), min(plain), max(plain), min(hooked), max(hooked)))
for exp in ("planted", "time", "aa1", "dobench"):
    secs = []
    for f in glob.glob(os.path.join(REC, exp, "*.out")):
        for l in open(f):
            if l.startswith("perfdb-energy call "):
                secs.append(json.loads(l.split(" ", 2)[2])["seconds"])
    print("%-8s a reading: %.2f-%.2f s of GPU time over %d readings" % (exp, min(secs), max(secs), len(secs)))
    for l in open(os.path.join(REC, exp + ".txt")):
        if l.startswith("  ") or l.startswith("ab: stopped"):
            print("  " + " ".join(l.split()))
