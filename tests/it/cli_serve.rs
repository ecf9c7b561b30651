//! `perfdb serve` and `perfdb export-site` from the command line.

use crate::common::*;

#[test]
fn serve_warns_when_it_listens_beyond_loopback() {
    let wh = Wh::new();
    let mut child = wh
        .cmd()
        .args(["serve", "--bind", "0.0.0.0:0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = child.stderr.take().unwrap();
    let mut text = String::new();
    let mut buf = [0u8; 4096];
    while !text.contains("warning") || !text.contains('\n') {
        let n = std::io::Read::read(&mut err, &mut buf).unwrap();
        if n == 0 {
            break;
        }
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
        if text.matches('\n').count() >= 2 {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        text.contains("warning: listening on 0.0.0.0:") && text.contains("beyond this machine"),
        "{text}"
    );
}

#[test]
fn export_site_writes_pages_and_never_over_a_folder_of_other_files() {
    let wh = Wh::new();
    wh.ingest(&sample("h200-gemm/ab/aiter/base"), "base");
    wh.ingest(&sample("h200-gemm/ab/aiter/head"), "head");
    let site = wh.dir.path().join("site");
    let out = wh.ok(&["export-site", site.to_str().unwrap()]);
    assert!(out.starts_with("exported "), "{out}");
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(index.contains("href=\"contents.html\""), "{index}");
    assert!(!index.contains("href=\"/"), "absolute links left: {index}");
    // Again into its own export: the pages are replaced.
    wh.ok(&["export-site", site.to_str().unwrap()]);
    // Never into a folder of other files.
    let other = wh.dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    let out = wh.run(&["export-site", other.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not empty and not a perfdb export"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_dir(&other).unwrap().count(), 1);
}
