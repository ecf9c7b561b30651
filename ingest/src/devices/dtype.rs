//! The data type a row computes in, from its identity cells: a field named for a type
//! (`dtype`, `in_dtype`, `precision`, ...) or a cell that is plainly one
//! (`torch.bfloat16`, `e4m3`). An output type (`out_dtype`) says nothing of the compute;
//! two cells that disagree leave it unknown. Never guessed from a table's name.

/// The data types the device table has peaks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dtype {
    Fp64,
    Fp32,
    Tf32,
    Bf16,
    Fp16,
    Fp8,
    Fp4,
}

impl Dtype {
    pub const ALL: [Dtype; 7] = [
        Dtype::Fp64,
        Dtype::Fp32,
        Dtype::Tf32,
        Dtype::Bf16,
        Dtype::Fp16,
        Dtype::Fp8,
        Dtype::Fp4,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Fp64 => "fp64",
            Dtype::Fp32 => "fp32",
            Dtype::Tf32 => "tf32",
            Dtype::Bf16 => "bf16",
            Dtype::Fp16 => "fp16",
            Dtype::Fp8 => "fp8",
            Dtype::Fp4 => "fp4",
        }
    }
    pub fn from_name(s: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == s)
    }
}

/// The data type a cell's text names, if it is one.
pub fn parse(cell: &str) -> Option<Dtype> {
    let s = cell.trim().to_ascii_lowercase();
    let s = ["torch.", "np.", "numpy.", "jnp.", "tl.", "dtypes."]
        .iter()
        .find_map(|p| s.strip_prefix(p))
        .unwrap_or(&s);
    // rocBLAS and hipBLASLt name real types `f16_r`, `bf16_r`, `f8_r`.
    let s = s.strip_suffix("_r").unwrap_or(s).to_string();
    let d = match s.as_str() {
        "float64" | "fp64" | "f64" | "double" => Dtype::Fp64,
        "float32" | "fp32" | "f32" | "float" => Dtype::Fp32,
        "tf32" | "tensorfloat32" | "xf32" => Dtype::Tf32,
        "bfloat16" | "bf16" => Dtype::Bf16,
        "float16" | "fp16" | "f16" | "half" => Dtype::Fp16,
        "fp4" | "nvfp4" | "mxfp4" | "e2m1" | "float4_e2m1fn_x2" | "fp4x2" => Dtype::Fp4,
        _ if ["float8", "fp8", "f8", "e4m3", "e5m2", "mxfp8"]
            .iter()
            .any(|p| s.starts_with(p)) =>
        {
            Dtype::Fp8
        }
        _ => return None,
    };
    Some(d)
}

/// Is `name` a field that holds the data type the row's inputs are in? Not an output
/// (`out_dtype`; BLAS's C and D matrices, `c_type`, `d_type`), an accumulator
/// (`compute_type`, `acc_dtype`: cuBLAS and hipBLASLt accumulate bf16 in fp32), a bias
/// or a scale.
fn names_a_type(name: &str) -> bool {
    let n: String = name
        .to_ascii_lowercase()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    !not_input(name)
        && (n.ends_with("dtype")
            || n.ends_with("datatype")
            || n.ends_with("type")
            || n == "precision")
}

fn not_input(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    ["out", "acc", "compute", "bias", "scale", "c_", "d_"]
        .iter()
        .any(|p| lower.starts_with(p))
}

/// The row's data type: every typed field (or, without one, every cell that is plainly
/// a type) must agree.
pub fn of_key(key: &[(String, String)]) -> Option<Dtype> {
    let typed = key
        .iter()
        .filter(|(k, _)| names_a_type(k))
        .filter_map(|(_, v)| parse(v));
    if let Some(d) = agree(typed) {
        return d;
    }
    let plain = key
        .iter()
        .filter(|(k, _)| !not_input(k))
        .filter_map(|(_, v)| parse(v));
    agree(plain).flatten()
}

/// `None` when there is no type; `Some(None)` when the types disagree.
fn agree(mut it: impl Iterator<Item = Dtype>) -> Option<Option<Dtype>> {
    let first = it.next()?;
    Some(it.all(|d| d == first).then_some(first))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_spellings_runs_use() {
        for (cell, d) in [
            ("torch.bfloat16", Dtype::Bf16),
            ("bf16", Dtype::Bf16),
            ("torch.float8_e4m3fnuz", Dtype::Fp8),
            ("e4m3", Dtype::Fp8),
            ("fp8_e5m2", Dtype::Fp8),
            ("F32", Dtype::Fp32),
            ("half", Dtype::Fp16),
            ("tf32", Dtype::Tf32),
            ("float64", Dtype::Fp64),
            ("nvfp4", Dtype::Fp4),
        ] {
            assert_eq!(parse(cell), Some(d), "{cell}");
        }
        for cell in ["int8", "4096", "a16w16", "", "bf16x"] {
            assert_eq!(parse(cell), None, "{cell}");
        }
    }

    #[test]
    fn typed_fields_decide_and_must_agree() {
        assert_eq!(
            of_key(&key(&[("M", "512"), ("dtype", "torch.bfloat16")])),
            Some(Dtype::Bf16)
        );
        assert_eq!(
            of_key(&key(&[("in_dtype", "fp8"), ("out_dtype", "bf16")])),
            Some(Dtype::Fp8),
            "an output type says nothing of the compute"
        );
        assert_eq!(
            of_key(&key(&[("a_dtype", "fp8"), ("b_dtype", "bf16")])),
            None
        );
        assert_eq!(
            of_key(&key(&[("fmt", "e4m3"), ("N", "4096")])),
            Some(Dtype::Fp8)
        );
        assert_eq!(of_key(&key(&[("M", "512"), ("N", "4096")])), None);
        assert_eq!(of_key(&key(&[("dtype", "int8")])), None);
        // hipBLASLt: inputs f16, accumulated in f32, written as f16.
        let hipblaslt = key(&[
            ("a_type", "f16_r"),
            ("b_type", "f16_r"),
            ("c_type", "f16_r"),
            ("d_type", "bf16_r"),
            ("compute_type", "f32_r"),
            ("bias_type", "f32_r"),
        ]);
        assert_eq!(of_key(&hipblaslt), Some(Dtype::Fp16));
    }
}
