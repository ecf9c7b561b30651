//! `[perf]` lines, in every form aiter and FlyDSL print them (below).
//!
//! ```text
//! [aiter] [perf] dim: (4, 32, 8192)   dtype: torch.float16, torch avg: 10.33  us, B avg: 7.80 us, uplift: 32.4%[checkAllclose atol=0.01 rtol=0.01 passed~]
//! [perf] dim: (64, 4096), dtype: torch.bfloat16, torch avg: 8.10 us, ck avg: 5.20 us, uplift: 55.8%
//! [perf][qk_1way_perhead] === dtype:..., M:... === baseline avg: 12.30 us, hip avg: 9.80 us, uplift: 25.5%
//! ... torch_avg: 10.1 us, asm_avg: 8.2 us            (MoE tests)
//!   [perf] 12.34 us/call (oneshot)                    (FlyDSL)
//! ```
//! Row identity is the text between `[perf]` and the first metric, whitespace collapsed.
//! The line's grammar is `support/perf_line.rs` (aiter's tables and FlyDSL print it too).

use crate::formats::parser::{ParseError, Parser};
use crate::formats::support::lines;
use crate::formats::support::perf_line::parse_perf_line;
use crate::model::{Format, Parsed};

pub struct PerfLines;

impl Parser for PerfLines {
    fn format(&self) -> Format {
        Format::PerfLines
    }
    fn sniff(&self, text: &str) -> bool {
        crate::formats::support::text::finder!("[perf]")
            .find(text.as_bytes())
            .is_some()
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let mut parsed = Parsed::default();
        for (no, line) in lines(text) {
            if let Some(ms) = parse_perf_line(&line, no, &mut parsed.keys)? {
                parsed.measurements.extend(ms);
            }
        }
        if parsed.measurements.is_empty() {
            return Err(ParseError::at(0, "no `[perf]` line with a metric found"));
        }
        Ok(parsed)
    }
}
