"""A repository of 31 commits over seven real Triton kernels, for `perfdb run --affected`
measured nightly (examples/h200/affected/nightly.sh).

    python make_repo.py DIR [EXPECT.json]

The kernels are the tutorials' add, softmax, layernorm and matmul, a scaled ReLU and a
row sum through one shared `@triton.jit` helper, and an add autotuned between two
near-tied configs (BLOCK 1024 at 4 and at 8 warps). `bench.py` times each kernel on
four shapes beside its torch control and prints `[perf][op]` lines, TRIALS of each; it
asks `perfdb_affected.wanted(...)` which rows to time when perfdb says.

Most commits change no compiled kernel (documentation, tests, the benchmark's printing, a
comment inside a kernel, a constant outside every kernel); `CHANGES` lists what each does
and which kernels must be timed (`expect`), the ground truth the nightly is judged on.
"""

import os
import subprocess
import sys

KERNELS = {
    "kernels/__init__.py": "",
    "kernels/common.py": '''import triton
import triton.language as tl


@triton.jit
def activation(x):
    # the shared helper: a ReLU
    return tl.where(x > 0, x, 0.0)
''',
    "kernels/add.py": '''import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr = 1024):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def add(x, y, out):
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n)
''',
    "kernels/tuned_add.py": '''import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 1024}, num_warps=4), triton.Config({"BLOCK": 1024}, num_warps=8)],
    key=["n"],
)
@triton.jit
def tuned_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def tuned_add(x, y, out):
    n = x.numel()
    tuned_add_kernel[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, y, out, n)
''',
    "kernels/softmax.py": '''import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, cols, BLOCK: tl.constexpr = 1024):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * cols + offs, num / tl.sum(num, axis=0), mask=mask)


def softmax(x, out):
    rows, cols = x.shape
    softmax_kernel[(rows,)](x, out, cols)
''',
    "kernels/layernorm.py": '''import triton
import triton.language as tl


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


def layernorm(x, w, b, out):
    rows, cols = x.shape
    layernorm_kernel[(rows,)](x, w, b, out, cols, 1e-5, BLOCK=1024)
''',
    "kernels/matmul.py": '''import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
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


def matmul(a, b, c, BM=64, BN=64, BK=32):
    M, K = a.shape
    N = b.shape[1]
    matmul_kernel[(M // BM, N // BN)](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK)
''',
    "kernels/relu_scale.py": '''import triton
import triton.language as tl

from kernels.common import activation

SCALE = 2.0  # a constant outside every kernel, passed as an argument


@triton.jit
def relu_scale_kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, activation(x) * scale, mask=mask)


def relu_scale(x, out):
    n = x.numel()
    relu_scale_kernel[(triton.cdiv(n, 1024),)](x, out, n, SCALE, BLOCK=1024)
''',
    "kernels/rowsum.py": '''import triton
import triton.language as tl

from kernels.common import activation


@triton.jit
def rowsum_kernel(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(activation(x), axis=0))


def rowsum(x, out):
    rows, cols = x.shape
    rowsum_kernel[(rows,)](x, out, cols, BLOCK=1024)
''',
    "bench.py": '''"""Times every kernel of `kernels/` on four shapes beside its torch control:
`[perf][op] dim: (...), dtype: ..., torch avg: T us, triton avg: K us`, TRIALS lines a row
(one by default: a process is a trial). A row's tensors are made only when it is timed."""
import os

import torch
import triton
import triton.testing

from kernels.add import add
from kernels.layernorm import layernorm
from kernels.matmul import matmul
from kernels.relu_scale import SCALE, relu_scale
from kernels.rowsum import rowsum
from kernels.softmax import softmax
from kernels.tuned_add import tuned_add

try:
    from perfdb_affected import wanted
except ImportError:
    def wanted(**_):
        return True

TRIALS = int(os.environ.get("TRIALS", "1"))
REP = int(os.environ.get("REP_MS", "100"))
F32 = torch.float32


def us(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=REP, return_mode="median") * 1e3


def row(op, dim, dtype, make):
    if not wanted(table=f"perf[{op}]", dim=str(dim)):
        return
    torch_fn, triton_fn = make()
    for _ in range(TRIALS):
        t, k = us(torch_fn), us(triton_fn)
        print(f"[perf][{op}] dim: {dim}, dtype: {dtype}, torch avg: {t:.3f} us, triton avg: {k:.3f} us", flush=True)


def main():
    dev = "cuda"
    torch.manual_seed(0)
    def vec(n):
        return torch.randn(n, device=dev), torch.randn(n, device=dev), torch.empty(n, device=dev)

    def mat(r, c):
        m = torch.randn(r, c, device=dev)
        return m, torch.empty_like(m), torch.empty(r, device=dev), torch.randn(c, device=dev), torch.randn(c, device=dev)

    def mm(size):
        a, b = (torch.randn(size, size, device=dev, dtype=torch.float16) for _ in range(2))
        c = torch.empty(size, size, device=dev, dtype=torch.float16)
        return (lambda: torch.mm(a, b)), (lambda: matmul(a, b, c))

    for n in (1 << 20, 1 << 22, 1 << 24, 1 << 26):
        def add_fns(n=n, tuned=False):
            x, y, o = vec(n)
            return (lambda: torch.add(x, y, out=o)), (lambda: (tuned_add if tuned else add)(x, y, o))

        def relu_fns(n=n):
            x, _, o = vec(n)
            return (lambda: torch.mul(torch.relu(x), SCALE, out=o)), (lambda: relu_scale(x, o))

        row("add", (n,), F32, add_fns)
        row("tuned_add", (n,), F32, lambda: add_fns(tuned=True))
        row("relu_scale", (n,), F32, relu_fns)
    for r in (1024, 4096, 16384, 65536):
        c = 1024

        def softmax_fns(r=r):
            m, mo, _, _, _ = mat(r, c)
            return (lambda: torch.softmax(m, dim=1)), (lambda: softmax(m, mo))

        def layernorm_fns(r=r):
            m, mo, _, w, b = mat(r, c)
            return (lambda: torch.nn.functional.layer_norm(m, (c,), w, b)), (lambda: layernorm(m, w, b, mo))

        def rowsum_fns(r=r):
            m, _, s, _, _ = mat(r, c)
            return (lambda: torch.relu(m).sum(dim=1)), (lambda: rowsum(m, s))

        row("softmax", (r, c), F32, softmax_fns)
        row("layernorm", (r, c), F32, layernorm_fns)
        row("rowsum", (r, c), F32, rowsum_fns)
    for size in (1024, 2048, 4096, 8192):
        row("matmul", (size, size, size), torch.float16, lambda size=size: mm(size))


if __name__ == "__main__":
    main()
''',
    "README.md": "# kernels\n\nSeven Triton kernels and their benchmark (`python bench.py`).\n",
    "tests/test_shapes.py": "def test_nothing_yet():\n    assert True\n",
}

# (message, file, old, new, expect): `expect` are the ops whose rows must be timed
# (their compiled kernel or its launch changed); [] means none.
CHANGES = [
    ("docs: say what the kernels are", "README.md", "Seven Triton kernels", "Seven Triton kernels (add, softmax, layernorm, matmul and three more)", []),
    ("tests: a shape test", "tests/test_shapes.py", "assert True", "assert 1024 % 64 == 0", []),
    ("add: a comment inside the kernel", "kernels/add.py", "    mask = offs < n\n    x = tl.load(x_ptr", "    mask = offs < n  # the tail of the last block\n    x = tl.load(x_ptr", []),
    ("bench: print the dtype first in a comment", "bench.py", "def main():", "# rows: op, dim, dtype\ndef main():", []),
    ("common: a leaky activation", "kernels/common.py", "tl.where(x > 0, x, 0.0)", "tl.where(x > 0, x, 0.01 * x)", ["relu_scale", "rowsum"]),
    ("docs: usage", "README.md", "(`python bench.py`).", "(`python bench.py`; TRIALS and REP_MS set its length).", []),
    ("relu_scale: a constant outside the kernel", "kernels/relu_scale.py", "SCALE = 2.0", "SCALE = 2.0\nUNUSED = 3", []),
    ("softmax: smaller default block is enough? no, keep the default but note it", "kernels/softmax.py", "def softmax(x, out):", "# BLOCK covers every column\ndef softmax(x, out):", []),
    ("tests: rows are powers of two", "tests/test_shapes.py", "assert 1024 % 64 == 0", "assert 1024 % 64 == 0\n    assert 4096 & 4095 == 0", []),
    ("layernorm: a comment", "kernels/layernorm.py", "    mean = tl.sum(x, axis=0) / cols", "    # the row's mean\n    mean = tl.sum(x, axis=0) / cols", []),
    ("add: BLOCK default 512 (a constexpr default)", "kernels/add.py", "BLOCK: tl.constexpr = 1024", "BLOCK: tl.constexpr = 512", ["add"]),
    ("docs: a changelog", "CHANGELOG.md", None, "# Changes\n\n- add: block 512\n", []),
    ("bench: reorder imports", "bench.py", "import torch\nimport triton\n", "import triton\nimport torch\n", []),
    ("matmul: launch 128x128 tiles (a launch change in the wrapper)", "kernels/matmul.py", "BM=64, BN=64, BK=32):", "BM=128, BN=128, BK=32):", ["matmul"]),
    ("tests: matmul tile divides sizes", "tests/test_shapes.py", "assert 4096 & 4095 == 0", "assert 4096 & 4095 == 0\n    assert 1024 % 128 == 0", []),
    ("rowsum: a docstring in the wrapper", "kernels/rowsum.py", "def rowsum(x, out):", "def rowsum(x, out):\n    \"\"\"Sum of each row's activations.\"\"\"", []),
    ("docs: link", "README.md", "# kernels", "# kernels\n\nSee CHANGELOG.md.", []),
    ("layernorm: rsqrt instead of 1/sqrt", "kernels/layernorm.py", "y = d / tl.sqrt(var + eps)", "y = d * tl.math.rsqrt(var + eps)", ["layernorm"]),
    ("bench: a blank line", "bench.py", "F32 = torch.float32\n", "F32 = torch.float32\n\n", []),
    ("softmax: a comment in the kernel", "kernels/softmax.py", "    num = tl.exp(x)", "    # exponentiate the shifted row\n    num = tl.exp(x)", []),
    ("tests: more", "tests/test_shapes.py", "def test_nothing_yet():", "def test_shapes():", []),
    ("common: a second helper nobody calls yet", "kernels/common.py", "    return tl.where(x > 0, x, 0.01 * x)\n", "    return tl.where(x > 0, x, 0.01 * x)\n\n\n@triton.jit\ndef square(x):\n    return x * x\n", []),
    ("docs: typo", "README.md", "Seven Triton kernels (", "Seven Triton kernels, (", []),
    ("softmax: BLOCK default 2048 (a constexpr default)", "kernels/softmax.py", "BLOCK: tl.constexpr = 1024", "BLOCK: tl.constexpr = 2048", ["softmax"]),
    ("changelog", "CHANGELOG.md", "- add: block 512\n", "- add: block 512\n- softmax: block 2048\n", []),
    ("tuned_add: a comment", "kernels/tuned_add.py", "    mask = offs < n\n", "    mask = offs < n  # tail\n", []),
    ("bench: comment on REP", "bench.py", "REP = int(", "# REP_MS: do_bench's repetition time\nREP = int(", []),
    ("docs: final", "README.md", "See CHANGELOG.md.", "See CHANGELOG.md and bench.py.", []),
    ("relu_scale: scale 3 (an argument's value)", "kernels/relu_scale.py", "SCALE = 2.0\n", "SCALE = 3.0\n", ["relu_scale"]),
    ("tests: last", "tests/test_shapes.py", "assert 1024 % 128 == 0", "assert 1024 % 128 == 0\n    assert 2048 % 128 == 0", []),
]


def git(d, *args):
    subprocess.run(["git", "-C", d, *args], check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_NAME="k", GIT_AUTHOR_EMAIL="k@x", GIT_COMMITTER_NAME="k",
                            GIT_COMMITTER_EMAIL="k@x", GIT_AUTHOR_DATE="2026-12-01T00:00:00",
                            GIT_COMMITTER_DATE="2026-12-01T00:00:00"))


def main(d, expect=None):
    if expect:
        # The ground truth: for each commit (0 = the first), the ops whose rows must be timed.
        import json

        with open(expect, "w") as f:
            json.dump([{"commit": 0, "message": "seven kernels and their benchmark", "expect": "all"}]
                      + [{"commit": i + 1, "message": m, "expect": e} for i, (m, _, _, _, e) in enumerate(CHANGES)],
                      f, indent=1)
    os.makedirs(d, exist_ok=True)
    git(d, "init", "-q", "-b", "main")
    for path, text in KERNELS.items():
        p = os.path.join(d, path)
        os.makedirs(os.path.dirname(p) or d, exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    git(d, "add", "-A")
    git(d, "commit", "-q", "-m", "seven kernels and their benchmark")
    for msg, path, old, new, _ in CHANGES:
        p = os.path.join(d, path)
        if old is None:
            text = new
        else:
            text = open(p).read()
            assert old in text, (msg, old)
            text = text.replace(old, new, 1)
        with open(p, "w") as f:
            f.write(text)
        git(d, "add", "-A")
        git(d, "commit", "-q", "-m", msg)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
