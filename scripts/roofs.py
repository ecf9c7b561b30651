# `perfdb devices measure`: what the GPU really reaches, through torch. A device-to-device
# copy of 2 GiB (bandwidth: bytes read and written), and an 8192^3 matrix product per
# data type (compute: 2·M·N·K flop), each timed with CUDA events after warm-ups, several
# times. Prints PyTorch benchmark-database v3 records (one JSON array) that perfdb
# ingests: table `roofs`, the GPU's name as the machine, each timing a trial.
import json, sys
try:
    import torch
except Exception as e:
    sys.exit(f"perfdb devices measure needs torch: {e}")
if not torch.cuda.is_available():
    sys.exit("perfdb devices measure needs a GPU torch can see (torch.cuda.is_available() is False)")

def times(fn, reps, warm):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize()
        out.append(a.elapsed_time(b) / 1e3)
    return out

name = torch.cuda.get_device_name(0)
runner = [{"name": name, "gpu_info": name}]
records = []
n = 1 << 30  # bf16 elements: 2 GiB each way
src = torch.empty(n, dtype=torch.bfloat16, device="cuda").fill_(1)
dst = torch.empty_like(src)
moved = 2 * n * src.element_size()
secs = times(lambda: dst.copy_(src), 20, 5)
records.append({
    "benchmark": {"name": "roofs", "extra_info": {"roof": "bandwidth", "how": "copy_ of 2 GiB"}},
    "model": {"name": "copy", "backend": "torch"},
    "metric": {"name": "bandwidth_gbps", "benchmark_values": [moved / s / 1e9 for s in secs]},
    "runners": runner,
})
del src, dst
torch.cuda.empty_cache()
m = 8192
for dtype, t in (("bf16", torch.bfloat16), ("fp16", torch.float16), ("fp32", torch.float32)):
    a = torch.randn(m, m, dtype=t, device="cuda")
    b = torch.randn(m, m, dtype=t, device="cuda")
    secs = times(lambda: a @ b, 10, 3)
    records.append({
        "benchmark": {"name": "roofs", "dtype": dtype, "extra_info": {"roof": "compute", "how": f"torch.mm {m}x{m}x{m}"}},
        "model": {"name": "gemm", "backend": "torch"},
        "metric": {"name": "tflops", "benchmark_values": [2 * m**3 / s / 1e12 for s in secs]},
        "runners": runner,
    })
    del a, b
print(json.dumps(records))
