"""What identifies a compiled Triton kernel, measured: six kernels (the tutorials' add,
softmax, layernorm and matmul, plus a scaled ReLU and a row sum), compiled in a fresh
`TRITON_CACHE_DIR` for each of several edits of their source, and every artefact Triton
keeps for each kernel hashed raw and with its source locations stripped. Also the cost of
one identity pass (each kernel launched once, compile included) against a timed run of
the same kernels (`triton.testing.do_bench`), and an autotuned kernel with two near-tied
configs, its winner recorded over fresh processes.

    python kernel_identity.py OUT [PROCESSES=8]

Writes OUT/identity.json (per edit, per kernel: the hash of each artefact, raw and
stripped; the Triton cache key), OUT/cost.json and OUT/autotune.json. Needs torch and
triton with a GPU; nothing is fetched.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time

KERNELS = '''
import torch
import triton
import triton.language as tl

SCALE = 2.0  # a Python constant outside every kernel


@triton.jit
def _helper(x):
    # a shared helper: relu
    return tl.where(x > 0, x, 0.0)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr = 1024):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def relu_scale_kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, _helper(x) * scale, mask=mask)


@triton.jit
def rowsum_kernel(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(_helper(x), axis=0))


@triton.jit
def softmax_kernel(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * cols + offs, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / cols
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / cols
    y = d / tl.sqrt(var + eps)
    w = tl.load(w_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + row * cols + offs, y * w + b, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def run_all(timed=False):
    import triton.testing
    dev = "cuda"
    n = 1 << 20
    x = torch.randn(n, device=dev)
    y = torch.randn(n, device=dev)
    o = torch.empty_like(x)
    r, c = 4096, 1024
    m = torch.randn(r, c, device=dev)
    mo = torch.empty_like(m)
    s = torch.empty(r, device=dev)
    w = torch.randn(c, device=dev)
    b = torch.randn(c, device=dev)
    A = torch.randn(1024, 1024, device=dev, dtype=torch.float16)
    B = torch.randn(1024, 1024, device=dev, dtype=torch.float16)
    C = torch.empty(1024, 1024, device=dev, dtype=torch.float16)
    calls = {
        "add_kernel": lambda: add_kernel[(triton.cdiv(n, 1024),)](x, y, o, n),
        "relu_scale_kernel": lambda: relu_scale_kernel[(triton.cdiv(n, 1024),)](x, o, n, SCALE, BLOCK=1024),
        "rowsum_kernel": lambda: rowsum_kernel[(r,)](m, s, c, BLOCK=1024),
        "softmax_kernel": lambda: softmax_kernel[(r,)](m, mo, c, BLOCK=1024),
        "layernorm_kernel": lambda: layernorm_kernel[(r,)](m, w, b, mo, c, 1e-5, BLOCK=1024),
        "matmul_kernel": lambda: matmul_kernel[(1024 // 64, 1024 // 64)](A, B, C, 1024, 1024, 1024, BM=64, BN=64, BK=32),
    }
    out = {}
    for name, f in calls.items():
        if timed:
            out[name] = triton.testing.do_bench(f, warmup=25, rep=100)
        else:
            f()
    torch.cuda.synchronize()
    return out
'''

# The edits: (name, old, new) applied to KERNELS; "other_file" changes only a file beside it.
EDITS = [
    ("base", None, None),
    ("comment_in_kernel", "    pid = tl.program_id(0)\n    offs = pid * BLOCK + tl.arange(0, BLOCK)\n    mask = offs < n\n    x = tl.load(x_ptr + offs, mask=mask)\n    y = tl.load(y_ptr + offs, mask=mask)",
     "    pid = tl.program_id(0)\n    # the block this program adds\n    offs = pid * BLOCK + tl.arange(0, BLOCK)\n    mask = offs < n\n    x = tl.load(x_ptr + offs, mask=mask)\n    y = tl.load(y_ptr + offs, mask=mask)"),
    ("shared_helper", "    return tl.where(x > 0, x, 0.0)", "    return tl.where(x > 0, x, 0.01 * x)"),
    ("constexpr_default", "BLOCK: tl.constexpr = 1024):", "BLOCK: tl.constexpr = 512):"),
    ("python_constant", "SCALE = 2.0", "SCALE = 3.0"),
    ("line_shift", "import torch\nimport triton", "import torch\n\n\nimport triton"),
    ("other_file", None, None),
]

LOC = [
    (r"\s*loc\([^()]*(\([^()]*\))?[^()]*\)", ""),  # MLIR locations
    (r"#loc\d*\s*=.*\n", ""),
    (r"^\s*\.loc\s.*\n", ""),  # PTX .loc lines
    (r"^\s*\.file\s.*\n", ""),
    (r"^\s*//.*\n", ""),
    (r"!dbg ![0-9]+", ""),  # LLVM debug metadata
    (r"^!.*\n", ""),
]


def strip(text):
    for pat, rep in LOC:
        text = re.sub(pat, rep, text, flags=re.M)
    return text


def sha(b):
    return hashlib.sha256(b).hexdigest()[:16]


def compile_variant(work, name, source, other):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "kernels.py"), "w") as f:
        f.write(source)
    with open(os.path.join(d, "bench_side.py"), "w") as f:
        f.write(other)
    cache = os.path.join(d, "cache")
    env = dict(os.environ, TRITON_CACHE_DIR=cache, PYTHONPATH=d)
    t = time.time()
    subprocess.run([sys.executable, "-c", "import kernels; kernels.run_all()"], check=True, env=env, cwd=d)
    first = time.time() - t
    t = time.time()
    subprocess.run([sys.executable, "-c", "import kernels; kernels.run_all()"], check=True, env=env, cwd=d)
    warm = time.time() - t
    t = time.time()
    p = subprocess.run([sys.executable, "-c", "import json, kernels; print(json.dumps(kernels.run_all(True)))"],
                       check=True, env=env, cwd=d, capture_output=True, text=True)
    timed = time.time() - t
    kernels = {}
    for key in sorted(os.listdir(cache)):
        kd = os.path.join(cache, key)
        metas = [f for f in os.listdir(kd) if f.endswith(".json") and not f.startswith("__grp__")]
        for mf in metas:
            kname = mf[:-5]
            arts = {}
            for f in sorted(os.listdir(kd)):
                if not f.startswith(kname + "."):
                    continue
                ext = f.split(".", 1)[1]
                raw = open(os.path.join(kd, f), "rb").read()
                arts[ext] = {"raw": sha(raw)}
                if ext in ("ttir", "ttgir", "llir", "ptx", "source", "amdgcn"):
                    arts[ext]["stripped"] = sha(strip(raw.decode("utf-8", "replace")).encode())
            meta = json.load(open(os.path.join(kd, mf)))
            kernels.setdefault(kname, []).append({"cache_key": key, "hash": meta.get("hash"), "artefacts": arts})
    return {"kernels": kernels, "seconds": {"first_pass": first, "warm_pass": warm, "timed_pass": timed},
            "do_bench_ms": json.loads(p.stdout.strip().splitlines()[-1])}


AUTOTUNE = '''
import json, sys, torch, triton, triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=4),
                          triton.Config({"BLOCK": 1024}, num_warps=8)], key=["n"])
@triton.jit
def tuned_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

n = 1 << 22
x = torch.randn(n, device="cuda"); y = torch.randn(n, device="cuda"); o = torch.empty_like(x)
tuned_add[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, y, o, n)
torch.cuda.synchronize()
best = tuned_add.best_config
print(json.dumps({"kwargs": best.kwargs, "num_warps": best.num_warps, "num_stages": best.num_stages,
                  "timings": {str(k): v for k, v in getattr(tuned_add, "configs_timings", {}).items()} if hasattr(tuned_add, "configs_timings") else None}))
'''


def main():
    out = sys.argv[1]
    procs = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    os.makedirs(out, exist_ok=True)
    work = os.path.join(out, "work")
    result = {}
    for name, old, new in EDITS:
        src = textwrap.dedent(KERNELS)
        other = "ROWS = [1024, 2048]\n"
        if old is not None:
            assert old in src, name
            src = src.replace(old, new, 1)
        if name == "other_file":
            other = "ROWS = [1024, 2048, 4096]\n"
        result[name] = compile_variant(work, name, src, other)
        print(name, {k: len(v) for k, v in result[name]["kernels"].items()}, result[name]["seconds"], flush=True)
    json.dump(result, open(os.path.join(out, "identity.json"), "w"), indent=1, sort_keys=True)
    # Which artefact changed against base, per edit and kernel.
    base = result["base"]["kernels"]
    table = {}
    for name in result:
        for k, entries in result[name]["kernels"].items():
            b = base.get(k, [{}])[0].get("artefacts", {})
            a = entries[0]["artefacts"]
            table.setdefault(name, {})[k] = {ext: {form: a[ext][form] != b.get(ext, {}).get(form)
                                                   for form in a[ext]} for ext in a}
    json.dump(table, open(os.path.join(out, "changed.json"), "w"), indent=1, sort_keys=True)
    winners = []
    with open(os.path.join(out, "tuned.py"), "w") as f:
        f.write(AUTOTUNE)
    for i in range(procs):
        cache = os.path.join(work, f"autotune-{i}")
        env = dict(os.environ, TRITON_CACHE_DIR=cache)
        p = subprocess.run([sys.executable, os.path.join(out, "tuned.py")], env=env, capture_output=True, text=True)
        winners.append(p.stdout.strip().splitlines()[-1] if p.returncode == 0 else "failed: " + p.stderr[-400:])
    json.dump(winners, open(os.path.join(out, "autotune.json"), "w"), indent=1)
    with open(os.path.join(out, "versions.txt"), "w") as f:
        import torch, triton
        f.write(f"torch {torch.__version__}\ntriton {triton.__version__}\ncuda {torch.version.cuda}\n"
                f"device {torch.cuda.get_device_name(0)}\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
