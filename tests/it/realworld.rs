//! Real files from the field (`sample-data/realworld/`: verbatim copies from public
//! repositories, issues and pull requests, a PROVENANCE.md per folder). Each is read as
//! the format it is, or refused with `file:line: why`; and for each accepted one, three
//! reruns a side compared — every measured number on a value line moved by a little noise
//! as a rerun prints it (ratios, percentages and errors included), one row's timing made
//! 30% worse on head — flag exactly that row.

use crate::common::*;
use std::collections::BTreeSet;
use std::path::Path;

/// What perfdb must make of each file.
enum Expect {
    /// Read as this format (auto-detected).
    Reads(&'static str),
    /// Read as this format with `--unit` (the file prints none).
    ReadsWithUnit(&'static str, &'static str),
    /// Read as this format, every value derived (nothing to compare: an aggregate-only
    /// output).
    ReadsDerivedOnly(&'static str),
    /// Read as this format, not rerun: its identity holds numbers a rerun prints
    /// differently (a broken build's garbage), so reruns are not the same problem.
    ReadsNotRerun(&'static str),
    /// Read as this format into one failed run (no values) whose stated reason holds
    /// this text: a harness that measured nothing, on record as failed.
    ReadsFailed(&'static str, &'static str),
    /// Refused: exit 2, the message names the file and a line, and holds this text.
    Refused(&'static str),
}
use Expect::*;

const FILES: &[(&str, Expect)] = &[
    (
        "aiter-table/aiter_pr2559_kimi_tuned_bf16_gemm_m131072.md",
        Reads("aiter-table"),
    ),
    // Hand-written with thousands separators (`72,340` ns) and a `Delta (ns)` column.
    (
        "aiter-table/aiter_pr2434_gemm_retune_first_table.md",
        Reads("aiter-table"),
    ),
    (
        "aiter-table/aiter_pr2434_gemm_retune_thousands_separators.md",
        Reads("aiter-table"),
    ),
    (
        "aiter-table/aiter_pr3747_rmsnorm_backends.md",
        Reads("aiter-table"),
    ),
    // GitHub's `| :--- |` left-aligns every column: numeric columns are told by their cells.
    (
        "aiter-table/aiter_pr4287_moe_a8w4_gluon_first_rows.md",
        Reads("aiter-table"),
    ),
    (
        "aiter-table/aiter_pr5349_a8w8_bmm_indented_first_rows.md",
        Reads("aiter-table"),
    ),
    // Cells of `117.30 µs (2050.4 TFLOPs)`: each cell's own unit, the header the variant.
    (
        "aiter-table/aiter_pr5397_opus_vs_triton_us_with_tflops.md",
        Reads("aiter-table"),
    ),
    (
        "aiter-table/aiter_pr5332_opus_vs_flydsl.md",
        Reads("aiter-table"),
    ),
    (
        "aiter-table/sglang_pr21421_aiter_topk_table.md",
        Reads("aiter-table"),
    ),
    // A hand-written table: GitHub separators, bold cells, a platform column whose
    // cells carry the arch in parentheses.
    (
        "aiter-table/flydsl_pr225_fmha_peak_by_platform.md",
        Reads("aiter-table"),
    ),
    // GPUs down the side, TFLOPS across: read by shape its `TFLOPs` column holds the
    // GPU names, so every measured cell is empty: refused, never stored as nothing.
    // A separator of six cells under a header of five: a table that cannot be read.
    // Cells of `8.2 μs ± 1.66% (7.87 … 8.58 μs)`, and a `%` column: a ratio, never identity.
    (
        "aiter-table/gemmkernels_jl_pr190_times_with_spread_first_rows.md",
        Reads("aiter-table"),
    ),
    (
        "aiter-table/hipblaslt_pr5946_separator_wider_than_header.md",
        Refused("separator has 6 cells, header has 5"),
    ),
    // `Baseline`/`Tuned` columns without a unit: a variant's numbers, never identity;
    // nothing says what they measure, so nothing is compared.
    (
        "aiter-table/hipblaslt_pr8631_gfx1100_bbs_indented.md",
        ReadsDerivedOnly("aiter-table"),
    ),
    // A load run four times, one row each: repeats of one row, each run's median a trial.
    (
        "aiter-table/tt_inference_server_pr1708_repeated_configs.md",
        Reads("aiter-table"),
    ),
    (
        "aiter-table/triton_riscv_issue49_times_with_units_in_cells.md",
        Reads("aiter-table"),
    ),
    // `cpu` and `cuda` columns of numbers with no unit: found, nothing says what they are.
    (
        "aiter-table/mlx_benchmark_issue5_cpu_cuda_average.md",
        Refused("none of its columns read as measured"),
    ),
    // Before and after a missing `cuda.synchronize()` in two columns, no unit printed.
    (
        "aiter-table/mlx_benchmark_pr21_cuda_sync_before_after.md",
        ReadsDerivedOnly("aiter-table"),
    ),
    (
        "aiter-table/yhs_sample_issue4_sgemm_tflops_by_gpu.md",
        Refused("every measured column is empty"),
    ),
    (
        "aiter-tuned-csv/a8w8_tuned_batched_gemm.csv",
        Reads("aiter-tuned-csv"),
    ),
    (
        "aiter-tuned-csv/a8w8_tuned_gemm.csv",
        Reads("aiter-tuned-csv"),
    ),
    (
        "aiter-tuned-csv/a8w8_tuned_gemm_2025-01.csv",
        Reads("aiter-tuned-csv"),
    ),
    (
        "aiter-tuned-csv/a8w8_tuned_gemm_2025-09.csv",
        Reads("aiter-tuned-csv"),
    ),
    // No kernel column: nothing says it is a tuned config rather than any CSV.
    (
        "aiter-tuned-csv/asm_a8w8_gemm.csv",
        Refused("no recognizable benchmark data"),
    ),
    (
        "aiter-tuned-csv/bf16_tuned_gemm.csv",
        Reads("aiter-tuned-csv"),
    ),
    (
        "aiter-tuned-csv/chunk_gdn_h_opt_tuned.csv",
        Refused("no recognizable benchmark data"),
    ),
    (
        "aiter-tuned-csv/dsv3_fp4_tuned_fmoe.csv",
        Reads("aiter-tuned-csv"),
    ),
    // A hand-made comparison table, not FlyDSL's CI bench output.
    (
        "flydsl-bench/flydsl_pr848_norm_compare_mi308.txt",
        Refused("no recognizable benchmark data"),
    ),
    // The program's own prints inside the JSON, and the file cut off.
    (
        "google-benchmark/apexquantum_benchmark_output_corrupted.json",
        Refused("not a google-benchmark JSON"),
    ),
    (
        "google-benchmark/gab_googlecpp_output.json",
        Reads("google-benchmark"),
    ),
    (
        "google-benchmark/gbench_Inputs_test1_run1.json",
        Reads("google-benchmark"),
    ),
    (
        "google-benchmark/gbench_Inputs_test2_run.json",
        Reads("google-benchmark"),
    ),
    (
        "google-benchmark/gbench_Inputs_test3_run0.json",
        Reads("google-benchmark"),
    ),
    (
        // One aggregate row (`_mean`) and no iteration: aggregates are derived.
        "google-benchmark/gbench_Inputs_test4_run0.json",
        ReadsDerivedOnly("google-benchmark"),
    ),
    (
        "google-benchmark/kalman_results_100reps.json",
        Reads("google-benchmark"),
    ),
    // nvbench's JSON layout of 2021: states and summaries keyed by name, no tags.
    (
        "nvbench-json/nvbench_example_throughput_2gpu_2021.json",
        Reads("nvbench-json"),
    ),
    // A bare results table (no headings, no log) of CUB's select.if.
    (
        "nvbench-markdown/nvbench_pr206_select_if_upstream_table.md",
        Reads("nvbench-markdown"),
    ),
    // One state printed three times in one table (a JSON of three runs, summarised).
    (
        "nvbench-markdown/nvbench_pr356_json_summary_repeated_rows.md",
        Reads("nvbench-markdown"),
    ),
    // CUB's reduce: `Elements{io}=2^20` in the log, `2^20 = 1048576` in the table.
    (
        "nvbench-markdown/cub_reduce_sum_rtx4060_throttled_first_runs.md",
        Reads("nvbench-markdown"),
    ),
    // `[perf] a8w8 asm:    50.77 us ...... m=1, ...`: a value named before its colon.
    (
        "perf-lines/aiter_issue455_moe_blockscale_a8w8_asm_failed.txt",
        Reads("perf-lines"),
    ),
    // An aiter MoE `[perf]` line whose check failed on the same line.
    (
        "perf-lines/vllm_pr16418_aiter_tkw1_moe_failed_check.txt",
        Reads("perf-lines"),
    ),
    (
        "nvbench-markdown/cccl_pr7391_transform_div_b200_first_rows.md",
        Reads("nvbench-markdown"),
    ),
    (
        "nvbench-markdown/cccl_pr8611_compare_warpspeed_b200_first_rows.md",
        Refused("an nvbench compare report"),
    ),
    // cuDF's parquet benchmarks: times in seconds, sizes in GiB, user counters.
    (
        "nvbench-markdown/cudf_pr11611_parquet_reader_seconds_first_rows.md",
        Reads("nvbench-markdown"),
    ),
    (
        "nvbench-markdown/cudf_pr24162_hybrid_scan_setup_first_rows.md",
        Reads("nvbench-markdown"),
    ),
    // nvbench_compare.py's reports as cuCollections PRs paste them: refused.
    (
        "nvbench-markdown/cucollections_pr409_compare_static_map_first_rows.md",
        Refused("an nvbench compare report"),
    ),
    (
        "nvbench-markdown/cucollections_pr515_insert_or_apply_t4_first_rows.md",
        Reads("nvbench-markdown"),
    ),
    (
        "nvbench-markdown/cucollections_pr681_compare_static_map_unique_first_rows.md",
        Refused("an nvbench compare report"),
    ),
    (
        "nvbench-markdown/cucollections_pr771_compare_multimap_first_rows.md",
        Refused("an nvbench compare report"),
    ),
    (
        "nvbench-markdown/flashattn_bench_a30_gqa2.md",
        Reads("nvbench-markdown"),
    ),
    (
        "nvbench-markdown/flashattn_bench_a30_seqlen4096.md",
        Reads("nvbench-markdown"),
    ),
    (
        "nvbench-markdown/flashattn_kvcache_a30_seqlen32768_first_rows.md",
        Reads("nvbench-markdown"),
    ),
    (
        "nvbench-markdown/flashattn_kvcache_a30_gpt_small_all_skipped_excerpt.md",
        ReadsFailed(
            "nvbench-markdown",
            "run_mha_kvcache: no data: nvbench skipped 4 of its 4 state(s) (OOM:",
        ),
    ),
    (
        "nvbench-markdown/gunrock_pr99_parallel_for_gtx1080.md",
        Reads("nvbench-markdown"),
    ),
    (
        "nvbench-markdown/nvbench_example_throughput_2gpu.md",
        Reads("nvbench-markdown"),
    ),
    (
        "nvbench-markdown/nvbench_issue115_throughput_fenced.md",
        Reads("nvbench-markdown"),
    ),
    (
        "nvbench-markdown/nvbench_issue194_batch_graph_table.md",
        Reads("nvbench-markdown"),
    ),
    (
        "nvbench-markdown/nvbench_issue270_fill_rtx5090.md",
        Reads("nvbench-markdown"),
    ),
    // nvbench_compare.py's report: the differences of two runs, refused as what it is.
    (
        "nvbench-markdown/nvbench_issue310_compare_b200_first_rows.md",
        Refused("an nvbench compare report"),
    ),
    (
        "nvbench-markdown/nvbench_issue334_rtx_a6000.md",
        Reads("nvbench-markdown"),
    ),
    (
        "nvbench-markdown/nvbench_pr14_compare_report_first_rows.md",
        Refused("an nvbench compare report"),
    ),
    // A results section without its log: the axes told by their cells (`2^5 = 32`).
    (
        "nvbench-markdown/pmpp_array_add_3060ti_results_section_first_table.md",
        Reads("nvbench-markdown"),
    ),
    // The summaries example: axes named `ms` and `us`, min and max times, the mean hidden.
    (
        "nvbench-markdown/nvbench_pr204_summaries_min_max_first_rows.md",
        Reads("nvbench-markdown"),
    ),
    (
        "nvbench-markdown/nvbench_pr392_summaries_clock_rate.md",
        Reads("nvbench-markdown"),
    ),
    (
        "pytest-benchmark/dynamixplore_benchmark_output.json",
        Reads("pytest-benchmark"),
    ),
    (
        "pytest-benchmark/gab_pytest_output.json",
        Reads("pytest-benchmark"),
    ),
    (
        "pytest-benchmark/gab_pytest_several_units.json",
        Reads("pytest-benchmark"),
    ),
    (
        "pytest-benchmark/pb2.5.0_0030_uncommitted-changes.json",
        Reads("pytest-benchmark"),
    ),
    (
        "pytest-benchmark/pb2.5.0_histogram_0001.json",
        Reads("pytest-benchmark"),
    ),
    (
        "pytorch-v3/pytorch_transformer_test_dashboard.json",
        Reads("pytorch-v3"),
    ),
    (
        "rocm-bench-csv/hipblaslt_pr1544_2025_efficiency.txt",
        Reads("rocm-bench-csv"),
    ),
    (
        "rocm-bench-csv/hipblaslt_pr395_2023_cpu_check.txt",
        Reads("rocm-bench-csv"),
    ),
    // The device lines name GPUs the device table lacks (or cannot tell apart).
    (
        "rocm-bench-csv/tensorflow_upstream_issue2904_mi250x_mi250.txt",
        Reads("rocm-bench-csv"),
    ),
    // A broken build: garbage alpha and beta (part of the key) and 1,507 TFLOPS.
    (
        "rocm-bench-csv/rocblas_issue1554_rx6800xt_gflops_too_high.txt",
        ReadsNotRerun("rocm-bench-csv"),
    ),
    (
        "rocm-bench-csv/hipblaslt_issue251_radeon_vii_first_run.txt",
        Reads("rocm-bench-csv"),
    ),
    // Post-processed aggregates: no field a serving result carries.
    (
        "serving/inferencex_agg_kimik2.5_conc4_NEARMISS.json",
        Refused("no recognizable benchmark data"),
    ),
    // vLLM's fields, latencies in seconds without `_ms`: those kept unclassified (never
    // read as ms), the throughputs compared.
    (
        "serving/inferencex_glm5_slo_conc16_NEARMISS.json",
        Reads("serving"),
    ),
    ("serving/sglang_1022_1_1024_128.jsonl", Reads("serving")),
    ("serving/sglang_1110_100_1024_128.jsonl", Reads("serving")),
    (
        "serving/sglang_dlora_trace_azure_v1_8.0.jsonl",
        Reads("serving"),
    ),
    ("serving/sglang_rate64_stride4.jsonl", Reads("serving")),
    ("serving/vllm_gptoss120b_conc16.json", Reads("serving")),
    ("serving/vllm_gptoss120b_conc4.json", Reads("serving")),
    ("serving/vllm_gptoss120b_conc8.json", Reads("serving")),
    ("serving/vllm_minimax_m2.5_conc4.json", Reads("serving")),
    // The printed `Serving Benchmark Result` block, as READMEs and result notes keep a
    // run: read as the JSON it stands for (vLLM's and SGLang's, one block or several).
    (
        "serving/learning_project_benchmarks_readme_two_blocks.md",
        Reads("serving"),
    ),
    (
        "serving/sglang_dlora_results_six_rates.md",
        Reads("serving"),
    ),
    (
        "serving/vllm_benchmarking_readme_test1_first_block.txt",
        Reads("serving"),
    ),
    (
        "torch-compare/tutorial_batched_dot_4threadgroups.txt",
        Reads("torch-compare"),
    ),
    (
        "torch-compare/tutorial_batched_dot_binary_fuzzer.txt",
        Reads("torch-compare"),
    ),
    (
        "torch-compare/tutorial_batched_dot_env_ab.txt",
        Reads("torch-compare"),
    ),
    (
        "torch-compare/tutorial_batched_dot_fuzzed.txt",
        Reads("torch-compare"),
    ),
    // A Compare table whose label is as wide as the table (`[ label ]`, no dashes), its
    // footer cut off where the thread's excerpt ends: without the unit, refused.
    (
        "torch-compare/xformers_pr479_attention_compare_first_rows.txt",
        Refused("no torch.utils.benchmark Compare table"),
    ),
    // A script's own `value (+-IQR)` cells inside Compare-like tables.
    (
        "torch-compare/vfdev5_affine_grid_sampler_PR_vs_nightly.md",
        Refused("is not a number"),
    ),
    // The fused-softmax tutorial before 3.6: `Torch (native)` names a line, not a unit.
    (
        "triton-csv/devvidhani_softmax-performance_native_jit_first_rows.csv",
        ReadsWithUnit("triton-csv", "GB/s"),
    ),
    // Integral values in the first rows of the line columns: the later rows tell.
    (
        "triton-csv/janakirampuli_vector-add-performance.csv",
        ReadsWithUnit("triton-csv", "GB/s"),
    ),
    (
        "triton-csv/gmongaras_softmax-performance_first_rows.csv",
        ReadsWithUnit("triton-csv", "GB/s"),
    ),
    (
        "triton-csv/paran0idy_matmul-performance.csv",
        ReadsWithUnit("triton-csv", "TFLOPS"),
    ),
    (
        "triton-csv/jongseokang_matmul-performance-fp16_first_rows.csv",
        ReadsWithUnit("triton-csv", "TFLOPS"),
    ),
    // The plot name, with `=`, is the file name.
    (
        "triton-csv/fused-attention-batch4-head32-d64-fwd-causal=True.csv",
        ReadsWithUnit("triton-csv", "TFLOPS"),
    ),
    (
        "triton-csv/carolove_layer-norm-backward_first_rows.csv",
        ReadsWithUnit("triton-csv", "GB/s"),
    ),
    // Triton 3.6: every line `<line> (GB/s)`, the unit read from the header.
    (
        "triton-csv/searlion_layer-norm-backward_ylabel_first_rows.csv",
        Reads("triton-csv"),
    ),
    (
        "triton-csv/layer-norm-backward.csv",
        ReadsWithUnit("triton-csv", "GB/s"),
    ),
    (
        "triton-csv/matmul-performance.csv",
        ReadsWithUnit("triton-csv", "TFLOPS"),
    ),
    (
        "triton-csv/matmul-performance_single-line.csv",
        ReadsWithUnit("triton-csv", "ms"),
    ),
    (
        "triton-csv/softmax-performance.csv",
        ReadsWithUnit("triton-csv", "GB/s"),
    ),
    (
        "triton-csv/softmax-triton_softmax-performance.csv",
        ReadsWithUnit("triton-csv", "GB/s"),
    ),
    (
        "triton-csv/vector-add-performance.csv",
        ReadsWithUnit("triton-csv", "GB/s"),
    ),
    // A plot named with `=` before a second table: both tables read.
    // Printed without pandas' index (Triton 2026): read by its labelled header; the
    // ratio columns between the lines are derived ratios.
    (
        "triton-perf-report/triton_pr9697_block_scaled_2cta_no_index_first_tables.txt",
        Reads("triton-perf-report"),
    ),
    (
        "triton-perf-report/triton_pr3546_fp8_h100_first_rows.txt",
        ReadsWithUnit("triton-perf-report", "TFLOPS"),
    ),
    (
        "triton-perf-report/intel_xpu_issue473_softmax_max1100_elided.txt",
        ReadsWithUnit("triton-perf-report", "GB/s"),
    ),
    (
        "triton-perf-report/triton_cpu_pr22_softmax_cpu_first_rows.txt",
        ReadsWithUnit("triton-perf-report", "GB/s"),
    ),
    (
        "triton-csv/zhangchengzhucufe_triton-kernel-lab_softmax-performance.csv",
        Reads("triton-csv"),
    ),
    (
        "triton-csv/teadrinke_triton_vector-add-performance.csv",
        Reads("triton-csv"),
    ),
    (
        "triton-csv/bibhabasumohapatra_triton_lessons_vector-add-performance.csv",
        ReadsWithUnit("triton-csv", "GB/s"),
    ),
    (
        "triton-csv/kuigesi_triton-cpu_softmax-performance_first_rows.csv",
        ReadsWithUnit("triton-csv", "GB/s"),
    ),
    (
        "triton-csv/jaygala223_tryton_softmax-performance_first_rows.csv",
        Reads("triton-csv"),
    ),
    // Cells of a number and its unit in bold, fractions and a sentence: no column of
    // plain numbers.
    (
        "aiter-table/kekzl_imp_pr606_mma_peak_calibration_table.md",
        Refused("not plain numbers"),
    ),
    // A profiler's pandas summary, hand-made prints of kernels' TFLOPS, proton's text
    // tree: no format perfdb reads, and none taken for one.
    (
        "unrecognized/rocm_triton_pr757_rocm_triton_prof_counter_tables.txt",
        Refused("no recognizable benchmark data"),
    ),
    (
        "unrecognized/triton_pr10060_fp64_a100_dashed_first_rows.txt",
        Refused("no recognizable benchmark data"),
    ),
    (
        "unrecognized/triton_pr10047_gluon_moe_bmm1_tflops_cells_first_rows.txt",
        Refused("no recognizable benchmark data"),
    ),
    (
        "unrecognized/triton_pr9044_proton_tree_mxfp8.txt",
        Refused("no recognizable benchmark data"),
    ),
    (
        "unrecognized/fastcu_issue13_kernel_tflops_lines.txt",
        Refused("no recognizable benchmark data"),
    ),
    (
        "unrecognized/llmc_pr98_matmul_forward_tflops_lines.txt",
        Refused("no recognizable benchmark data"),
    ),
    (
        "triton-perf-report/fbexp_triton_pr205_fused_attention_title_with_equals.txt",
        ReadsWithUnit("triton-perf-report", "TFLOPS"),
    ),
    (
        "triton-perf-report/fbexp_triton_pr206_fused_attention_ws_3tables.txt",
        ReadsWithUnit("triton-perf-report", "TFLOPS"),
    ),
    (
        "triton-perf-report/triton_issue4424_block_ptr_matmul_3lines_first_rows.txt",
        ReadsWithUnit("triton-perf-report", "TFLOPS"),
    ),
    (
        "triton-perf-report/triton_pr2459_fused_attention_causal_true_h100_first_rows.txt",
        ReadsWithUnit("triton-perf-report", "TFLOPS"),
    ),
    (
        "triton-perf-report/flashattn_issue142_fmha_two_plots_ms.txt",
        ReadsWithUnit("triton-perf-report", "ms"),
    ),
    (
        "triton-perf-report/fbexp_triton_pr180_tlx_matmul_first_rows.txt",
        ReadsWithUnit("triton-perf-report", "TFLOPS"),
    ),
    (
        "triton-perf-report/intel_xpu_issue1122_matmul_onednn_first_rows.txt",
        ReadsWithUnit("triton-perf-report", "TFLOPS"),
    ),
    // Line names that carry their unit (`Triton-GB/s`, `XeTLA-TFlops-min`).
    (
        "triton-perf-report/intel_xpu_issue1350_softmax_unit_in_line_names_first_rows.txt",
        Reads("triton-perf-report"),
    ),
    (
        "triton-perf-report/intel_xpu_issue544_softmax_truncated_rows.txt",
        ReadsWithUnit("triton-perf-report", "GB/s"),
    ),
    // Its index starts at 1 (the author removed row 0): not as Triton prints.
    (
        "triton-perf-report/olmo_issue258_layernorm_4tables.txt",
        Refused("no recognizable benchmark data"),
    ),
    (
        "triton-perf-report/rocm_triton_issue396_matmul_mi100.txt",
        ReadsWithUnit("triton-perf-report", "TFLOPS"),
    ),
    (
        "triton-perf-report/rocm_triton_pr343_group-gemm_mi250.txt",
        ReadsWithUnit("triton-perf-report", "ms"),
    ),
    (
        "triton-perf-report/rocm_triton_pr343_group-gemm_mi250x.txt",
        ReadsWithUnit("triton-perf-report", "ms"),
    ),
    // No `<plot_name>:` line: nothing says it is Triton's.
    (
        "triton-perf-report/triton_issue319_2021_leakyrelu_no_title.txt",
        Refused("no recognizable benchmark data"),
    ),
    // Every line behind `# `.
    (
        "triton-perf-report/triton_issue5433_fp32_hash_prefixed.txt",
        Refused("no recognizable benchmark data"),
    ),
    (
        "triton-perf-report/triton_issue5995_vector-add_rtx4070.txt",
        ReadsWithUnit("triton-perf-report", "GB/s"),
    ),
    (
        "triton-perf-report/triton_issue6523_a100_triton3.5.1.txt",
        ReadsWithUnit("triton-perf-report", "TFLOPS"),
    ),
    (
        "triton-perf-report/triton_pr6685_grouped-gemm_tma_2tables_proton.txt",
        ReadsWithUnit("triton-perf-report", "TFLOPS"),
    ),
    (
        "triton-perf-report/triton_pr8631_units_vector-add.txt",
        Reads("triton-perf-report"),
    ),
    // `--simple-output` with an accuracy column beside the TFLOPS.
    (
        "tritonbench/tritonbench_pr1014_blackwell_attentions_tflops.txt",
        Reads("tritonbench"),
    ),
    (
        "tritonbench/tritonbench_pr220_hstu_config_file.txt",
        Reads("tritonbench"),
    ),
    // `(M, N, K)` keys, `(±0.36%)` spreads, an empty speedup column, an `average` row.
    (
        "tritonbench/tritonbench_pr894_gemm_tma_before.txt",
        Reads("tritonbench"),
    ),
    // The x column headed by the op's input names, not `x_val`.
    (
        "tritonbench/tritonbench_pr83_flash_attention_named_x.txt",
        Reads("tritonbench"),
    ),
    // Not benchmark output of any format: another tool's history, refused as what it is.
    // `batch: 1 | Total latency (us): 50.10 | ...`: a script's own lines, no format.
    (
        "unrecognized/aiter_pr3116_moe_a8w4_key_value_lines.txt",
        Refused("no recognizable benchmark data"),
    ),
    // Rows of an nvbench compare report pasted without its header: no format's table.
    // Scripts' own prints: no format perfdb reads.
    (
        "unrecognized/ai_on_gke_pr868_serving_console_summary.txt",
        Refused("no recognizable benchmark data"),
    ),
    (
        "unrecognized/ring_attention_issue10_flash_bench_lines.txt",
        Refused("no recognizable benchmark data"),
    ),
    (
        "unrecognized/torch_perf_data_issue79_h100_tflops_lines.txt",
        Refused("no recognizable benchmark data"),
    ),
    (
        "unrecognized/triton_shared_pr209_bench_softmax_wall_cpu.txt",
        Refused("no recognizable benchmark data"),
    ),
    (
        "unrecognized/cudf_pr16751_rows_without_header.md",
        Refused("no recognizable benchmark data"),
    ),
    (
        "unrecognized/cccl_pr9722_nvbench_compare_rows_without_header.md",
        Refused("no recognizable benchmark data"),
    ),
    // A Triton table pasted without its plot title.
    (
        "unrecognized/triton_issue3672_matmul_h100_no_title_first_rows.txt",
        Refused("no recognizable benchmark data"),
    ),
    // A script's own `Flash2 fwd: 84.08 TFLOPs/s, bwd: ...` lines: no format perfdb reads.
    (
        "unrecognized/ring_attention_issue10_flash_fwd_bwd_tflops_lines.txt",
        Refused("no recognizable benchmark data"),
    ),
    // Plot titles with text after the colon, each above a fenced table: no Triton print.
    (
        "unrecognized/flashattn_issue307_fused_attention_titles_outside_fences.md",
        Refused("no recognizable benchmark data"),
    ),
    // A compare report pasted bare (no headings, a Status column): no format's, and
    // refused as what it is.
    (
        "unrecognized/nvbench_pr190_compare_status_u32_u64.md",
        Refused("an nvbench compare report"),
    ),
    (
        "unrecognized/flashinfer_pr2277_tgv_gemm_average_time_lines.txt",
        Refused("no recognizable benchmark data"),
    ),
    (
        "unrecognized/flashinfer_pr2277_tgv_gemm_m64_block.txt",
        Refused("no recognizable benchmark data"),
    ),
    (
        "unrecognized/github_action_benchmark_data_js_loodahu.js",
        Refused("a github-action-benchmark history"),
    ),
    (
        "unrecognized/google_benchmark_issue333_console_gpu.txt",
        Refused("google-benchmark's console table"),
    ),
    // A GPU benchmark UI shaped like google-benchmark's, of no format perfdb reads.
    (
        "unrecognized/llvm_libc_pr99796_gpu_benchmark_ui.txt",
        Refused("no recognizable benchmark data"),
    ),
    // JMH's result table (Java): no format perfdb reads.
    (
        "unrecognized/jmh_pinot_issue7866_avgt_table.txt",
        Refused("no recognizable benchmark data"),
    ),
    (
        "unrecognized/mlx_pr3077_prompt_tps_lines.txt",
        Refused("no recognizable benchmark data"),
    ),
    // PyTorch's operator_benchmark prints: no format perfdb reads (yet).
    (
        "unrecognized/pytorch_pr27923_operator_benchmark_observer_lines.txt",
        Refused("no recognizable benchmark data"),
    ),
    (
        "unrecognized/pytorch_pr28897_operator_benchmark_linear.txt",
        Refused("no recognizable benchmark data"),
    ),
    (
        "unrecognized/pytest_benchmark_issue187_console_table.txt",
        Refused("pytest-benchmark's console table"),
    ),
    // Hardware counters: stored undirected (diffed beside the rows they explain, never
    // judged alone), so a counter file alone holds nothing to compare.
    // ncu's details page around superbench's cublaslt_gemm: its one result line is no
    // format perfdb reads (a warning says so), the counters are stored.
    (
        "ncu-csv/superbench_cublaslt_ncu.log",
        ReadsDerivedOnly("ncu-csv"),
    ),
    (
        "rocprofv3-csv/rocprofiler_sdk_docs_counter_collection.csv",
        ReadsDerivedOnly("rocprofv3-csv"),
    ),
    (
        "rocprofv3-csv/rocprofiler_sdk_docs_kernel_trace.csv",
        ReadsDerivedOnly("rocprofv3-csv"),
    ),
    (
        "proton-hatchet/triton_proton_cuda.json",
        ReadsDerivedOnly("proton-hatchet"),
    ),
    (
        "proton-hatchet/triton_proton_hip.json",
        ReadsDerivedOnly("proton-hatchet"),
    ),
    (
        "proton-hatchet/triton_proton_scoped.json",
        ReadsDerivedOnly("proton-hatchet"),
    ),
];

/// A number token in a line: where it starts and ends, and whether a rerun prints another
/// value there (a fraction, an exponent, a ratio `1.31x`, a percentage): integers are
/// sizes and counts, left as they are.
fn numbers(line: &str) -> Vec<(usize, usize, bool)> {
    let b = line.as_bytes();
    let table_row = line.trim_start().starts_with('|');
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit()
            || (matches!(b[i], b'-' | b'+' | b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit));
        if !starts || (i > 0 && (word(b[i - 1]) || b[i - 1] == b'.')) {
            i += 1;
            continue;
        }
        let s = i;
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        // Thousands groups (`72,340`) in a pipe-table row are one number; in a CSV line
        // a comma separates cells.
        let grouped = table_row && !line[s..i].contains('.') && i - s <= 4;
        while grouped
            && i + 3 < b.len()
            && b[i] == b','
            && b[i + 1..i + 4].iter().all(u8::is_ascii_digit)
            && b.get(i + 4).is_none_or(|c| !c.is_ascii_digit())
        {
            i += 4;
        }
        if i < b.len() && matches!(b[i], b'e' | b'E') {
            let mut j = i + 1;
            if j < b.len() && matches!(b[j], b'+' | b'-') {
                j += 1;
            }
            if j < b.len() && b[j].is_ascii_digit() {
                i = j;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
        }
        let mut e = i;
        if e < b.len() && matches!(b[e], b'x' | b'%') {
            e += 1;
        }
        if e < b.len() && word(b[e]) {
            i = e;
            continue;
        }
        let t = &line[s..e];
        if t.matches('.').count() > 1 {
            // A version (`2.1.0`), not a number.
            continue;
        }
        let moving = t.contains(['e', 'E', 'x', '%'])
            || t.split_once('.')
                .is_some_and(|(_, f)| f.bytes().any(|c| (b'1'..=b'9').contains(&c)));
        out.push((s, e, moving));
        i = e;
    }
    out
}

/// `token` times `factor`, printed as the token was (its decimals, its exponent, its
/// suffix).
fn scaled(token: &str, factor: f64) -> String {
    if token.contains(',') {
        // `72,340`: scaled as a whole number and grouped again.
        let v: f64 = token.replace(',', "").parse().expect("a grouped number");
        let digits = format!("{:.0}", v * factor);
        let (sign, digits) = match digits.strip_prefix('-') {
            Some(d) => ("-", d.to_string()),
            None => ("", digits),
        };
        let mut grouped = String::new();
        for (k, c) in digits.chars().enumerate() {
            if k > 0 && (digits.len() - k) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(c);
        }
        return format!("{sign}{grouped}");
    }
    let (body, suffix) = match token.as_bytes().last() {
        Some(b'x' | b'%') => token.split_at(token.len() - 1),
        _ => (token, ""),
    };
    let v: f64 = body.parse().expect("a number token");
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(p) => (&body[..p], Some(&body[p..])),
        None => (body, None),
    };
    let decimals = mantissa.split_once('.').map_or(0, |(_, f)| f.len());
    let plus = if body.starts_with('+') && v * factor >= 0.0 {
        "+"
    } else {
        ""
    };
    let printed = match exp {
        Some(_) => format!("{:.*e}", decimals, v * factor),
        None => format!("{:.*}", decimals, v * factor),
    };
    format!("{plus}{printed}{suffix}")
}

/// A rerun of `text`: on `lines` (1-based), each moving number times 1 +- 0.4%
/// (deterministic in `seed`); the numbers `target` names (line, token) times `factor`.
fn rerun(
    text: &str,
    lines: &BTreeSet<usize>,
    seed: u64,
    target: &[(usize, String)],
    factor: f64,
) -> String {
    let mut rng = perfdb_reports::stats::SplitMix64::new(seed);
    let mut out = String::with_capacity(text.len() + 64);
    for (k, line) in text.split_inclusive('\n').enumerate() {
        let no = k + 1;
        if !lines.contains(&no) {
            out.push_str(line);
            continue;
        }
        let mut new = String::with_capacity(line.len());
        let mut at = 0;
        for (s, e, moving) in numbers(line) {
            let token = &line[s..e];
            let hit = target
                .iter()
                .any(|(l, t)| (*l == no || *l == 0) && t == token);
            if !moving && !hit {
                continue;
            }
            let noise = 1.0 + 0.008 * (rng.uniform() - 0.5);
            let mut with = scaled(token, if hit { factor * noise } else { noise });
            // Keep right-aligned columns aligned: a longer number takes the blanks before it.
            let mut start = s;
            while with.len() > e - start && start > at && line.as_bytes()[start - 1] == b' ' {
                start -= 1;
            }
            while with.len() < e - start {
                with.insert(0, ' ');
            }
            new.push_str(&line[at..start]);
            new.push_str(&with);
            at = e;
        }
        new.push_str(&line[at..]);
        out.push_str(&new);
    }
    out
}

#[test]
fn number_tokens_and_their_reruns() {
    let line = "|  16 |  256 | bfloat16 | 3.02416 | 1.31x | +49.2% | 1.5e-05 | fp16 |";
    let toks: Vec<(&str, bool)> = numbers(line)
        .iter()
        .map(|(s, e, m)| (&line[*s..*e], *m))
        .collect();
    assert_eq!(
        toks,
        [
            ("16", false),
            ("256", false),
            ("3.02416", true),
            ("1.31x", true),
            ("+49.2%", true),
            ("1.5e-05", true)
        ]
    );
    assert_eq!(scaled("3.02416", 2.0), "6.04832");
    assert_eq!(scaled("1.31x", 2.0), "2.62x");
    assert_eq!(scaled("+49.2%", 0.5), "+24.6%");
    assert_eq!(scaled("1.5e-05", 2.0), "3.0e-5");
    assert_eq!(scaled("72,340", 1.5), "108,510");
    let grouped = "| 8 | 72,340 | -6,670 |";
    let toks: Vec<&str> = numbers(grouped)
        .iter()
        .map(|(s, e, _)| &grouped[*s..*e])
        .collect();
    assert_eq!(toks, ["8", "72,340", "-6,670"]);
    let lines = BTreeSet::from([1]);
    let row = "0     256.0  546.133347      546.133347\n";
    let again = rerun(row, &lines, 1, &[(1, "546.133347".into())], 3.0);
    assert_eq!(again.len(), row.len(), "{again}");
    // The x value stays (an integral float is a size); both cells of the target's text
    // are three times theirs, within the noise, and the columns keep their right edges.
    assert_eq!(again, "0     256.0 1639.272477     1641.621552\n");
}

/// One stored value: its line, its printed number, its row (table, variant, key,
/// metric), its direction, whether it has a value.
type Stored = (
    usize,
    String,
    (String, String, String, String),
    String,
    bool,
);

/// The file's values as perfdb stored them.
fn values(wh: &Wh) -> Vec<Stored> {
    wh.sql(
        "SELECT line, raw, table_name, variant, key, metric, direction, value IS NOT NULL AS has \
         FROM measurements ORDER BY line, column_name",
    )
    .into_iter()
    .map(|r| {
        let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
        let raw = s("raw");
        let token = raw.split_whitespace().next().unwrap_or("").to_string();
        (
            r["line"].as_i64().unwrap() as usize,
            token,
            (s("table_name"), s("variant"), s("key"), s("metric")),
            s("direction"),
            r["has"].as_bool().unwrap_or(false),
        )
    })
    .collect()
}

fn ingest_args<'a>(path: &'a str, label: &'a str, unit: Option<&'a str>) -> Vec<&'a str> {
    let mut a = vec!["ingest", path, "--label", label];
    if let Some(u) = unit {
        a.extend(["--unit", u]);
    }
    a
}

/// Three reruns a side, one row 30% worse on head: exactly that row regresses.
fn rerun_flags_exactly_the_changed_row(rel: &str, text: &str, unit: Option<&str>) {
    let name = Path::new(rel).file_name().unwrap().to_str().unwrap();
    let probe = Wh::new();
    let path = sample(&format!("realworld/{rel}"));
    probe.ok(&ingest_args(path.to_str().unwrap(), "probe", unit));
    let vals = values(&probe);
    // JSON formats name a record's line, not each value's: every line is a value line,
    // and a value is found by its text anywhere (line 0).
    let json = rel.ends_with(".json") || rel.ends_with(".jsonl");
    let lines: BTreeSet<usize> = if json {
        (1..=text.lines().count()).collect()
    } else {
        vals.iter().map(|v| v.0).collect()
    };
    // The target: the first compared value (a direction, a number) whose printed text
    // is one token and appears once on its line; every value of the same row with it.
    let line_text = |no: usize| text.lines().nth(no - 1).unwrap_or("");
    let once = |no: usize, tok: &str| {
        let scope: Vec<&str> = if json {
            text.lines().collect()
        } else {
            vec![line_text(no)]
        };
        scope
            .iter()
            .map(|l| {
                numbers(l)
                    .iter()
                    .filter(|(s, e, _)| &l[*s..*e] == tok)
                    .count()
            })
            .sum::<usize>()
            == 1
    };
    // A file whose every compared number is printed twice on its line (nvbench's min
    // and max of a two-sample run) changes both: the other is never compared.
    let compared = |v: &&Stored| v.4 && v.3 != "none";
    let target = vals
        .iter()
        .filter(compared)
        .find(|(no, tok, ..)| once(*no, tok))
        .or_else(|| vals.iter().find(compared))
        .unwrap_or_else(|| panic!("{rel}: no value to change"))
        .clone();
    let (_, _, id, dir, _) = &target;
    let tokens: Vec<(usize, String)> = vals
        .iter()
        .filter(|v| &v.2 == id)
        .map(|v| (if json { 0 } else { v.0 }, v.1.clone()))
        .collect();
    let worse = if dir == "lower" { 1.3 } else { 1.0 / 1.3 };
    let wh = Wh::new();
    for (side, factor) in [("base", 1.0), ("head", worse)] {
        let dir = wh.dir.path().join(side);
        std::fs::create_dir_all(&dir).unwrap();
        // Each trial under the file's own name: some formats take the table from it.
        for t in 0..3u64 {
            let seed = t * 2 + u64::from(side == "head");
            let text = rerun(text, &lines, seed, &tokens, factor);
            std::fs::create_dir_all(dir.join(t.to_string())).unwrap();
            std::fs::write(dir.join(t.to_string()).join(name), text).unwrap();
        }
        wh.ok(&ingest_args(dir.to_str().unwrap(), side, unit));
    }
    let (code, report) = compare_json(&wh, &["base", "head"]);
    let regressed: Vec<(String, String, String)> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "regression")
        .map(|r| {
            (
                r["table"].as_str().unwrap().to_string(),
                r["variant"].as_str().unwrap().to_string(),
                r["metric"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        regressed,
        [(id.0.clone(), id.1.clone(), id.3.clone())],
        "{rel}: head made {id:?} 30% worse; the report: {}\n{}",
        report["reason"],
        report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["table"] == id.0.as_str() && r["variant"] == id.1.as_str())
            .take(3)
            .map(|r| format!(
                "{} {} {} {}",
                r["key_text"], r["metric"], r["verdict"], r["reason"]
            ))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(code, 1, "{rel}: {}", report["reason"]);
}

#[test]
fn every_real_file_reads_right_or_is_refused_with_its_line() {
    let mut failures = Vec::new();
    let mut seen = BTreeSet::new();
    for (rel, expect) in FILES {
        seen.insert(rel.to_string());
        let path = sample(&format!("realworld/{rel}"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let wh = Wh::new();
        let unit = match expect {
            ReadsWithUnit(_, u) => Some(*u),
            _ => None,
        };
        let out = wh.run(&ingest_args(path.to_str().unwrap(), "x", unit));
        let said = format!("{}{}", stdout(&out), stderr(&out));
        match expect {
            ReadsDerivedOnly(format) => {
                let compared =
                    wh.count("SELECT count(*) FROM measurements WHERE direction <> 'none'");
                let got = wh.sql("SELECT DISTINCT format FROM runs");
                if code(&out) != 0 || got.len() != 1 || got[0]["format"] != *format || compared != 0
                {
                    failures.push(format!("{rel}: expected {format} with no compared value: exit {}, {got:?}, {compared} compared: {said}", code(&out)));
                }
            }
            Reads(format) | ReadsWithUnit(format, _) | ReadsNotRerun(format) => {
                if code(&out) != 0 {
                    failures.push(format!("{rel}: refused: {said}"));
                    continue;
                }
                let got = wh.sql("SELECT DISTINCT format FROM runs");
                if got.len() != 1 || got[0]["format"] != *format {
                    failures.push(format!("{rel}: read as {got:?}, not {format}"));
                    continue;
                }
                if matches!(expect, ReadsNotRerun(_)) {
                    continue;
                }
                let run = std::panic::catch_unwind(|| {
                    rerun_flags_exactly_the_changed_row(rel, &text, unit)
                });
                if let Err(e) = run {
                    let msg = e
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    failures.push(msg);
                }
            }
            ReadsFailed(format, why) => {
                let got =
                    wh.sql("SELECT format, verdict, verdict_detail, n_measurements FROM runs");
                let one = got.len() == 1
                    && got[0]["format"] == *format
                    && got[0]["verdict"] == "fail"
                    && got[0]["verdict_detail"]
                        .as_str()
                        .is_some_and(|d| d.contains(why))
                    && got[0]["n_measurements"] == 0;
                if code(&out) != 0 || !one {
                    failures.push(format!(
                        "{rel}: expected one failed {format} run saying {why:?}, got exit {}, {got:?}: {said}",
                        code(&out)
                    ));
                }
            }
            Refused(why) => {
                let line_named =
                    said.contains(&format!("{}:", path.file_name().unwrap().to_str().unwrap()));
                if code(&out) != 2 || !said.contains(why) || !line_named {
                    failures.push(format!(
                        "{rel}: expected a refusal saying {why:?}, got exit {}: {said}",
                        code(&out)
                    ));
                }
                let runs = wh.run(&["sql", "SELECT count(*) AS n FROM runs", "--format", "csv"]);
                if code(&runs) == 0 && !stdout(&runs).ends_with("\n0\n") {
                    failures.push(format!("{rel}: refused, yet a run was stored"));
                }
            }
        }
    }
    // Every file in the folder is in the table.
    for dir in std::fs::read_dir(sample("realworld")).unwrap() {
        let dir = dir.unwrap().path();
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            let name = f.file_name().unwrap().to_str().unwrap().to_string();
            if name == "PROVENANCE.md" {
                continue;
            }
            let rel = format!("{}/{name}", dir.file_name().unwrap().to_str().unwrap());
            if !seen.contains(&rel) {
                failures.push(format!("{rel}: not in FILES"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} file(s) wrong:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Ingest one real file (`--unit` where given) and return the warehouse.
fn read(rel: &str, extra: &[&str]) -> Wh {
    let wh = Wh::new();
    let path = sample(&format!("realworld/{rel}"));
    let mut args = vec!["ingest", path.to_str().unwrap(), "--label", "x"];
    args.extend_from_slice(extra);
    wh.ok(&args);
    wh
}

/// `SELECT` rows as `a|b|c` lines, the columns in the order of their names (as
/// `perfdb sql --format json` objects read).
fn rows(wh: &Wh, q: &str) -> Vec<String> {
    wh.sql(q)
        .iter()
        .map(|r| {
            r.as_object()
                .unwrap()
                .values()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

#[test]
fn a_rocm_bench_cpu_check_is_the_cpu_variant_never_the_gpu_kernel() {
    let wh = read("rocm-bench-csv/hipblaslt_pr395_2023_cpu_check.txt", &[]);
    assert_eq!(
        rows(&wh, "SELECT column_name, variant, metric, raw FROM measurements WHERE metric IN ('latency', 'throughput') ORDER BY column_name"),
        [
            "CPU-Gflops|throughput|4.092 Gflops|cpu",
            "CPU-us|latency|1025|cpu",
            "hipblaslt-Gflops|throughput|530.925 Gflops|hipblaslt",
            "us|latency|7.9|hipblaslt",
        ]
    );
}

#[test]
fn a_rocm_bench_names_its_gpu_and_an_unknown_one_is_never_its_archs_other_part() {
    for (rel, gpu, arch) in [
        // ROCm prints one name for the MI250X and the MI250: no peak of either is taken.
        (
            "tensorflow_upstream_issue2904_mi250x_mi250.txt",
            "AMD Instinct MI250X/MI250",
            "gfx90a",
        ),
        (
            "rocblas_issue1554_rx6800xt_gflops_too_high.txt",
            "AMD Radeon RX 6800 XT",
            "gfx1030",
        ),
        (
            "hipblaslt_issue251_radeon_vii_first_run.txt",
            "AMD Radeon VII",
            "gfx906",
        ),
    ] {
        let wh = Wh::new();
        let path = sample(&format!("realworld/rocm-bench-csv/{rel}"));
        let out = wh.run(&["ingest", path.to_str().unwrap(), "--label", "x"]);
        assert_eq!(code(&out), 0, "{rel}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("device unknown"),
            "{rel}: {}",
            stderr(&out)
        );
        let run = &wh.sql("SELECT arch, tags FROM runs")[0];
        assert_eq!(run["arch"], arch, "{rel}");
        let tags = tags_of(run);
        assert_eq!(tags["machine"], gpu, "{rel}");
        assert_eq!(
            tags["device"], gpu,
            "{rel}: the printed GPU, for a [[device]] added later"
        );
        assert_eq!(wh.count("SELECT count(*) FROM percent_of_peak"), 0, "{rel}");
    }
}

/// The rocBLAS maintainers' own report of a number the GPU cannot produce (1,507
/// TFLOPS on an RX 6800 XT), and hipBLASLt's (2,728 fp32 TFLOPS on a Radeon VII): with
/// the team's own device entry, ingest says so. The outputs print no input type, so
/// the value is held to the GPU's fastest type.
#[test]
fn a_teams_own_device_entry_catches_the_impossible_numbers_of_real_reports() {
    for (rel, entry, line, value, peak) in [
        (
            "rocm-bench-csv/rocblas_issue1554_rx6800xt_gflops_too_high.txt",
            "id = \"rx6800xt\"\nname = \"AMD Radeon RX 6800 XT\"\nidentities = [\"AMD Radeon RX 6800 XT\"]\nfp32 = 20.74\nfp16 = 41.47\nbandwidth = 0.512\n",
            18,
            "rocblas-Gflops 1507.0 TFLOPS",
            "its dense fastest (fp16) peak",
        ),
        (
            "rocm-bench-csv/hipblaslt_issue251_radeon_vii_first_run.txt",
            "id = \"radeon-vii\"\nname = \"AMD Radeon VII\"\nidentities = [\"AMD Radeon VII\"]\nfp64 = 3.46\nfp32 = 13.8\nfp16 = 27.7\nbandwidth = 1.024\n",
            11,
            "hipblaslt-Gflops 2727.6 TFLOPS",
            "its dense fastest (fp16) peak",
        ),
        (
            // nvbench's declared bytes: the whole KV cache, which a sliding window never
            // reads (the file's own BWUtil says 16914%).
            "nvbench-markdown/flashattn_kvcache_a30_seqlen32768_first_rows.md",
            "id = \"a30\"\nname = \"NVIDIA A30\"\nidentities = [\"NVIDIA A30\"]\nbandwidth = 0.933\n",
            45,
            "GlobalMem BW 157.8 TB/s",
            "its memory bandwidth is 0.933 TB/s",
        ),
    ] {
        let wh = Wh::new();
        std::fs::write(wh.dir.path().join("perfdb.toml"), format!("[[device]]\n{entry}")).unwrap();
        let path = sample(&format!("realworld/{rel}"));
        let out = wh
            .cmd()
            .current_dir(wh.dir.path())
            .args(["ingest", path.to_str().unwrap(), "--label", "x"])
            .output()
            .unwrap();
        let err = stderr(&out);
        let name = rel.rsplit('/').next().unwrap();
        assert_eq!(code(&out), 0, "{rel}: {err}");
        assert!(err.contains(&format!("{name}:{line}: {value} is above what the")), "{rel}: {err}");
        assert!(err.contains(peak), "{rel}: {err}");
    }
}

#[test]
fn hipblaslt_efficiency_columns_are_never_identity() {
    let wh = read("rocm-bench-csv/hipblaslt_pr1544_2025_efficiency.txt", &[]);
    let key = &wh.sql("SELECT DISTINCT key FROM measurements")[0]["key"];
    let key = key.as_str().unwrap();
    for col in [
        "efficiency",
        "lowest_avg_freq",
        "avg_MCLK",
        "median_MCLK",
        "total_gran",
        "num_cu's",
    ] {
        assert!(
            !key.contains(&format!("\"{col}\"")),
            "{col} in the key {key}"
        );
    }
    assert_eq!(
        rows(
            &wh,
            "SELECT metric, unit, value FROM measurements WHERE column_name = 'avg_MCLK'"
        ),
        ["clock|MHz|908.602"]
    );
}

#[test]
fn measured_cells_in_aiter_tables_are_never_identity() {
    for (rel, cols) in [
        (
            "aiter-table/sglang_pr21421_aiter_topk_table.md",
            &["aiter_vs_sgl"][..],
        ),
        (
            "aiter-table/aiter_pr5332_opus_vs_flydsl.md",
            &["saved", "max_diff", "rel"][..],
        ),
    ] {
        let wh = read(rel, &[]);
        for k in wh.sql("SELECT DISTINCT key FROM measurements") {
            let k = k["key"].as_str().unwrap();
            for col in cols {
                assert!(
                    !k.contains(&format!("\"{col}\"")),
                    "{rel}: {col} in the key {k}"
                );
            }
        }
        for col in cols {
            let m = rows(
                &wh,
                &format!("SELECT DISTINCT metric FROM measurements WHERE column_name = '{col}'"),
            );
            assert_eq!(m.len(), 1, "{rel}: {col}: {m:?}");
            assert!(
                ["ratio", "uplift", "unclassified"].contains(&m[0].as_str()),
                "{rel}: {col}: {m:?}"
            );
        }
    }
}

#[test]
fn an_aiter_tuned_csv_prints_bandwidth_in_gb_per_s() {
    let wh = read("aiter-tuned-csv/a8w8_tuned_gemm.csv", &[]);
    let first = rows(
        &wh,
        "SELECT unit, value, raw FROM measurements WHERE column_name = 'bw' ORDER BY line LIMIT 1",
    );
    assert_eq!(first, ["510.5 GB/s|TB/s|0.5105"]);
}

#[test]
fn python_infinity_in_sglang_jsonl_reads_as_an_infinite_rate() {
    let wh = read("serving/sglang_1022_1_1024_128.jsonl", &[]);
    let keys = rows(&wh, "SELECT DISTINCT key FROM measurements");
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert!(keys[0].contains("\"request_rate\":\"inf\""), "{keys:?}");
}

#[test]
fn a_printed_serving_block_lands_in_the_rows_of_its_json() {
    let wh = read("serving/sglang_dlora_results_six_rates.md", &[]);
    // Six blocks, six loads: the request rate is the key.
    assert_eq!(
        rows(
            &wh,
            "SELECT count(DISTINCT key), min(variant) FROM measurements"
        ),
        ["6|sglang"]
    );
    assert_eq!(
        rows(
            &wh,
            "SELECT metric, unit, value, line FROM measurements \
             WHERE key = '{\"request_rate\":\"2\"}' \
               AND metric IN ('ttft_median', 'e2el_mean', 'request_throughput', 'total_throughput') \
             ORDER BY metric"
        ),
        [
            "16|e2el_mean|us|2098070.0",
            "11|request_throughput|req/s|3.77",
            "14|total_throughput|tokens/s|2121.89",
            "20|ttft_median|us|606880.0",
        ]
    );
    // Two blocks of one load (vLLM prints none at rate `inf`) are told apart by place.
    let wh = read(
        "serving/learning_project_benchmarks_readme_two_blocks.md",
        &[],
    );
    assert_eq!(
        rows(
            &wh,
            "SELECT key, value FROM measurements WHERE metric = 'ttft_median' ORDER BY key"
        ),
        [r#"{"block":"1"}|43307820.0"#, r#"{"block":"2"}|39528120.0"#]
    );
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 1);
}

#[test]
fn triton_prints_from_before_3_6_keep_their_line_names_and_every_printed_row() {
    let wh = Wh::new();
    let path = sample("realworld/triton-perf-report/intel_xpu_issue544_softmax_truncated_rows.txt");
    let out = wh.run(&[
        "ingest",
        path.to_str().unwrap(),
        "--label",
        "x",
        "--unit",
        "GB/s",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains(":9: softmax-performance: pandas did not print 88 of its 98 rows (`..`)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        rows(&wh, "SELECT DISTINCT variant FROM measurements ORDER BY 1"),
        ["Torch (jit)", "Torch (native)", "Triton"]
    );
    // The rows after the gap are read: 10 printed rows, 3 lines each.
    assert_eq!(
        wh.count("SELECT count(*) FROM measurements WHERE unit = 'TB/s'"),
        30
    );
    assert_eq!(
        wh.count("SELECT count(*) FROM measurements WHERE key = '{\"N\":\"12672\"}'"),
        3
    );
    // Without --unit: kept, said once, never compared.
    let wh = Wh::new();
    let out = wh.run(&["ingest", path.to_str().unwrap(), "--label", "x"]);
    assert!(
        stderr(&out).contains("printed before Triton 3.6"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        wh.count("SELECT count(*) FROM measurements WHERE direction <> 'none'"),
        0
    );
}

/// The real save_path CSV of Triton 3.6 on the H200 (`sample-data/h200-triton36/`):
/// headed `size,Triton (GB/s),Torch (GB/s)`, its unit read from there, and the same values
/// as the printed table of the same run.
#[test]
fn a_triton_3_6_save_path_csv_takes_its_unit_from_the_header() {
    let wh = Wh::new();
    let csv = sample("h200-triton36/vector-add-performance.csv");
    let out = wh.run(&["ingest", csv.to_str().unwrap(), "--label", "csv"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!stderr(&out).contains("no ylabel"), "{}", stderr(&out));
    assert_eq!(
        rows(
            &wh,
            "SELECT DISTINCT format, variant, metric, unit FROM measurements JOIN runs USING (run_id) ORDER BY 2"
        ),
        ["triton-csv|bandwidth|TB/s|Torch", "triton-csv|bandwidth|TB/s|Triton"]
    );
    wh.ok(&[
        "ingest",
        sample("h200-triton36/vector-add-stdout.txt")
            .to_str()
            .unwrap(),
        "--label",
        "printed",
    ]);
    let same = "SELECT label, variant, key, round(value, 9) AS v FROM measurements ORDER BY 2, 3";
    let (csv, printed): (Vec<_>, Vec<_>) =
        wh.sql(same).into_iter().partition(|r| r["label"] == "csv");
    assert_eq!(csv.len(), 12);
    for (c, p) in csv.iter().zip(&printed) {
        assert_eq!(
            (&c["variant"], &c["key"], &c["v"]),
            (&p["variant"], &p["key"], &p["v"])
        );
    }
}

#[test]
fn a_forced_format_that_reads_no_value_is_refused() {
    let wh = Wh::new();
    let path = sample("realworld/pytest-benchmark/gab_pytest_output.json");
    let out = wh.run(&[
        "ingest",
        path.to_str().unwrap(),
        "--label",
        "x",
        "--format",
        "google-benchmark",
    ]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(
        stderr(&out).contains("gab_pytest_output.json:")
            && stderr(&out).contains("this is not google-benchmark output"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("0 run(s) added"), "{}", stdout(&out));
}

/// The value a stored measurement's printed text holds, read here and not by perfdb: its
/// number (an SI suffix such as nvbench's `63.361G` applied), times the factor from the
/// unit printed after it to the unit perfdb stores, from this table. `None` when the
/// printed unit is not one the table knows for that stored unit.
fn printed_value(raw: &str, stored_unit: &str) -> Option<f64> {
    let words: Vec<&str> = raw.split_whitespace().collect();
    let number = words.first()?.trim_matches(['*', '`']);
    // The unit printed after the number (`8.2 μs ± 1.66%`), else the one perfdb joined
    // to the end of what the source printed (`0.825600 (±0.36%) ms`).
    let known = |u: &str| {
        let lower = u.to_ascii_lowercase();
        let units = [
            "ns", "us", "µs", "μs", "ms", "s", "sec", "b/s", "mb/s", "gb/s", "tb/s", "gflops",
            "tflops",
        ];
        units.contains(&lower.as_str()) || u == stored_unit
    };
    let second = words.get(1).copied();
    let last = words.last().copied().filter(|_| words.len() > 1);
    let printed_unit = second
        .filter(|u| known(u))
        .or(last.filter(|u| known(u)))
        .or(second);
    let (digits, si) = match number.as_bytes().last()? {
        b'k' | b'K' => (&number[..number.len() - 1], 1e3),
        b'M' => (&number[..number.len() - 1], 1e6),
        b'G' => (&number[..number.len() - 1], 1e9),
        b'T' => (&number[..number.len() - 1], 1e12),
        _ => (number, 1.0),
    };
    // Thousands groups (`72,340`) are one number.
    let v: f64 = digits.replace(',', "").parse().ok()?;
    let factor = match (stored_unit, printed_unit) {
        (_, None) => 1.0,
        ("us", Some(u)) => match u {
            "ns" => 1e-3,
            "us" | "µs" | "μs" => 1.0,
            "ms" => 1e3,
            "s" | "sec" => 1e6,
            _ => return None,
        },
        ("TB/s", Some(u)) => match u.to_ascii_lowercase().as_str() {
            "b/s" => 1e-12,
            "mb/s" => 1e-6,
            "gb/s" => 1e-3,
            "tb/s" => 1.0,
            _ => return None,
        },
        ("TFLOPS", Some(u)) => match u.to_ascii_lowercase().as_str() {
            "gflops" => 1e-3,
            "tflops" => 1.0,
            _ => return None,
        },
        (s, Some(u)) if s == u => 1.0,
        _ => return None,
    };
    Some(v * si * factor)
}

/// Every compared value perfdb stored from a real file is in that file: its printed
/// number on its line (anywhere in a JSON document), and the stored value that number in
/// the stored unit by the table above. A reader that took an axis for a latency, a
/// ratio for a time or invented a value fails here, whatever its own tests say.
#[test]
fn every_stored_measured_value_is_printed_in_its_file() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for (rel, expect) in FILES {
        let unit = match expect {
            Reads(_) => None,
            ReadsWithUnit(_, u) => Some(*u),
            _ => continue,
        };
        let path = sample(&format!("realworld/{rel}"));
        let text = std::fs::read_to_string(&path).unwrap();
        let json = rel.ends_with(".json") || rel.ends_with(".jsonl");
        let wh = Wh::new();
        wh.ok(&ingest_args(path.to_str().unwrap(), "x", unit));
        let stored = wh.sql(
            "SELECT line, raw, unit, value FROM measurements \
             WHERE direction <> 'none' AND value IS NOT NULL ORDER BY line",
        );
        for r in &stored {
            let line = r["line"].as_i64().unwrap() as usize;
            let raw = r["raw"].as_str().unwrap_or("");
            let unit = r["unit"].as_str().unwrap_or("");
            let value = r["value"].as_f64().unwrap();
            let token = raw.split_whitespace().next().unwrap_or("");
            let scope = if json || line == 0 {
                text.as_str()
            } else {
                text.lines().nth(line - 1).unwrap_or("")
            };
            if token.is_empty() || !scope.contains(token) {
                failures.push(format!("{rel}:{line}: '{raw}' is not printed there"));
                continue;
            }
            match printed_value(raw, unit) {
                Some(v) if (v - value).abs() <= 1e-9 * v.abs().max(value.abs()).max(1e-300) => {}
                Some(v) => failures.push(format!(
                    "{rel}:{line}: '{raw}' is {v} {unit}, stored {value} {unit}"
                )),
                None => failures.push(format!(
                    "{rel}:{line}: '{raw}' in {unit}: unit unknown here"
                )),
            }
            checked += 1;
        }
    }
    assert!(checked > 1000, "only {checked} values checked");
    assert!(
        failures.is_empty(),
        "{} value(s) not as printed:\n{}",
        failures.len(),
        failures[..failures.len().min(40)].join("\n")
    );
}

#[test]
fn a_triton_csv_line_named_with_parentheses_keeps_its_name_and_its_given_unit() {
    let wh = read(
        "triton-csv/devvidhani_softmax-performance_native_jit_first_rows.csv",
        &["--unit", "GB/s"],
    );
    let got = rows(
        &wh,
        "SELECT DISTINCT variant || ' ' || unit || ' ' || \"key\" FROM measurements ORDER BY 1",
    );
    assert!(
        got.iter()
            .any(|r| r.starts_with("Torch (native) TB/s") && r.contains("\"N\":\"256\"")),
        "{got:?}"
    );
    assert!(
        got.iter().any(|r| r.starts_with("Torch (jit) TB/s")),
        "{got:?}"
    );
    assert!(
        got.iter().all(|r| !r.contains("Triton\"")),
        "the Triton values went into the key: {got:?}"
    );
}

#[test]
fn nvbench_throttle_warnings_reach_a_power_of_two_axis_row() {
    let wh = read(
        "nvbench-markdown/cub_reduce_sum_rtx4060_throttled_first_runs.md",
        &[],
    );
    let got = rows(
        &wh,
        "SELECT DISTINCT \"key\" || ' ' || raw FROM measurements WHERE metric = 'throttled'",
    );
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].contains("1048576") && got[0].contains("I32") && got[0].contains("1617.52 MHz"),
        "{got:?}"
    );
}

#[test]
fn an_aiter_moe_perf_line_keeps_its_failed_check() {
    let wh = read(
        "perf-lines/vllm_pr16418_aiter_tkw1_moe_failed_check.txt",
        &[],
    );
    let got = rows(
        &wh,
        "SELECT variant || ' ' || CAST(value AS VARCHAR) || ' ' || numerics FROM measurements WHERE metric = 'latency' ORDER BY 1",
    );
    assert_eq!(
        got,
        ["asm 148.84 fail", "torch 22552.61 not_checked"],
        "{got:?}"
    );
}

#[test]
fn a_triton_plot_named_with_equals_is_a_title_and_no_table_is_dropped() {
    let wh = read(
        "triton-perf-report/fbexp_triton_pr205_fused_attention_title_with_equals.txt",
        &["--unit", "TFLOPS"],
    );
    let got = rows(
        &wh,
        "SELECT table_name || ' ' || CAST(count(*) AS VARCHAR) FROM measurements GROUP BY table_name ORDER BY 1",
    );
    assert_eq!(
        got,
        [
            "fused-attention-batch4-head32-d128-fwd-causal=False-warp_specialize=False 5",
            "fused-attention-ws-batch4-head32-d128 5"
        ],
        "{got:?}"
    );
}
