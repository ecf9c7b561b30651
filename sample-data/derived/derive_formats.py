#!/usr/bin/env python3
"""Base/head trials for the formats with no real A/B output here (see README.md).

For each format: 3 base and 3 head trials made from one fixture in ../formats/ (or a
template in this file with the fixture's layout), every value times a deterministic
noise factor of 1 +- 1% (by trial and position), and in head exactly one stated value
made worse (the `SLOWED` line of each format's README entry). Run from anywhere:
`python3 sample-data/derived/derive_formats.py`; the output is committed.
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
FORMATS = os.path.join(HERE, "..", "formats")


def noise(trial, pos):
    return 1 + (((trial * 7 + pos * 3) % 5) - 2) / 200


def write(fmt, side, trial, name, text):
    d = os.path.join(HERE, f"ab-{fmt}", side, f"trial{trial}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "w") as f:
        f.write(text)


def fmt_like(old, new):
    """`new` with as many decimals as `old` printed."""
    decimals = len(old.split(".")[1]) if "." in old else 0
    return f"{new:.{decimals}f}"


def scale_numbers(line, trial, slow_cols=None, factor=1.0, skip=0):
    """Scale every number token after the first `skip` tokens; columns (by number
    index) in `slow_cols` also times `factor`."""
    out, idx = [], 0
    tokens = re.split(r"(\s+|,|\|)", line)
    seen = 0
    for tok in tokens:
        if re.fullmatch(r"-?\d+\.\d+", tok.strip() or "x"):
            seen += 1
            if seen > skip:
                f = noise(trial, idx)
                if slow_cols and idx in slow_cols:
                    f *= factor
                new = fmt_like(tok.strip(), float(tok) * f)
                tok = tok.replace(tok.strip(), new)
            idx += 1
        out.append(tok)
    return "".join(out)


def trials(fmt, name, make):
    for side in ["base", "head"]:
        for t in range(1, 4):
            write(fmt, side, t, name, make(side == "head", t + (3 if side == "head" else 0)))


# torch.utils.benchmark.Compare, in the layout of sample 25. SLOWED: mm [1024, 1024] 1 thread +25%.
TORCH = """[-------------- Ops --------------]
                    |   mm   |  add
1 threads: ------------------------
      [64, 64]      |  21.5  |  7.9
      [1024, 1024]  |  56.6  |  8.0
4 threads: ------------------------
      [64, 64]      |  14.9  |  7.8
      [1024, 1024]  |  56.5  |  7.9

Times are in microseconds (us).
"""


def torch(head, t):
    lines = []
    in_one = False
    for line in TORCH.splitlines():
        if line.startswith("1 threads"):
            in_one = True
        elif line.startswith("4 threads"):
            in_one = False
        slow = head and in_one and "[1024, 1024]" in line
        lines.append(scale_numbers(line, t, {0} if slow else None, 1.25))
    return "\n".join(lines) + "\n"


# FlyDSL, the layout of sample 13. SLOWED: gemm fp8 TFLOPS -20% (and TB/s with it).
FLYDSL = """op                     shape                              dtype            TB/s     TFLOPS
---------------------- ---------------------------------- ---------- ---------- ----------
softmax                32768x8192                         bf16            3.938          -
gemm                   5120x5120x8320_tile64x256x128      fp8             0.430   1361.400
layernorm              8192x8192                          bf16            4.210          -
"""


def flydsl(head, t):
    out = []
    for line in FLYDSL.splitlines():
        slow = head and line.startswith("gemm")
        out.append(scale_numbers(line, t, {0, 1} if slow else None, 0.8))
    return "\n".join(out) + "\n"


def rocm(head, t):
    text = open(os.path.join(FORMATS, "28_hipblaslt_rocblas_bench_csv_emulated.txt")).read()
    out = []
    for line in text.splitlines():
        if line.startswith("    ") or line.startswith("N,N,4096"):
            cells = line.split(",")
            slow = head and ",4096,4096,4096," in line and line.startswith("    N,T")
            for i in range(len(cells) - 3, len(cells)):
                f = noise(t, i)
                if slow:
                    f *= 0.8 if i < len(cells) - 1 else 1.25
                old = cells[i].strip()
                cells[i] = " " + fmt_like(old, float(old) * f)
            line = ",".join(cells)
        out.append(line)
    return "\n".join(out) + "\n"


def tuned(head, t):
    text = open(os.path.join(FORMATS, "29_aiter_tuned_gemm_csv_emulated", "a8w8_tuned_gemm.csv")).read()
    lines = text.splitlines()
    out = [lines[0]]
    names = lines[0].split(",")
    for row in lines[1:]:
        cells = row.split(",")
        slow = head and cells[2] == "128"
        for i, n in enumerate(names):
            if n in ("us", "tflops", "bw"):
                f = noise(t, i)
                if slow:
                    f *= 1.25 if n == "us" else 0.8
                cells[i] = fmt_like(cells[i], float(cells[i]) * f)
        out.append(",".join(cells))
    return "\n".join(out) + "\n"


def triton_csv(head, t):
    text = open(os.path.join(FORMATS, "31_triton_save_path_csv_from_sample24", "vector-add-performance.csv")).read()
    lines = text.splitlines()
    out = [lines[0]]
    for row in lines[1:]:
        cells = row.split(",")
        for i in (1, 2):
            f = noise(t, i)
            if head and i == 1 and cells[0].startswith("134217728"):
                f *= 0.8
            cells[i] = f"{float(cells[i]) * f:.6f}"
        out.append(",".join(cells))
    return "\n".join(out) + "\n"


def serving(head, t):
    d = json.load(open(os.path.join(FORMATS, "20_aorta_tokenspeed_bench_serve_export_fixture.json")))
    for i, (k, v) in enumerate(list(d.items())):
        if isinstance(v, float) and k != "burstiness":
            f = noise(t, i)
            if head and k == "p99_ttft_ms":
                f *= 1.3
            d[k] = round(v * f, 3)
    return json.dumps(d, indent=2) + "\n"


def matrix(head, t):
    text = open(os.path.join(FORMATS, "23_aorta_matrix_md_emulated.md")).read()
    out = []
    for line in text.splitlines():
        if line.startswith("| ts_gemm"):
            cells = line.split("|")
            step = cells[7].strip()
            if step != "n/a":
                f = noise(t, len(out))
                if head and "ts_gemm_gluon_bf16-hip_launch_blocking " in line:
                    f *= 1.2
                cells[7] = " " + fmt_like(step, float(step) * f).ljust(len(cells[7]) - 1)
            line = "|".join(cells)
        out.append(line)
    return "\n".join(out) + "\n"


def result(head, t):
    d = json.load(open(os.path.join(FORMATS, "22_aorta_probe_result_json_docs_verbatim.json")))
    failed = head and t == 6
    d.update(
        verdict="fail" if failed else "pass",
        exit_code=137 if failed else 0,
        trial_index=t,
        walltime_sec=round(12.345 * noise(t, 0), 3),
        failure_detectors_fired=["tier1:exit_nonzero", "tier4:hip_error"] if failed else [],
        warn_detectors_fired=[],
        capture={"loss": "nan" if failed else "0.25"},
    )
    return json.dumps(d, indent=2) + "\n"


# TokenSpeed serving probe lines, the passing path of sample 21. SLOWED: median TTFT +25%.
TS_BENCH = """TS_BENCH_INFO: server pid=57, log=/ts-out/server.log
TS_BENCH_OK: health after 307s
TS_BENCH_METRIC: server_startup_sec=307
TS_BENCH_OK: step 1 completed=32 output_throughput=3585.9 median_ttft_ms=46.7
TS_BENCH_OK: step 2 completed=64 output_throughput=6120.4 median_ttft_ms=58.2
TS_BENCH_RESULT: pass
"""


def ts_bench(head, t):
    out = []
    for line in TS_BENCH.splitlines():
        m = re.search(r"(output_throughput=)([\d.]+)( median_ttft_ms=)([\d.]+)", line)
        if m:
            step2 = "step 2" in line
            thr = float(m.group(2)) * noise(t, 1)
            ttft = float(m.group(4)) * noise(t, 2) * (1.25 if head and step2 else 1.0)
            line = line[: m.start()] + f"output_throughput={thr:.1f} median_ttft_ms={ttft:.1f}"
        elif "server_startup_sec=" in line:
            line = f"TS_BENCH_METRIC: server_startup_sec={round(307 * noise(t, 3))}"
        out.append(line)
    return "\n".join(out) + "\n"


def sglang(head, t):
    out = []
    for i, line in enumerate(open(os.path.join(FORMATS, "30_sglang_bench_serving_jsonl_emulated.jsonl"))):
        d = json.loads(line)
        for j, (k, v) in enumerate(list(d.items())):
            if isinstance(v, float) and k not in ("request_rate", "random_range_ratio"):
                f = noise(t, i * 40 + j)
                if head and d["request_rate"] == 8.0 and k == "output_throughput":
                    f *= 0.8
                d[k] = round(v * f, 3)
        out.append(json.dumps(d))
    return "\n".join(out) + "\n"


trials("ts-bench", "ts_bench_serve.log", ts_bench)
trials("sglang", "sglang_0101_256_1024_128.jsonl", sglang)
trials("torch-compare", "compare.txt", torch)
trials("flydsl-bench", "bench.log", flydsl)
trials("rocm-bench-csv", "hipblaslt-bench.log", rocm)
trials("aiter-tuned-csv", "a8w8_tuned_gemm.csv", tuned)
trials("triton-csv", "vector-add-performance.csv", triton_csv)
trials("serving", "bench.json", serving)
trials("aorta-matrix", "matrix.md", matrix)
trials("aorta-result", "result.json", result)
