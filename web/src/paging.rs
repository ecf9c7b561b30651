//! Every list the app serves comes a page at a time: `?limit=` (default 100, at most
//! 1000) and `?offset=`. JSON lists answer `{total, offset, limit, next, items}`, with
//! `next` the query of the following page (null on the last one).

use crate::AppError;
use serde::Serialize;

pub const DEFAULT_LIMIT: usize = 100;
pub const MAX_LIMIT: usize = 1000;

/// `?limit=&offset=` as given.
#[derive(Debug, serde::Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct PageQuery {
    pub limit: Option<String>,
    pub offset: Option<String>,
}

impl PageQuery {
    pub fn page(&self) -> Result<Page, AppError> {
        Page::parse(self.limit.as_deref(), self.offset.as_deref())
    }
}

/// A page asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub offset: usize,
    pub limit: usize,
}

impl Page {
    /// From the query's `limit` and `offset` texts.
    pub fn parse(limit: Option<&str>, offset: Option<&str>) -> Result<Page, AppError> {
        let num = |v: Option<&str>, what: &str, default: usize| -> Result<usize, AppError> {
            match v.map(str::trim).filter(|t| !t.is_empty()) {
                None => Ok(default),
                Some(t) => t.parse::<usize>().map_err(|_| {
                    AppError::bad_request(format!("{what} '{t}' is not a whole number"))
                }),
            }
        };
        let limit = num(limit, "limit", DEFAULT_LIMIT)?;
        if limit == 0 || limit > MAX_LIMIT {
            return Err(AppError::bad_request(format!(
                "limit {limit}: between 1 and {MAX_LIMIT}"
            )));
        }
        let offset = num(offset, "offset", 0)?;
        // Offsets reach SQL as BIGINT: anything past that is past every list anyway.
        if offset > i64::MAX as usize / 2 {
            return Err(AppError::bad_request(format!(
                "offset {offset}: past the end of any list (at most {})",
                i64::MAX / 2
            )));
        }
        Ok(Page { offset, limit })
    }

    /// This page of `items` (the whole list).
    pub fn of<T>(self, items: Vec<T>, path: &str, query: &str) -> Paged<T> {
        let total = items.len();
        let items = items
            .into_iter()
            .skip(self.offset)
            .take(self.limit)
            .collect();
        self.wrap(items, total, path, query)
    }

    /// Wrap `items`, already this page of a list of `total`.
    pub fn wrap<T>(self, items: Vec<T>, total: usize, path: &str, query: &str) -> Paged<T> {
        let next = (self.offset + self.limit < total).then(|| {
            format!(
                "{path}?{query}{}offset={}&limit={}",
                if query.is_empty() { "" } else { "&" },
                self.offset + self.limit,
                self.limit
            )
        });
        Paged {
            total,
            offset: self.offset,
            limit: self.limit,
            next,
            items,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Paged<T> {
    pub total: usize,
    pub offset: usize,
    pub limit: usize,
    pub next: Option<String>,
    pub items: Vec<T>,
}

impl<T> Paged<T> {
    /// `showing 101-200 of 1234` with links to the previous and next pages of `path`
    /// (an HTML page whose other query pairs are `query`).
    pub fn nav(&self, path: &str, query: &str) -> String {
        if self.total <= self.items.len() && self.offset == 0 {
            return String::new();
        }
        let sep = if query.is_empty() { "" } else { "&amp;" };
        let link = |offset: usize, text: &str| {
            format!(
                "<a href=\"{path}?{q}{sep}offset={offset}&amp;limit={}\">{text}</a>",
                self.limit,
                q = crate::esc(query)
            )
        };
        let mut out = format!(
            "<p class=\"pages\">showing {}–{} of {}",
            (self.offset + 1).min(self.total),
            self.offset + self.items.len(),
            self.total
        );
        if self.offset > 0 {
            out.push_str(" · ");
            out.push_str(&link(self.offset.saturating_sub(self.limit), "← previous"));
        }
        if self.offset + self.items.len() < self.total {
            out.push_str(" · ");
            out.push_str(&link(self.offset + self.limit, "next →"));
        }
        out.push_str("</p>");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_and_next_links() {
        let p = Page::parse(Some("2"), Some("3")).unwrap();
        let page = p.of((0..6).collect::<Vec<_>>(), "/api/runs", "");
        assert_eq!(page.items, vec![3, 4]);
        assert_eq!(page.next.as_deref(), Some("/api/runs?offset=5&limit=2"));
        let last =
            Page::parse(Some("2"), Some("5"))
                .unwrap()
                .of((0..6).collect::<Vec<_>>(), "/x", "a=1");
        assert_eq!((last.items, last.next), (vec![5], None));
        assert!(Page::parse(Some("0"), None).is_err());
        assert!(Page::parse(Some("5000"), None).is_err());
        assert!(Page::parse(None, Some("-1")).is_err());
    }
}
