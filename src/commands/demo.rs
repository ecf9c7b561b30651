//! `perfdb demo`: the sample the binary carries (real H200 logs) ingested under `base`
//! and `head`, and compared with the control, on the embedded default warehouse.

use crate::Exit;
use perfdb_ingest::model::RunMeta;
use perfdb_ingest::warehouse::Warehouse;
use perfdb_reports::compare::{compare, Options};
use perfdb_reports::db::Db;
use perfdb_reports::render::{Exporter, Terminal};
use std::path::{Path, PathBuf};

/// The sample the binary carries: the real H200 logs of `sample-data/h200-gemm/ab/aiter`
/// (sample-data/README.md), five trials an arm, so `perfdb demo` runs wherever the binary
/// is (a wheel, `cargo install`), not only in a source checkout.
const SAMPLE: [(&str, [&str; 5]); 2] = [
    (
        "base",
        [
            include_str!("../../sample-data/h200-gemm/ab/aiter/base/trial1.log"),
            include_str!("../../sample-data/h200-gemm/ab/aiter/base/trial2.log"),
            include_str!("../../sample-data/h200-gemm/ab/aiter/base/trial3.log"),
            include_str!("../../sample-data/h200-gemm/ab/aiter/base/trial4.log"),
            include_str!("../../sample-data/h200-gemm/ab/aiter/base/trial5.log"),
        ],
    ),
    (
        "head",
        [
            include_str!("../../sample-data/h200-gemm/ab/aiter/head/trial1.log"),
            include_str!("../../sample-data/h200-gemm/ab/aiter/head/trial2.log"),
            include_str!("../../sample-data/h200-gemm/ab/aiter/head/trial3.log"),
            include_str!("../../sample-data/h200-gemm/ab/aiter/head/trial4.log"),
            include_str!("../../sample-data/h200-gemm/ab/aiter/head/trial5.log"),
        ],
    ),
];

/// The sample's logs written out (each run keeps the file it was read from): the same
/// files each time, in the user's own cache folder (`$XDG_CACHE_HOME/perfdb`, else
/// `~/.cache/perfdb`), never in a folder other users share; with no home, in a new
/// private folder under the temporary one.
fn sample_dir() -> anyhow::Result<PathBuf> {
    let (root, dir) = match perfdb_ingest::warehouse::location::user_cache_home() {
        Some(h) => (h.clone(), h.join("demo-sample")),
        None => {
            let d = crate::private::fresh_dir("perfdb-demo-sample")?;
            (d.clone(), d)
        }
    };
    for (label, trials) in SAMPLE {
        let arm = dir.join(label);
        // The cache folder, the sample's and the arm's: each this user's alone, and no
        // link on the way to a folder others write in.
        crate::private::own_tree(&root, &arm)?;
        for (i, text) in trials.iter().enumerate() {
            let f = arm.join(format!("trial{}.log", i + 1));
            let same = std::fs::symlink_metadata(&f).is_ok_and(|m| m.is_file())
                && std::fs::read_to_string(&f).ok().as_deref() == Some(*text);
            if !same {
                crate::private::write_replacing(&f, text.as_bytes())?;
            }
        }
    }
    Ok(dir)
}

pub fn run(root: &Path) -> anyhow::Result<Exit> {
    let wh = Warehouse::new(root);
    let dir = sample_dir()?;
    // The demo reads its sample against the built-in table: the sample's H200 is there.
    let devices = perfdb_ingest::devices::builtin();
    for label in ["base", "head"] {
        let files = perfdb_ingest::expand_inputs(&[dir.join(label)])?;
        // The sample's trials ran on an H200: their TFLOPS and TB/s are held against it.
        let meta = RunMeta {
            label: label.to_string(),
            tags: vec![("device".to_string(), "h200".to_string())],
            ..Default::default()
        };
        let reports = perfdb_ingest::ingest_files(&wh, &files, None, &meta, &devices, &|_| {})?;
        let added = reports
            .iter()
            .filter(|r| matches!(&r.result, Ok(i) if i.trial.is_some()))
            .count();
        if let Some(bad) = reports.iter().find_map(|r| r.result.as_ref().err()) {
            anyhow::bail!("sample data failed to ingest: {bad}");
        }
        say!(
            "demo: {label}: {} H200 trial log(s) (sample-data/h200-gemm/ab, written to {}), {added} new run(s) in {}",
            files.len(),
            dir.join(label).display(),
            root.display()
        );
    }
    say!("demo: perfdb compare base head --control torch\n");
    let opt = Options {
        control: vec!["torch".into()],
        ..Options::default()
    };
    let db = Db::open(root, &devices)?;
    let report = compare(&db, "base", "head", &opt)?;
    super::print_out(
        &Terminal {
            color: super::use_color(),
        }
        .render(&report),
    )?;
    Ok(Exit::of(&report))
}
