"""A kernel's GPU energy per call, read by the benchmark around its own calls.

`perfdb ab --energy` and `perfdb bisect --energy` put this file first on the trials'
PYTHONPATH. A trial's own energy (NVML's counter across its whole process) holds the
process's start, its imports and every row; this file measures one row's calls alone:

    import perfdb_energy
    ms = triton.testing.do_bench(fn)          # the benchmark's timing, unchanged
    perfdb_energy.per_call(fn)                # then fn back to back, the counter around it
    print(row)                                # the row the reading belongs to

`per_call` runs `fn` back to back for PERFDB_ENERGY_SECONDS (0.5 s unless set; or
`calls=N` times) after a short warm-up, the device synchronised at both ends, and
prints one line on standard output before the benchmark's row:

    perfdb-energy call {"calls": 950, "joules": 301.2, "seconds": 0.503, "gpu": "GPU-..."}

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


def measure(fn, seconds=None, sync=None, calls=None):
    """`fn` run back to back for about `seconds` (or exactly `calls` times), NVML's counter
    read around the calls: {"calls", "joules", "seconds", "gpu"}, or None without a
    counter."""
    if seconds is None:
        seconds = float(os.environ.get("PERFDB_ENERGY_SECONDS", "0.5"))
    sync = sync or _sync()
    if counter_j() is None:
        return None
    # Warm-up, and the size of a batch: batches of calls between clock checks, so the
    # loop is the calls, not Python reading the time.
    sync()
    t = time.perf_counter()
    fn()
    sync()
    one = max(time.perf_counter() - t, 1e-6)
    batch = max(1, min(1000, int(0.01 / one)))
    for _ in range(batch):
        fn()
    sync()
    e0, t0 = counter_j(), time.perf_counter()
    if calls is not None:
        for _ in range(calls):
            fn()
    else:
        calls = 0
        while True:
            for _ in range(batch):
                fn()
            calls += batch
            if time.perf_counter() - t0 >= seconds:
                break
    sync()
    e1, t1 = counter_j(), time.perf_counter()
    if e0 is None or e1 is None:
        return None
    return {"calls": calls, "joules": round(e1 - e0, 6), "seconds": round(t1 - t0, 6), "gpu": _state["gpu"]}


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
