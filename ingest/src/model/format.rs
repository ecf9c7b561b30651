//! The formats perfdb reads, as a closed set: each one's name (stored with every run),
//! its line in `perfdb formats`, and the order detection tries them in. Their parsers
//! are [`crate::formats`]'.

use std::fmt;
use std::str::FromStr;

/// A format perfdb reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// aiter logs with `summary (markdown):` pipe tables (and `to_string` fallbacks).
    AiterTable,
    /// `[perf]` lines (aiter checkAllclose, print()ed, MoE `_avg:`, FlyDSL `us/call`).
    PerfLines,
    /// TokenSpeed kernel-probe stdout (`host_launch:`, `TS_KERNEL_*`).
    TsProbe,
    /// TokenSpeed `kernel_bench.<token>.json` export.
    TsExport,
    /// Triton `perf_report(...).run(print_data=True)` stdout.
    TritonPerfReport,
    /// Triton `perf_report(..., save_path=DIR)`'s `<plot_name>.csv`.
    TritonCsv,
    /// `torch.utils.benchmark.Compare` printouts.
    TorchCompare,
    /// pytest-benchmark `--benchmark-json` files.
    PytestBenchmark,
    /// google-benchmark `--benchmark_format=json` output.
    GoogleBenchmark,
    /// hipBLASLt-bench / hipblas-bench / rocblas-bench CSV output.
    RocmBenchCsv,
    /// aiter tuned-config CSVs (`*_tuned_gemm.csv`).
    AiterTunedCsv,
    /// FlyDSL CI bench tables and `=== Benchmark: current vs ... ===` lines.
    FlydslBench,
    /// Serving benchmark results: vLLM `bench serve` JSON, TokenSpeed's serve export,
    /// SGLang `bench_serving` JSONL.
    Serving,
    /// aorta's per-trial `result.json`.
    AortaResult,
    /// aorta's triage `matrix.md`.
    AortaMatrix,
    /// NVIDIA nvbench `--json` output.
    NvbenchJson,
    /// The markdown NVIDIA nvbench prints.
    NvbenchMarkdown,
    /// Meta's tritonbench: the printed table, `--output` CSV, `--output-json`.
    Tritonbench,
    /// PyTorch's benchmark database records, schema v3.
    PytorchV3,
    /// Nsight Compute's `--csv` (details page, raw page, `--import`ed reports).
    NcuCsv,
    /// rocprofv3's counter-collection and kernel-trace CSVs.
    Rocprofv3Csv,
    /// Triton proton's profile (hatchet JSON).
    ProtonHatchet,
}

impl Format {
    /// Every format, in the order detection asks them (a signature wins wherever it is
    /// in the order, two are refused; among markers the first wins; Nsight Compute's CSV
    /// is told apart before the rest, since it comes inside other formats' output): the
    /// JSON outputs first (a look
    /// at the first byte rules them out of any log), the CSVs told by their first lines
    /// (a look at those rules them out; tried after the formats that read the whole
    /// text, they waited ~2 ms on a 5 MB CSV for scans that could not match), then the
    /// text formats whose files the aiter tables' sniff would also take (a triage
    /// matrix and nvbench's results are pipe tables), the aiter tables themselves
    /// (most logs: tried early, so the rest are rarely sniffed), then formats no aiter
    /// log matches (tritonbench's three forms among them: a log pays its `x_val` scan
    /// only when it holds no aiter table), and `[perf]` lines, which many logs carry
    /// beside another format, last.
    pub const ALL: [Format; 22] = [
        Format::ProtonHatchet,
        Format::NvbenchJson,
        Format::PytorchV3,
        Format::TsExport,
        Format::PytestBenchmark,
        Format::GoogleBenchmark,
        Format::Serving,
        Format::AortaResult,
        Format::AiterTunedCsv,
        Format::TritonCsv,
        Format::Rocprofv3Csv,
        Format::NcuCsv,
        Format::TsProbe,
        Format::AortaMatrix,
        Format::NvbenchMarkdown,
        Format::TritonPerfReport,
        Format::AiterTable,
        Format::Tritonbench,
        Format::TorchCompare,
        Format::FlydslBench,
        Format::RocmBenchCsv,
        Format::PerfLines,
    ];
    /// Whether the format holds hardware counters (stored undirected: never judged
    /// alone, so a file of them needs no compared value).
    pub fn is_counters(self) -> bool {
        matches!(
            self,
            Format::NcuCsv | Format::Rocprofv3Csv | Format::ProtonHatchet
        )
    }
    pub fn name(self) -> &'static str {
        match self {
            Format::AiterTable => "aiter-table",
            Format::PerfLines => "perf-lines",
            Format::TsProbe => "ts-probe",
            Format::TsExport => "ts-export",
            Format::TritonPerfReport => "triton-perf-report",
            Format::TritonCsv => "triton-csv",
            Format::TorchCompare => "torch-compare",
            Format::PytestBenchmark => "pytest-benchmark",
            Format::GoogleBenchmark => "google-benchmark",
            Format::RocmBenchCsv => "rocm-bench-csv",
            Format::AiterTunedCsv => "aiter-tuned-csv",
            Format::FlydslBench => "flydsl-bench",
            Format::Serving => "serving",
            Format::AortaResult => "aorta-result",
            Format::AortaMatrix => "aorta-matrix",
            Format::NvbenchJson => "nvbench-json",
            Format::NvbenchMarkdown => "nvbench-markdown",
            Format::Tritonbench => "tritonbench",
            Format::PytorchV3 => "pytorch-v3",
            Format::NcuCsv => "ncu-csv",
            Format::Rocprofv3Csv => "rocprofv3-csv",
            Format::ProtonHatchet => "proton-hatchet",
        }
    }
    /// One line on what the format is and how it maps onto rows: `perfdb formats`
    /// prints it and the README's format table holds the same line (a test checks).
    pub fn summary(self) -> &'static str {
        match self {
            Format::AiterTable => "aiter logs with `summary (markdown):` pipe tables (and the `to_string` fallback): title = table, `*_us`/`*_TFLOPS`/`*_TB/s` columns = variant and metric, derived and measured-looking columns (`err`, `a/b`, `1.31x`, `+49.2%`, `1.5e-05`) kept, the rest = key",
            Format::PerfLines => "`[perf]` lines (checkAllclose-glued, `print()`ed, `[perf][tag]`, MoE `torch_avg:`, FlyDSL `us/call`)",
            Format::TsProbe => "TokenSpeed probe stdout: `TS_KERNEL_METRIC` records, `TS_KERNEL_FAIL`/`RESULT` verdicts, `TS_BENCH_*` serving lines (metrics with units and directions)",
            Format::TsExport => "TokenSpeed `kernel_bench.<token>.json`: op family = table, kernel = variant, shape params and dtype = key",
            Format::TritonPerfReport => "Triton `perf_report(...).run(print_data=True)` stdout: plot = table, `<line> (<ylabel>)` = variant with the ylabel's unit (before Triton 3.6, line names alone: `--unit` gives it), x columns = key (`512.0` reads `512`)",
            Format::TritonCsv => "Triton `perf_report` `save_path` CSV: file name = table, line columns = variants, x columns = key; the unit from `<line> (<ylabel>)` headers (Triton 3.6), else from `--unit` (else kept unclassified)",
            Format::TorchCompare => "`torch.utils.benchmark.Compare` tables: title = table, descriptions = variants, `N threads:` + sub-label = key, unit from the footer, `(! XX%)` kept as a noise note",
            Format::PytestBenchmark => "pytest-benchmark `--benchmark-json`: group = table, test function = variant, params = key, `stats.median` in s (min, mean, stddev, iqr, rounds kept); `commit_info`/`machine_info` fill commit and machine",
            Format::GoogleBenchmark => "google-benchmark `--benchmark_format=json`: executable = table, family = variant, `/args` = key, each repetition a trial (a run of its own), aggregates (`_mean`, `_cv`...) kept derived, `time_unit` respected",
            Format::RocmBenchCsv => "hipBLASLt-bench / hipblas-bench / rocblas-bench CSV: problem columns = key, `*-Gflops` and `us` = metrics",
            Format::AiterTunedCsv => "aiter tuned-config CSV (`gfx,cu_num,M,N,K,...,us,kernelName,tflops,bw,errRatio`): problem columns = key, `us`/`tflops`/`bw` = metrics (`bw` printed in GB/s, stored as TB/s), `errRatio` derived",
            Format::FlydslBench => "FlyDSL CI bench tables (`op shape dtype TB/s TFLOPS`, `<a>(gpu us)` columns, `-`/`skip` cells) and `=== Benchmark: current vs X ===` ratios (derived)",
            Format::Serving => "serving results: vLLM `bench serve` JSON, TokenSpeed serve export, SGLang `bench_serving` JSONL, and their printed `Serving Benchmark Result` block: TTFT/TPOT/ITL/e2e latency stats and throughputs, request rate and concurrency = key",
            Format::AortaResult => "aorta `result.json`: verdict and exit code = the run's verdict, walltime and peak VRAM = values",
            Format::AortaMatrix => "aorta triage `matrix.md`: cell = variant, mean step time = the compared value, failure rate and counts kept, mitigations and confound as notes",
            Format::NvbenchJson => "NVIDIA nvbench `--json`: benchmark = table, axis values = key (`--variant-axis NAME`: that axis = variant), cold GPU median = latency, item rate and global-memory bandwidth compared; mean, CPU and batch times, noise and SM clock kept; device = machine; method `nvbench:cold`",
            Format::NvbenchMarkdown => "NVIDIA nvbench's printed markdown: benchmark = table, axis columns = key (`--variant-axis` as for the JSON), `GPU Time` (the cold mean) = latency, `Elem/s` and `GlobalMem BW` compared; CPU and batch times, both `Noise` columns (read by place), samples and `BWUtil` kept; the log's throttle warnings counted per row; method `nvbench:cold-mean`",
            Format::Tritonbench => "Meta's tritonbench: the printed table, `--output` (`;` CSV) and `--output-json`: `<backend>-<metric>` columns = variant and metric (`latency` in ms, its `(±X%)` kept as `latency_spread`; `gbps` tuple -> its first element; `tflops`), `x_val` = key (split by a `(M, N, K)` label), `speedup`, `accuracy` and the `average` row derived; table = the JSON's operator, else the file name; method `tritonbench:p50`",
            Format::PytorchV3 => "PyTorch benchmark database v3 records (a JSON array, one object, or JSON lines): `benchmark.name` = table, `model.backend` = variant, `model.name`, mode, dtype, inputs and `metric.extra_info` settings = key; the unit from `metric.name` (`_ms`, `(mb)`, `_us`, `instruction_count`, `tflops`, `gbps`; else unclassified, reported); each of `benchmark_values` a trial; `runners[0]` = machine, `dependencies.*.sha` = commit tags",
            Format::NcuCsv => "Nsight Compute `--csv` (details page, `--page raw`, `--import`): kernel = variant of table `ncu`, each metric a counter in its canonical unit (ns, byte, byte/s, Hz, %), its kind in the note, stored undirected (diffed, never judged); grid and block of each launch kept; `no data`/`n/a` null, a word a setting, device attributes left out; `--nvtx` ranges in the key; the profiled program's own output in the same stream read by its own format and marked profiled (never a timed trial)",
            Format::Rocprofv3Csv => "rocprofv3 `counter_collection.csv` and `kernel_trace.csv`: kernel = variant of table `rocprofv3`, each counter undirected, each dispatch's duration (end - start, ns), grid, workgroup, registers and LDS kept",
            Format::ProtonHatchet => "Triton proton profile (hatchet JSON): each node with metrics = a kernel of table `proton`, the scopes above it = key, `time (ns)`, `bytes`, `flops*`, `count` as undirected counters; one device arch = the run's arch",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Format::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown format '{s}' (expected auto or one of {})",
                    names.join(", ")
                )
            })
    }
}
