"""Triton's own record of an autotune, kept for replay: an add with two near-tied configs
(BLOCK 1024 at 4 and at 8 warps) and `cache_results=True`, run in N fresh processes each
with its own `TRITON_CACHE_DIR`; every `*.autotune.json` the cache holds is copied out, as
`OUT/process-<i>/<file>`, with the winner each process printed.

    python autotune_capture.py OUT [N=8]
"""
import glob
import json
import os
import shutil
import subprocess
import sys

TUNED = '''
import json, torch, triton, triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=4),
                          triton.Config({"BLOCK": 1024}, num_warps=8)], key=["n"],
                 cache_results=True)
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
b = tuned_add.best_config
print(json.dumps({"kwargs": b.kwargs, "num_warps": b.num_warps, "num_stages": b.num_stages}))
'''


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    work = os.path.join(out, "work")
    os.makedirs(work, exist_ok=True)
    script = os.path.join(work, "tuned.py")
    open(script, "w").write(TUNED)
    printed = []
    for i in range(n):
        cache = os.path.join(work, f"cache-{i}")
        env = dict(os.environ, TRITON_CACHE_DIR=cache)
        p = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True)
        printed.append(p.stdout.strip().splitlines()[-1] if p.returncode == 0 else "failed: " + p.stderr[-600:])
        dest = os.path.join(out, f"process-{i}")
        os.makedirs(dest, exist_ok=True)
        for f in glob.glob(os.path.join(cache, "*", "*.autotune.json")):
            shutil.copy(f, os.path.join(dest, os.path.basename(f)))
        for f in glob.glob(os.path.join(cache, "*", "*.json")):
            if "autotune" not in f and not os.path.basename(f).startswith("__grp__"):
                shutil.copy(f, os.path.join(dest, "compiled-" + os.path.basename(os.path.dirname(f))[:12] + ".json"))
    json.dump(printed, open(os.path.join(out, "printed.json"), "w"), indent=1)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
