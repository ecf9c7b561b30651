//! Names shared by many values (table, variant, metric, unit, column), interned for the
//! life of the process.

use std::fmt;

/// A name shared by many values (table, variant, metric, unit, column). Names are
/// interned for the life of the process: copying one is copying a pointer, with no
/// reference count to touch per value. The pointer is thin (one word: the interned
/// `Box<str>`), which keeps a [`Measurement`] — moved once per parsed value — small.
/// The set of distinct names a process sees is small (columns and fields of the formats
/// it reads), so the interner stays small.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Name(&'static NameText);

/// The interned text of a [`Name`]; a sized box, so a reference to it is one word.
#[derive(PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NameText(Box<str>);

type Interned = std::collections::HashMap<&'static str, &'static NameText>;

static NAMES: std::sync::LazyLock<std::sync::Mutex<Interned>> =
    std::sync::LazyLock::new(Default::default);

thread_local! {
    /// Names this thread has seen: looked up without taking the process-wide lock
    /// (parsers intern a metric, unit and column per value, on every core).
    static SEEN: std::cell::RefCell<std::collections::HashMap<&'static str, Name, crate::hash::Fx>> =
        Default::default();
}

impl Name {
    pub fn new(s: &str) -> Name {
        if let Some(n) = SEEN.with(|seen| seen.borrow().get(s).copied()) {
            return n;
        }
        let n = Name::intern(s);
        SEEN.with(|seen| seen.borrow_mut().insert(n.as_str(), n));
        n
    }
    fn intern(s: &str) -> Name {
        let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = names.get(s) {
            return Name(n);
        }
        let leaked: &'static NameText = Box::leak(Box::new(NameText(s.into())));
        names.insert(&leaked.0, leaked);
        Name(leaked)
    }
    pub fn as_str(&self) -> &'static str {
        &self.0 .0
    }
}

impl From<&str> for Name {
    fn from(s: &str) -> Name {
        Name::new(s)
    }
}

impl From<String> for Name {
    fn from(s: String) -> Name {
        Name::new(&s)
    }
}

impl std::ops::Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
