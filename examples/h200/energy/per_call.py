"""NVML's energy counter around a kernel's calls, on one GPU: how often the counter
moves, and how close `perfdb_energy.measure` comes over short loops to a long one.

  python examples/h200/energy/per_call.py   (PYTHONPATH holding src/trials/python;
                                             LOOPS=0.5,1 for other loop lengths, s)

Prints `tick ...` (the counter's update interval, idle and under load) and one line
`loop KIND INPUT SECONDS J_PER_CALL CALLS W METHOD STEPS` per measurement."""
import os
import statistics
import sys
import time

import torch
import perfdb_energy as pe

n = 1 << 27


def ticks(seconds):
    last, at, gaps = pe.counter_j(), time.perf_counter(), []
    end = at + seconds
    while time.perf_counter() < end:
        v = pe.counter_j()
        if v != last:
            now = time.perf_counter()
            gaps.append((now - at) * 1e3)
            last, at = v, now
    gaps = gaps[1:]
    return gaps


g = ticks(1.0)
print(f"tick idle n={len(g)} median_ms={statistics.median(g) if g else 0:.2f} min={min(g, default=0):.2f} max={max(g, default=0):.2f}")
x = torch.randn(n, device="cuda")
y = torch.randn(n, device="cuda")
out = torch.empty(n, device="cuda")
for _ in range(4000):
    torch.add(x, y, out=out)
g = ticks(1.0)
torch.cuda.synchronize()
print(f"tick load n={len(g)} median_ms={statistics.median(g) if g else 0:.2f} min={min(g, default=0):.2f} max={max(g, default=0):.2f}", flush=True)

for kind in ("add", "add2"):
    for inp in ("random", "zeros"):
        if kind == "add2" and inp == "zeros":
            continue
        make = torch.zeros if inp == "zeros" else torch.randn
        x, y = make(n, device="cuda"), make(n, device="cuda")

        def call():
            torch.add(x, y, out=out)
            if kind == "add2":
                torch.add(out, y, out=out)

        for secs in [float(x) for x in os.environ.get("LOOPS", "0.1,0.25,0.5,1,5").split(",")]:
            for _ in range(5 if secs < 5 else 2):
                m = pe.measure(call, secs)
                print(f"loop {kind} {inp} {secs} {m['joules'] / m['calls']:.6f} {m['calls']} {m['watts']:.1f} {m['method']} {m['ticks']}", flush=True)

# Triton's do_bench, unchanged by the hook: its times with and without install().
try:
    import triton
    import triton.language as tl
    import triton.testing as tt

    @triton.jit
    def add_kernel(x_ptr, y_ptr, o_ptr, n_el, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        m = offs < n_el
        tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    tadd = lambda: add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)  # noqa: E731
    plain = tt.do_bench
    pe.install()
    hooked = tt.do_bench
    for i in range(6):
        a = plain(tadd)
        b = hooked(tadd)
        print(f"do_bench plain_ms={a:.5f} hooked_ms={b:.5f}", flush=True)
except Exception as e:
    print(f"triton: {e!r}", file=sys.stderr)
