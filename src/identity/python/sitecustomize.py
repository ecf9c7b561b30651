"""perfdb's launch recorder, put first on PYTHONPATH by `perfdb run --affected`.

In the identity pass (PERFDB_IDENTITY_DIR set) every Triton kernel launch is recorded:
one `perfdb-identity launch {...}` line on standard output (the stream the
benchmark prints its rows on, so a launch comes before the row it was timed for) (the kernel, the hash of its
compile, its source's key, the grid and the arguments' shapes and dtypes) and, the first
time a compile is seen, its TTGIR and metadata under PERFDB_IDENTITY_DIR/<hash>/, which
perfdb reads as the kernel's code. `triton.testing.do_bench` calls the function once and
returns that one call's time instead of timing it: the pass runs the benchmark's code
paths without its repetitions. An autotuner still benchmarks its configs for real, so
the pass launches the winner a timed run would most likely launch. Benchmarks with timing
loops of their own can read PERFDB_PASS=identity and shorten themselves.

Outside the identity pass this file does nothing. Nothing here changes what a kernel
computes.
"""

import json
import os
import sys

_PREFIX = "perfdb-identity"


def _emit(kind, obj):
    sys.stdout.write(f"{_PREFIX} {kind} {json.dumps(obj, sort_keys=True, default=str)}\n")
    sys.stdout.flush()


def _toolchain():
    out = {}
    try:
        import triton

        out["triton"] = triton.__version__
    except Exception:
        pass
    try:
        import torch

        out["torch"] = torch.__version__
        if getattr(torch.version, "cuda", None):
            out["cuda"] = torch.version.cuda
        if getattr(torch.version, "hip", None):
            out["hip"] = torch.version.hip
        if torch.cuda.is_available():
            out["device"] = torch.cuda.get_device_name()
            out["capability"] = "%d.%d" % torch.cuda.get_device_capability()
    except Exception:
        pass
    for path, key in (("/proc/driver/nvidia/version", "driver"), ("/sys/module/amdgpu/version", "driver")):
        try:
            with open(path) as f:
                line = f.readline()
            words = [w for w in line.split() if w[:1].isdigit() and "." in w]
            out[key] = words[0] if words else line.strip()
            break
        except OSError:
            pass
    return out


def _describe(a):
    shape = getattr(a, "shape", None)
    dtype = getattr(a, "dtype", None)
    if shape is not None and dtype is not None:
        return ["tensor", [int(s) for s in shape], str(dtype)]
    if isinstance(a, (bool, int, float, str)) or a is None:
        return a
    return type(a).__name__


def _install(out):
    import triton.runtime.jit as jit
    import triton.testing as testing

    state = {"tuning": 0, "seen": set(), "last": None, "toolchain": False}

    try:
        from triton.runtime.autotuner import Autotuner

        bench = Autotuner._bench

        def _bench(self, *args, **kwargs):
            state["tuning"] += 1
            try:
                return bench(self, *args, **kwargs)
            finally:
                state["tuning"] -= 1

        Autotuner._bench = _bench
        tuned_run = Autotuner.run

        def run_tuned(self, *args, **kwargs):
            got = tuned_run(self, *args, **kwargs)
            best = getattr(self, "best_config", None)
            if best is not None:
                named = dict(zip(getattr(self, "arg_names", []), args))
                named.update(kwargs)
                _emit("autotune", {
                    "kernel": getattr(getattr(self, "fn", None), "__name__", "?"),
                    "key": [str(named.get(k)) for k in getattr(self, "keys", [])],
                    "winner": str(best),
                    "configs": sorted(str(c) for c in getattr(self, "configs", [])),
                })
            return got

        Autotuner.run = run_tuned
    except Exception as e:  # an autotuner of another shape: launches are still recorded
        _emit("note", {"autotune": repr(e)})

    def record(fn, kernel, args, kwargs, grid):
        md = kernel.metadata
        h = md.hash
        name = md.name
        if h not in state["seen"]:
            state["seen"].add(h)
            d = os.path.join(out, h)
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, name + ".ttgir"), "w") as f:
                f.write(kernel.asm["ttgir"])
            meta = md._asdict() if hasattr(md, "_asdict") else dict(md.__dict__)
            target = meta.get("target")
            if target is not None and not isinstance(target, dict):
                meta["target"] = {k: getattr(target, k, None) for k in ("backend", "arch", "warp_size")}
            with open(os.path.join(d, name + ".json"), "w") as f:
                json.dump(meta, f, default=str)
        if not state["toolchain"]:
            state["toolchain"] = True
            _emit("toolchain", _toolchain())
        named = dict(zip(getattr(fn, "arg_names", []), args))
        named.update(kwargs)
        g = grid(named) if callable(grid) else grid
        line = {
            "kernel": name,
            "hash": h,
            "source": getattr(fn, "cache_key", None),
            "grid": [int(x) for x in g],
            "args": [_describe(a) for a in args],
            "options": {k: v for k, v in sorted(kwargs.items()) if isinstance(v, (bool, int, float, str))},
        }
        text = json.dumps(line, sort_keys=True, default=str)
        if text != state["last"]:
            state["last"] = text
            sys.stdout.write(f"{_PREFIX} launch {text}\n")
            sys.stdout.flush()

    run = jit.JITFunction.run

    def run_recorded(self, *args, grid, warmup, **kwargs):
        kernel = run(self, *args, grid=grid, warmup=warmup, **kwargs)
        if not warmup and not state["tuning"] and kernel is not None:
            try:
                record(self, kernel, args, kwargs, grid)
            except Exception as e:
                _emit("error", {"kernel": getattr(self, "__name__", "?"), "why": repr(e)})
        return kernel

    jit.JITFunction.run = run_recorded

    do_bench = testing.do_bench

    def once(fn, *args, **kwargs):
        if state["tuning"]:
            return do_bench(fn, *args, **kwargs)
        import time

        try:
            import torch

            sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
        except ImportError:
            sync = lambda: None  # noqa: E731
        sync()
        t = time.perf_counter()
        fn()
        sync()
        ms = (time.perf_counter() - t) * 1e3
        quantiles = kwargs.get("quantiles")
        return [ms] * len(quantiles) if quantiles else ms

    testing.do_bench = once
    _emit("ready", {"pid": os.getpid()})


_out = os.environ.get("PERFDB_IDENTITY_DIR")
if _out:
    try:
        _install(_out)
    except Exception as e:  # no Triton here: perfdb sees no launch and runs everything
        _emit("error", {"why": repr(e)})
