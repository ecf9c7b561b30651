# Triton's vector-add tutorial benchmark, printed and saved as perf_report does.
import os, torch, triton, triton.language as tl

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out

@triton.testing.perf_report(triton.testing.Benchmark(
    x_names=["size"], x_vals=[2**i for i in range(12, 28, 3)], x_log=True,
    line_arg="provider", line_vals=["triton", "torch"], line_names=["Triton", "Torch"],
    styles=[("blue", "-"), ("green", "-")], ylabel="GB/s", plot_name="vector-add-performance", args={}))
def benchmark(size, provider):
    x = torch.rand(size, device="cuda", dtype=torch.float32)
    y = torch.rand(size, device="cuda", dtype=torch.float32)
    q = [0.5, 0.2, 0.8]
    f = (lambda: add(x, y)) if provider == "triton" else (lambda: x + y)
    ms, lo, hi = triton.testing.do_bench(f, quantiles=q)
    gbps = lambda ms: 3 * x.numel() * x.element_size() * 1e-9 / (ms * 1e-3)
    return gbps(ms), gbps(hi), gbps(lo)

benchmark.run(print_data=True, save_path=os.environ["OUT"])
