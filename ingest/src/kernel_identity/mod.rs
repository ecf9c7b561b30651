//! A compiled Triton kernel's identity, read from the cache one pass of a benchmark
//! leaves (`TRITON_CACHE_DIR`): the kernel's code as Triton lowered it, not the text it
//! was written in.
//!
//! Measured on an H100 (sample-data/h100-kernel-identity/PROVENANCE.md): the TTGIR with
//! its source locations taken out (`loc(...)` and the `#locN = ...` lines) is the same
//! when a comment is added inside a kernel, when lines move, when a constant outside the
//! kernels or another file changes, and whatever folder it was compiled in; it changes
//! for exactly the kernels whose code changed (a constexpr default, a helper they call).
//! It holds the launch shape the compiler chose (`ttg.num-warps`, `warpsPerCTA`) and the
//! constexprs folded into the code, so an autotune winner with other warps or blocks is
//! another identity. The raw files, the cubin and even the PTX without its `.loc` lines
//! carry the source's path and line numbers, and Triton's own cache key covers the source
//! text: none of them is an identity of the code.
//!
//! What this cannot see: a kernel whose path depends on the data (the same code, other
//! work), and kernels that are not Triton's (a library's: their version is their
//! identity, which the toolchain tags carry).

pub mod autotune;
pub mod launches;
pub mod rows;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One compiled kernel: its name, the hash of its code, and how it is launched.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Kernel {
    pub name: String,
    /// SHA-256 of the TTGIR without source locations (16 hex digits).
    pub code: String,
    pub num_warps: Option<u64>,
    pub num_stages: Option<u64>,
    pub num_ctas: Option<u64>,
    /// Shared memory the kernel takes, in bytes.
    pub shared: Option<u64>,
    /// The target it was compiled for (`cuda:90`, `hip:gfx942`).
    pub target: Option<String>,
}

/// Why a cache could not be read.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a Triton kernel's metadata: {why}")]
    Metadata { path: PathBuf, why: String },
    #[error("{0}: no compiled Triton kernel (no .ttgir beside a metadata .json)")]
    Empty(PathBuf),
}

/// The TTGIR `text` without its source locations: every `loc(...)` (nested parentheses
/// and quoted strings kept together) and every `#locN = ...` line, trailing spaces
/// trimmed.
pub fn without_locations(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if line.starts_with("#loc") {
            continue;
        }
        let mut rest = line;
        let mut kept = String::with_capacity(line.len());
        while let Some((cut, open)) = find_loc(rest) {
            kept.push_str(&rest[..cut]);
            rest = &rest[open + closed(&rest[open..])..];
        }
        kept.push_str(rest);
        out.push_str(kept.trim_end());
        out.push('\n');
    }
    out
}

/// Where the next `loc(` of `s` (a word: not `alloc(`) is cut from (the space before it
/// goes with it), and where its `(` is.
fn find_loc(s: &str) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    let mut from = 0;
    while let Some(i) = s[from..].find("loc(") {
        let at = from + i;
        if at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
            let cut = if at > 0 && b[at - 1] == b' ' {
                at - 1
            } else {
                at
            };
            return Some((cut, at + 3));
        }
        from = at + 4;
    }
    None
}

/// The length of `s` (which starts with `(`) through the parenthesis closing it; the
/// parentheses of a quoted string do not count. All of `s` when it is not closed.
fn closed(s: &str) -> usize {
    let (mut depth, mut quoted, mut escaped) = (0usize, false, false);
    for (i, c) in s.bytes().enumerate() {
        match c {
            _ if escaped => escaped = false,
            b'\\' if quoted => escaped = true,
            b'"' => quoted = !quoted,
            b'(' if !quoted => depth += 1,
            b')' if !quoted => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    s.len()
}

/// Every kernel compiled into the Triton cache at `dir` (its folders of one compile
/// each: `<name>.json` beside `<name>.ttgir`), by name then code.
pub fn read_cache(dir: &Path) -> Result<Vec<Kernel>, IdentityError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| IdentityError::Io { path, source }
    };
    let mut out = Vec::new();
    let mut folders: Vec<PathBuf> = Vec::new();
    for e in std::fs::read_dir(dir).map_err(io(dir))? {
        let p = e.map_err(io(dir))?.path();
        if p.is_dir() {
            folders.push(p);
        }
    }
    // A flat folder of kept files (`<name>.ttgir`, `<name>.json`) reads as one compile.
    if folders.is_empty() {
        folders.push(dir.to_path_buf());
    }
    for folder in folders {
        for e in std::fs::read_dir(&folder).map_err(io(&folder))? {
            let p = e.map_err(io(&folder))?.path();
            let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let Some(stem) = name.strip_suffix(".ttgir") else {
                continue;
            };
            let meta_path = folder.join(format!("{stem}.json"));
            let text = std::fs::read_to_string(&p).map_err(io(&p))?;
            let meta = std::fs::read_to_string(&meta_path).map_err(io(&meta_path))?;
            out.push(kernel(stem, &text, &meta, &meta_path)?);
        }
    }
    if out.is_empty() {
        return Err(IdentityError::Empty(dir.to_path_buf()));
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// One kernel from its TTGIR and its metadata.
pub(crate) fn kernel(
    stem: &str,
    ttgir: &str,
    meta: &str,
    path: &Path,
) -> Result<Kernel, IdentityError> {
    let bad = |why: String| IdentityError::Metadata {
        path: path.to_path_buf(),
        why,
    };
    let v: serde_json::Value = serde_json::from_str(meta).map_err(|e| bad(e.to_string()))?;
    let name = v["name"].as_str().unwrap_or(stem).to_string();
    let num = |k: &str| v[k].as_u64();
    let target = match &v["target"] {
        serde_json::Value::Object(t) => Some(format!(
            "{}:{}",
            t.get("backend").and_then(|b| b.as_str()).unwrap_or("?"),
            t.get("arch").map_or_else(
                || "?".to_string(),
                |a| a.as_str().map_or_else(|| a.to_string(), str::to_string)
            )
        )),
        _ => None,
    };
    Ok(Kernel {
        name,
        code: crate::hash::sha256_hex(without_locations(ttgir).as_bytes())[..16].to_string(),
        num_warps: num("num_warps"),
        num_stages: num("num_stages"),
        num_ctas: num("num_ctas"),
        shared: num("shared"),
        target,
    })
}

/// The kernels of two passes side by side, by name: those whose code or launch differ,
/// those only one pass compiled.
#[derive(Debug, Default, PartialEq)]
pub struct Changed {
    pub changed: Vec<String>,
    pub only_before: Vec<String>,
    pub only_after: Vec<String>,
}

/// What differs between the kernels of `before` and `after`.
pub fn changed(before: &[Kernel], after: &[Kernel]) -> Changed {
    let by_name = |ks: &[Kernel]| -> BTreeMap<String, Vec<Kernel>> {
        let mut m: BTreeMap<String, Vec<Kernel>> = BTreeMap::new();
        for k in ks {
            m.entry(k.name.clone()).or_default().push(k.clone());
        }
        m
    };
    let (b, a) = (by_name(before), by_name(after));
    let mut out = Changed::default();
    for (name, ks) in &a {
        match b.get(name) {
            None => out.only_after.push(name.clone()),
            Some(old) if old != ks => out.changed.push(name.clone()),
            Some(_) => {}
        }
    }
    out.only_before = b.keys().filter(|n| !a.contains_key(*n)).cloned().collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_go_and_the_code_stays() {
        let text = "#loc = loc(\"/a/k.py\":3:0)\n\
            module attributes {\"ttg.num-warps\" = 4 : i32} {\n  \
            tt.func public @add(%arg0: !tt.ptr<f32> loc(\"x_ptr\"(#loc)), %n: i32 loc(\"n\"(#loc))) {\n    \
            %0 = tt.get_program_id x : i32 loc(#loc2)\n    \
            %1 = ttg.local_alloc : () -> !ttg.memdesc<4xf32> loc(callsite(#loc3 at #loc4))\n  \
            } loc(#loc)\n} loc(#loc)\n#loc2 = loc(\"/a/k.py\":4:24)\n";
        let got = without_locations(text);
        assert_eq!(
            got,
            "module attributes {\"ttg.num-warps\" = 4 : i32} {\n  \
             tt.func public @add(%arg0: !tt.ptr<f32>, %n: i32) {\n    \
             %0 = tt.get_program_id x : i32\n    \
             %1 = ttg.local_alloc : () -> !ttg.memdesc<4xf32>\n  \
             }\n}\n"
        );
        // A path in a string with parentheses does not end the location early.
        assert_eq!(without_locations("x loc(\"/a (b)/k.py\":1:2) y"), "x y\n");
    }
}
