//! The query string of every route, read strictly: an unknown parameter (`treshold=`)
//! is a `400` naming it, never silently ignored, answered as JSON under `/api`.

use crate::AppError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

/// `axum::extract::Query`, with its rejection as the app's error page or JSON.
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, AppError> {
        match axum::extract::Query::<T>::try_from_uri(&parts.uri) {
            Ok(axum::extract::Query(v)) => Ok(Query(v)),
            Err(e) => {
                let text = e.body_text();
                let text = text
                    .strip_prefix("Failed to deserialize query string: ")
                    .unwrap_or(&text);
                let e = AppError::bad_request(format!("query: {text}"));
                Err(if parts.uri.path().starts_with("/api/") {
                    e.json()
                } else {
                    e
                })
            }
        }
    }
}

/// Two query structs read from one query string: a page's own parameters (`A`) and
/// the comparison options (`B`, defined once in `perfdb_reports::compare::JudgeArgs`).
/// Each reads its own fields; a parameter neither knows is a `400` naming it, as with
/// [`Query`].
pub struct Query2<A, B>(pub A, pub B);

impl<S: Send + Sync, A: DeserializeOwned + Send, B: DeserializeOwned + Send> FromRequestParts<S>
    for Query2<A, B>
{
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, s: &S) -> Result<Self, AppError> {
        let api = parts.uri.path().starts_with("/api/");
        let reject = |e: AppError| if api { e.json() } else { e };
        let pairs: Vec<(String, String)> =
            serde_urlencoded::from_str(parts.uri.query().unwrap_or(""))
                .map_err(|e| reject(AppError::bad_request(format!("query: {e}"))))?;
        let (a, b) = (fields_of::<A>(), fields_of::<B>());
        if let Some((k, _)) = pairs
            .iter()
            .find(|(k, _)| !a.contains(&k.as_str()) && !b.contains(&k.as_str()))
        {
            let mut known: Vec<&str> = a.iter().chain(b).copied().collect();
            known.sort_unstable();
            return Err(reject(AppError::bad_request(format!(
                "query: unknown field `{k}`, expected one of {}",
                known
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))));
        }
        let Query(a) = Query::<A>::from_request_parts(parts, s).await?;
        let Query(b) = Query::<B>::from_request_parts(parts, s).await?;
        Ok(Query2(a, b))
    }
}

/// The field names a struct's derived `Deserialize` reads (its serialized names):
/// asked of a deserializer that records them and reads nothing.
fn fields_of<T: DeserializeOwned>() -> &'static [&'static str] {
    use serde::de::{self, Visitor};
    struct Fields(&'static [&'static str]);
    impl<'de> de::Deserializer<'de> for &mut Fields {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("only a struct's fields are asked"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            v: V,
        ) -> Result<V::Value, Self::Error> {
            self.0 = fields;
            self.deserialize_any(v)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let mut f = Fields(&[]);
    let _ = T::deserialize(&mut f);
    f.0
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_fields_of_the_comparison_options_are_their_query_names() {
        let f = super::fields_of::<perfdb_reports::compare::JudgeArgs>();
        assert!(f.contains(&"threshold") && f.contains(&"where") && f.contains(&"overrides"));
        assert!(!f.contains(&"config") && !f.contains(&"filters"), "{f:?}");
    }
}
