//! What Nsight Compute and proton write on a real H100 (`sample-data/h100-counters/`,
//! PROVENANCE.md there), read right: every details page (`--set full` included), raw page
//! (device attributes as columns), imported report and `--nvtx` capture, each against a
//! parse of the test's own (a quote-aware CSV split); and a property: any one counter
//! cell replaced by `no data`, `n/a` or a word never refuses the file, and every other
//! counter reads the same; a garbled number there is kept the same way, with a warning.

use perfdb_ingest::formats::{self, counters, Format};
use perfdb_ingest::model::{Direction, Measurement, Parsed};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../sample-data/h100-counters")
}

/// Every ncu CSV captured.
fn ncu_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for sub in ["sections", "full"] {
        for e in std::fs::read_dir(dir().join(sub)).unwrap().flatten() {
            let p = e.path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("ncu-") && name.ends_with(".csv") {
                out.push(p);
            }
        }
    }
    out.sort();
    assert!(out.len() >= 14, "{out:?}");
    out
}

/// A CSV line's cells, `""` an escaped quote: the test's own reading.
fn split(line: &str) -> Vec<String> {
    let (mut cells, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => cells.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    cells.push(cur);
    cells
}

/// What a cell should be stored as: a number (in the canonical unit of the printed one),
/// null with the counter kept, or a setting (a word: null, its note says so).
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Number(f64),
    Null,
    Word,
}

fn expected(cell: &str, unit: &str) -> Cell {
    let c = cell.trim();
    if c.is_empty() || c == "no data" || c == "n/a" {
        return Cell::Null;
    }
    let factor: f64 = match unit {
        "Ghz" => 1e9,
        "Mhz" => 1e6,
        "us" | "usecond" => 1e3,
        "Kbyte" => 1e3,
        "Mbyte" => 1e6,
        "Gbyte" => 1e9,
        _ => 1.0,
    };
    match c.replace(',', "").parse::<f64>() {
        Ok(v) if factor == 1.0 => Cell::Number(v),
        Ok(v) => Cell::Number(format!("{v}e{}", factor.log10() as i32).parse().unwrap()),
        Err(_) => Cell::Word,
    }
}

fn stored(m: &Measurement) -> Cell {
    match m.value {
        Some(v) => Cell::Number(v),
        None if m.note.as_deref() == Some("counter: setting") => Cell::Word,
        None => Cell::Null,
    }
}

/// (kernel, place, counter) -> the cells in file order.
type Table = BTreeMap<(String, String, String), Vec<Cell>>;

/// The file's own counters as the test reads it: details pages by Section/Metric, raw
/// pages a column a counter (units on the line under the header), the launch's columns
/// and the device's attributes left out.
fn own_parse(text: &str) -> Table {
    let mut out = Table::new();
    let mut header: Vec<String> = Vec::new();
    let mut units: Option<Vec<String>> = None;
    for line in text.lines() {
        if !line.starts_with('"') {
            continue;
        }
        let cells = split(line);
        if cells[0] == "ID" {
            header = cells;
            units = None;
            continue;
        }
        let col = |n: &str| header.iter().position(|h| h == n);
        let details = col("Metric Name").is_some();
        if !details && units.is_none() && cells[0].is_empty() {
            units = Some(cells);
            continue;
        }
        let kernel = cells[col("Kernel Name").unwrap()].clone();
        let nvtx: Vec<String> = header
            .iter()
            .zip(&cells)
            .filter(|(h, _)| h.contains("Domain:"))
            .flat_map(|(_, c)| {
                c.split('"')
                    .skip(1)
                    .step_by(2)
                    .filter_map(|q| q.split(':').nth(1).map(String::from))
                    .filter(|n| n != "none" && !n.is_empty())
                    .collect::<Vec<_>>()
            })
            .collect();
        let place = |p: &str| {
            if nvtx.is_empty() {
                p.to_string()
            } else {
                format!("{p}|{}", nvtx.join("/"))
            }
        };
        if details {
            let name = &cells[col("Metric Name").unwrap()];
            if name.is_empty() {
                continue;
            }
            let unit = &cells[col("Metric Unit").unwrap()];
            out.entry((
                kernel,
                place(&cells[col("Section Name").unwrap()]),
                name.clone(),
            ))
            .or_default()
            .push(expected(&cells[col("Metric Value").unwrap()], unit));
        } else {
            let units = units.as_ref().unwrap();
            for (i, name) in header.iter().enumerate() {
                let unit = &units[i];
                let launch = !name.contains("__") && unit.is_empty();
                if launch || name.contains("Domain:") || name.starts_with("device__attribute_") {
                    continue;
                }
                out.entry((kernel.clone(), place(""), name.clone()))
                    .or_default()
                    .push(expected(&cells[i], unit));
            }
        }
    }
    out
}

/// The reader's counters in the same shape (the launch section's grid and block aside).
fn reader_table(p: &Parsed) -> Table {
    let mut out = Table::new();
    for m in p.measurements.iter().filter(|m| counters::is_counter(m)) {
        let pairs = p.key_pairs(m);
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        if get("section") == "launch" {
            continue;
        }
        let place = match get("nvtx") {
            n if n.is_empty() => get("section"),
            n => format!("{}|{n}", get("section")),
        };
        out.entry((m.variant.to_string(), place, m.metric.to_string()))
            .or_default()
            .push(stored(m));
    }
    out
}

#[test]
fn every_real_ncu_page_reads_every_counter_as_the_file_prints_it() {
    for f in ncu_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let (format, p) =
            formats::parse(&text, None).unwrap_or_else(|e| panic!("{name}: refused: {e}"));
        let want = own_parse(&text);
        assert!(!want.is_empty(), "{name}: the test read no counter");
        let got = reader_table(&p);
        assert_eq!(
            got.len(),
            want.len(),
            "{name}: counters stored vs printed differ"
        );
        for (k, cells) in &want {
            assert_eq!(got.get(k), Some(cells), "{name}: {k:?}");
        }
        // Every counter undirected; the device's attributes are not stored.
        assert!(p
            .measurements
            .iter()
            .filter(|m| counters::is_counter(m))
            .all(|m| m.direction == Direction::None));
        assert!(!p
            .measurements
            .iter()
            .any(|m| m.metric.starts_with("device__attribute_")));
        // A profiled benchmark's own rows are marked profiled: never a timed trial.
        if format != Format::NcuCsv {
            let own: Vec<&Measurement> = p
                .measurements
                .iter()
                .filter(|m| !counters::is_counter(m))
                .collect();
            assert!(!own.is_empty(), "{name}: {format}");
            assert!(
                own.iter().all(|m| m.direction == Direction::None
                    && counters::is_profiled_note(m.note.as_deref())),
                "{name}"
            );
        }
        assert!(
            p.provenance
                .tags
                .iter()
                .any(|(k, v)| k == "profiled" && v == "ncu"),
            "{name}: {:?}",
            p.provenance.tags
        );
    }
}

#[test]
fn the_real_pages_hold_what_the_issue_found_refused_and_read_it() {
    let read = |rel: &str| {
        let text = std::fs::read_to_string(dir().join(rel)).unwrap();
        formats::parse(&text, None).unwrap().1
    };
    let find = |p: &Parsed, metric: &str| -> Measurement {
        p.measurements
            .iter()
            .find(|m| &*m.metric == metric && &*m.variant == "add_kernel")
            .copied()
            .unwrap_or_else(|| panic!("{metric}"))
    };
    // `no data`: null, the counter kept with its unit.
    let d = read("sections/ncu-details-pad0.csv");
    let spill = find(&d, "Local Memory Spilling Request Overhead");
    assert_eq!((spill.value, &*spill.unit), (None, "%"));
    let dram = find(&d, "DRAM Frequency");
    assert_eq!(dram.value, Some(2_615_906_680.81));
    // The raw page: the device's attributes left out, the kernel's counters read.
    let r = read("sections/ncu-raw-pad0.csv");
    assert!(!r
        .measurements
        .iter()
        .any(|m| m.metric.contains("confidential_computing")));
    let bytes = find(&r, "dram__bytes_read.sum");
    assert!(bytes.value.is_some_and(|v| v > 1e7), "{bytes:?}");
    let policy = find(&r, "launch__cluster_scheduling_policy");
    assert_eq!(policy.value, None);
    assert_eq!(policy.note.as_deref(), Some("counter: setting"));
}

/// NVTX ranges (`ncu --nvtx`) are the key's `nvtx`: the harness's mark of what each
/// kernel ran for.
#[test]
fn nvtx_ranges_mark_each_kernel_with_the_variant_it_ran_for() {
    let text = std::fs::read_to_string(dir().join("full/ncu-nvtx-gemm.csv")).unwrap();
    let (_, p) = formats::parse(&text, None).unwrap();
    let nvtx_of = |kernel: &str| -> Vec<String> {
        let mut v: Vec<String> = p
            .measurements
            .iter()
            .filter(|m| m.variant.contains(kernel))
            .flat_map(|m| p.key_pairs(m))
            .filter(|(k, _)| k == "nvtx")
            .map(|(_, v)| v)
            .collect();
        v.sort();
        v.dedup();
        v
    };
    assert_eq!(nvtx_of("matmul_kernel"), ["triton"]);
    assert_eq!(nvtx_of("nvjet"), ["torch"]);
    assert!(nvtx_of("distribution_elementwise").is_empty());
}

/// Each counter cell of each real page, one at a time (a sample of them), replaced by a
/// missing token or a word: the file still reads, that counter is null (a word: a
/// setting), every other counter is as before.
#[test]
fn any_one_counter_cell_replaced_by_no_data_or_a_word_never_refuses_the_file() {
    let mut tried = 0;
    for f in ncu_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let before = reader_table(&formats::parse(&text, None).unwrap().1);
        let lines: Vec<&str> = text.lines().collect();
        // Records (no header, no units line), every 7th, a cell of theirs each.
        let records: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].starts_with("\"") && !lines[i].starts_with("\"ID\""))
            .filter(|&i| !lines[i].starts_with("\"\""))
            .collect();
        for (n, &i) in records.iter().enumerate().step_by(7) {
            let cells = split(lines[i]);
            // The last cell that holds a number: a details page's value, a raw column.
            let Some(at) = (0..cells.len()).rev().find(|&c| {
                !cells[c].is_empty() && cells[c].replace(',', "").parse::<f64>().is_ok()
            }) else {
                continue;
            };
            let token = ["no data", "n/a", "slow", "PolicySpread", "1O.5"][n % 5];
            let mut changed = cells.clone();
            changed[at] = token.to_string();
            let line: Vec<String> = changed
                .iter()
                .map(|c| format!("\"{}\"", c.replace('"', "\"\"")))
                .collect();
            let mut all: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            all[i] = line.join(",");
            let bad = all.join("\n");
            let (_, p) = formats::parse(&bad, None)
                .unwrap_or_else(|e| panic!("{name} line {}: `{token}` refused: {e}", i + 1));
            let after = reader_table(&p);
            let differ: Vec<_> = before
                .iter()
                .filter(|(k, v)| after.get(*k) != Some(*v))
                .map(|(k, _)| k.clone())
                .collect();
            // Only the changed counter differs (a launch's ID or grid cell changes none).
            assert!(differ.len() <= 1, "{name} line {}: {differ:?}", i + 1);
            for k in &differ {
                let now = &after[k];
                assert!(
                    now.iter().any(|c| !matches!(c, Cell::Number(_))),
                    "{name} line {}: {k:?} {now:?}",
                    i + 1
                );
            }
            tried += 1;
        }
    }
    assert!(tried > 100, "{tried}");
}

/// Proton's older schema (`Count`, `Time (ns)`, `DeviceId`, `DeviceType`), a kernel under
/// two scopes: read like the current one, each copy at its own line.
#[test]
fn older_proton_reads_and_a_kernel_under_two_scopes_keeps_each_line() {
    let node = |name: &str, count: u32, ns: u32| {
        format!(
            "{{\n  \"children\": [],\n  \"frame\": {{\"name\": \"{name}\", \"type\": \"function\"}},\n  \"metrics\": {{\"Count\": {count}, \"DeviceId\": \"0\", \"DeviceType\": \"CUDA\", \"Time (ns)\": {ns}}}\n}}"
        )
    };
    let scope = |name: &str, child: String| {
        format!(
            "{{\n  \"children\": [\n{child}\n  ],\n  \"frame\": {{\"name\": \"{name}\", \"type\": \"function\"}},\n  \"metrics\": {{}}\n}}"
        )
    };
    let text = format!(
        "[{{\n \"children\": [\n{},\n{}\n ],\n \"frame\": {{\"name\": \"ROOT\", \"type\": \"function\"}},\n \"metrics\": {{\"Count\": 0, \"Time (ns)\": 0}}\n}},\n{{\"CUDA\": {{\"0\": {{\"arch\": \"90\"}}}}}}]\n",
        scope("forward", node("add_kernel", 2, 1000)),
        scope("backward", node("add_kernel", 3, 2400))
    );
    let (format, p) = formats::parse(&text, None).unwrap();
    assert_eq!(format, Format::ProtonHatchet);
    let times: Vec<(String, Option<f64>, u32)> = p
        .measurements
        .iter()
        .filter(|m| &*m.metric == "time")
        .map(|m| {
            let scope = p.key_pairs(m)[0].1.clone();
            (scope, m.value, m.line)
        })
        .collect();
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("\"add_kernel\""))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(
        times,
        [
            ("forward".to_string(), Some(1000.0), lines[0] as u32),
            ("backward".to_string(), Some(2400.0), lines[1] as u32)
        ]
    );
    assert!(!p.measurements.iter().any(|m| m.metric.contains("Device")));
    assert!(p
        .measurements
        .iter()
        .any(|m| &*m.metric == "count" && m.value == Some(3.0)));
}

/// A value too large for its canonical unit is missing and said, never infinity.
#[test]
fn a_counter_beyond_a_double_in_its_unit_is_null_and_said() {
    let text = "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
\"0\",\"7\",\"python3\",\"h\",\"add_kernel\",\"1\",\"7\",\"(128, 1, 1)\",\"(4, 1, 1)\",\"0\",\"9.0\",\"Memory Workload Analysis\",\"DRAM Bytes\",\"Pbyte\",\"1e300\"\n\
\"0\",\"7\",\"python3\",\"h\",\"add_kernel\",\"1\",\"7\",\"(128, 1, 1)\",\"(4, 1, 1)\",\"0\",\"9.0\",\"Memory Workload Analysis\",\"L2 Bytes\",\"Mbyte\",\"12.5\"\n";
    let (_, p) = formats::parse(text, None).unwrap();
    let get = |n: &str| p.measurements.iter().find(|m| &*m.metric == n).unwrap();
    assert_eq!(
        (get("DRAM Bytes").value, &*get("DRAM Bytes").unit),
        (None, "byte")
    );
    assert_eq!(get("L2 Bytes").value, Some(12_500_000.0));
    assert!(
        p.warnings.iter().any(|w| w.line == 2
            && w.reason
                .contains("`1e300 Pbyte`, beyond what a number holds")),
        "{:?}",
        p.warnings
    );
}
