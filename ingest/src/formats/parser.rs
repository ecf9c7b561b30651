//! The words every format speaks: the [`Parser`] trait a reader implements, the
//! [`Evidence`] detection weighs, the [`Context`] a parse may know and the [`ParseError`]
//! it refuses with. Formats depend on this module, not on the registry that lists them
//! (`formats/mod.rs`).

use crate::model::{Format, Parsed};

/// Why a file could not be parsed: a line (1-based, 0 = the file as a whole) and a reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{reason}", if *line > 0 { format!("line {line}: ") } else { String::new() })]
pub struct ParseError {
    pub line: usize,
    pub reason: String,
}

impl ParseError {
    pub fn at(line: usize, reason: impl Into<String>) -> Self {
        ParseError {
            line,
            reason: reason.into(),
        }
    }
}

/// What a parser may know beside the text: where it came from and what the person
/// ingesting it said about it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// The file path (or `--name`) of the source.
    pub source: &'a str,
    /// `--unit`: the unit of values whose source prints none (Triton's CSV).
    pub unit: Option<&'a str>,
    /// `--variant-axis`: the nvbench axis that holds the implementations compared.
    pub variant_axis: Option<&'a str>,
}

/// How strongly a text carries a format's own marks. Detection takes the strongest
/// claim; the order of [`Format::ALL`] only settles claims of the same strength that are
/// not signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Evidence {
    None,
    /// A marker the format prints but other tools' text may carry too (a `|---|` pipe
    /// table, a `[perf]` line inside a log of another format).
    Marker,
    /// Something only this format prints: its column set with its value shapes
    /// (nvbench's `GPU Time`/`Noise`/`Samples` with `1.431 ms` cells), its banner
    /// (aiter's `summary (markdown):`). Two formats with a signature each in one text
    /// are not guessed between.
    Signature,
}

/// One input format.
pub trait Parser: Sync {
    fn format(&self) -> Format;
    /// A cheap look at the text: does it carry this format's markers?
    fn sniff(&self, text: &str) -> bool;
    /// How strongly the text is this format's: [`Evidence::Marker`] when [`Parser::sniff`]
    /// takes it, unless the format knows its signatures.
    fn evidence(&self, text: &str) -> Evidence {
        if self.sniff(text) {
            Evidence::Marker
        } else {
            Evidence::None
        }
    }
    /// Parse the whole text. An error names the line and the reason.
    fn parse(&self, text: &str) -> Result<Parsed, ParseError>;
    /// Parse with what is known about the source; formats that need it override this.
    fn parse_in(&self, text: &str, _cx: &Context) -> Result<Parsed, ParseError> {
        self.parse(text)
    }
}
