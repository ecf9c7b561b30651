"""A kernel's GPU energy per call, read by the benchmark around its own calls.

`perfdb ab --energy` and `perfdb bisect --energy` put this file first on the trials'
PYTHONPATH. A trial's own energy (NVML's counter across its whole process) holds the
process's start, its imports and every row; this file measures one row's calls alone:

    import perfdb_energy
    ms = triton.testing.do_bench(fn)          # the benchmark's timing, unchanged
    perfdb_energy.per_call(fn)                # then fn back to back, the counter around it
    print(row)                                # the row the reading belongs to

`per_call` runs `fn` back to back for at least PERFDB_ENERGY_SECONDS (0.5 s unless set;
or `calls=N` times) after a short warm-up, watching the counter's steps (`measure`), and
prints one line on standard output before the benchmark's row:

    perfdb-energy call {"calls": 1968, "joules": 530.1, "seconds": 1.04, "watts": 509.7, ...}

perfdb gives the reading to the row printed next (rows on lines of their own; a reading
that cannot be told to exactly one row is reported, not stored). `install()` does the
same after every `triton.testing.do_bench` without changing the benchmark: the sitecustomize
beside this file calls it when PERFDB_ENERGY_DO_BENCH is set. The timed calls are never
touched: the energy loop runs after the timing returned.

The GPU is PERFDB_ENERGY_GPU (an NVML index or UUID, which perfdb sets to the GPU the
trial was given), else the current torch device's UUID. Without NVML (no NVIDIA driver)
nothing is measured and one `perfdb-energy error` line says why, once.
"""

import ctypes
import json
import os
import sys
import time

PREFIX = "perfdb-energy"
_state = {"nvml": None, "handle": None, "said": False, "gpu": None}


def _say(kind, obj):
    sys.stdout.write(f"{PREFIX} {kind} {json.dumps(obj, sort_keys=True)}\n")
    sys.stdout.flush()


def _fail(why):
    if not _state["said"]:
        _state["said"] = True
        _say("error", {"why": why})
    return None


def _torch_uuid():
    try:
        import torch

        u = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "uuid", None)
        return None if u is None else "GPU-" + str(u)
    except Exception:
        return None


def _handle():
    if _state["handle"] is not None:
        return _state["handle"]
    try:
        lib = ctypes.CDLL(os.environ.get("PERFDB_NVML_LIBRARY") or "libnvidia-ml.so.1")
    except OSError as e:
        return _fail(f"NVML did not load: {e}")
    if lib.nvmlInit_v2() != 0:
        return _fail("NVML did not start")
    which = os.environ.get("PERFDB_ENERGY_GPU") or _torch_uuid()
    h = ctypes.c_void_p()
    if which is None:
        return _fail("no GPU named: PERFDB_ENERGY_GPU unset and torch gives no device UUID")
    if which.isdigit():
        rc = lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(int(which)), ctypes.byref(h))
    else:
        rc = lib.nvmlDeviceGetHandleByUUID(which.encode(), ctypes.byref(h))
    if rc != 0:
        return _fail(f"NVML has no GPU {which} (error {rc})")
    _state["nvml"], _state["handle"], _state["gpu"] = lib, h, which
    return h


def counter_j():
    """The GPU's total-energy counter in joules, or None."""
    h = _handle()
    if h is None:
        return None
    mj = ctypes.c_ulonglong()
    rc = _state["nvml"].nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(mj))
    if rc != 0:
        return _fail(f"NVML gives no energy counter for GPU {_state['gpu']} (error {rc})")
    return mj.value / 1e3


def _sync():
    try:
        import torch

        if torch.cuda.is_available():
            return torch.cuda.synchronize
    except ImportError:
        pass
    return lambda: None


def _gpu_clock(sync):
    """A clock of the device's own timeline (CUDA events) when torch has one: start()
    then stop() -> seconds; else the host's, after a synchronise."""
    try:
        import torch

        if torch.cuda.is_available():
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

            def stop():
                b.record()
                sync()
                return a.elapsed_time(b) / 1e3

            return a.record, stop
    except ImportError:
        pass
    t = {}

    def start():
        t["0"] = time.perf_counter()

    def stop_host():
        sync()
        return time.perf_counter() - t["0"]

    return start, stop_host


def measure(fn, seconds=None, sync=None, calls=None):
    """`fn` run back to back for about `seconds` (or exactly `calls` times) with NVML's
    counter watched: {"calls", "joules", "seconds", "watts", "ticks", "method", "gpu"},
    or None without a counter.

    NVML's counter moves in steps (every 100 ms on an H100), so the counter read before
    and after a loop is off by up to a step's energy (10% of a 0.5 s loop). Instead the
    loop runs until the counter has stepped three times: the energy between the first
    and the last step over the time between them (both seen within a batch of calls, about
    1 ms) is the loop's power, and power times the loop's own time a call (CUDA events) is
    the energy a call (`method` "ticks"). A counter that never stepped twice (a loop
    stopped by `calls`) falls back to the difference around the loop ("around")."""
    if seconds is None:
        seconds = float(os.environ.get("PERFDB_ENERGY_SECONDS", "0.5"))
    sync = sync or _sync()
    if counter_j() is None:
        return None
    # Warm-up, and the size of a batch: calls between readings of the counter, about
    # 1 ms of them, so the loop is the calls, not Python reading the counter.
    sync()
    t = time.perf_counter()
    fn()
    sync()
    one = max(time.perf_counter() - t, 1e-6)
    batch = max(1, min(1000, int(0.001 / one)))
    for _ in range(batch):
        fn()
    sync()
    start, stop = _gpu_clock(sync)
    e0 = last = counter_j()
    steps = []
    t0 = time.perf_counter()
    start()
    n = 0
    while True:
        for _ in range(batch):
            fn()
        n += batch
        v = counter_j()
        if v is None:
            return None
        if v != last:
            steps.append((time.perf_counter(), v))
            last = v
        if calls is not None:
            if n >= calls:
                break
        elif time.perf_counter() - t0 >= seconds and len(steps) >= 3:
            break
        elif time.perf_counter() - t0 >= max(10 * seconds, 2.0):
            break
    gpu_s = stop()
    e1 = counter_j()
    if e1 is None:
        return None
    out = {"calls": n, "seconds": round(gpu_s, 6), "ticks": len(steps), "gpu": _state["gpu"]}
    # The first step ends an interval the loop began inside of: whole intervals only.
    if len(steps) >= 3 and steps[-1][0] > steps[0][0]:
        watts = (steps[-1][1] - steps[0][1]) / (steps[-1][0] - steps[0][0])
        out.update(method="ticks", watts=round(watts, 3), joules=round(watts * gpu_s, 6))
    else:
        joules = e1 - e0
        out.update(method="around", watts=round(joules / gpu_s, 3) if gpu_s > 0 else None, joules=round(joules, 6))
    return out


def per_call(fn, seconds=None, sync=None, calls=None):
    """`measure`, printed for perfdb (the row printed next gets it); the reading."""
    got = measure(fn, seconds, sync, calls)
    if got is not None:
        _say("call", got)
    return got


def install():
    """`per_call` after every `triton.testing.do_bench` of the process."""
    try:
        import triton.testing as testing
    except Exception as e:
        return _fail(f"no triton.testing.do_bench to measure after: {e!r}")
    do_bench = testing.do_bench

    def do_bench_then_energy(fn, *args, **kwargs):
        got = do_bench(fn, *args, **kwargs)
        per_call(fn)
        return got

    testing.do_bench = do_bench_then_energy
    return True
