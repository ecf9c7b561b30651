# What the device really reaches: a device-to-device copy (bandwidth, bytes read and
# written) and a large GEMM per data type (compute), each the median of timed runs after
# warm-ups, through torch. Prints one JSON object.
import json, statistics, subprocess, torch

def timed(fn, reps=20, warm=5):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize()
        out.append(a.elapsed_time(b) / 1e3)
    return statistics.median(out)

res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda}
n = 1 << 30  # 2 GiB of bf16 each way
src = torch.empty(n, dtype=torch.bfloat16, device="cuda").fill_(1)
dst = torch.empty_like(src)
s = timed(lambda: dst.copy_(src))
res["copy"] = {"bytes": 2 * n * 2, "seconds": s, "bytes_per_s": 2 * n * 2 / s}
del src, dst
for name, dt in [("bf16", torch.bfloat16), ("fp16", torch.float16), ("fp32", torch.float32)]:
    m = 8192
    a = torch.randn(m, m, dtype=dt, device="cuda"); b = torch.randn(m, m, dtype=dt, device="cuda")
    s = timed(lambda: a @ b, reps=10, warm=3)
    res["gemm_" + name] = {"m": m, "n": m, "k": m, "seconds": s, "flop_per_s": 2 * m**3 / s}
q = "driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit"
res["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=" + q, "--format=csv"], capture_output=True, text=True).stdout
print(json.dumps(res, indent=1))
