//! What changed underneath a step: the environment tags of the runs either side of it.
//! A step whose last good and first bad commit ran on another driver, CUDA or ROCm,
//! torch, triton, image or GPU power limit says so first; one whose environment was
//! recorded and did not change is the code's; one with no environment recorded says
//! that it cannot tell.
//!
//! The tags are the runs' own: `perfdb ab` and `perfdb bisect` record `driver`, `torch`,
//! `triton`, `cuda`/`rocm` and the GPU's power limit; `perfdb ingest --tag triton=3.6.0`
//! records what a CI job knows; any tag named `env_*` is one too.

use crate::db::{sql_str, Db, DbError};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The environment tags, with the name a person reads.
pub const TAGS: [(&str, &str); 10] = [
    ("driver", "driver"),
    ("cuda", "CUDA"),
    ("rocm", "ROCm"),
    ("hip", "HIP"),
    ("torch", "torch"),
    ("triton", "triton"),
    ("jax", "jax"),
    ("python", "python"),
    ("compiler", "compiler"),
    ("gpu_power_limit_w_before", "GPU power limit (W)"),
];

/// The name a person reads for tag `tag`, if it is an environment tag.
pub fn readable(tag: &str) -> Option<String> {
    if let Some((_, r)) = TAGS.iter().find(|(t, _)| *t == tag) {
        return Some(r.to_string());
    }
    tag.strip_prefix("env_")
        .filter(|r| !r.is_empty())
        .map(String::from)
}

/// One environment tag that differs across a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvChange {
    pub name: String,
    pub before: String,
    pub after: String,
}

/// The environment across one step: what changed, and what was recorded on both sides
/// and did not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Underneath {
    pub changed: Vec<EnvChange>,
    pub unchanged: Vec<String>,
}

impl Underneath {
    /// `triton 3.5.1 -> 3.6.0`; `not the environment (driver, triton unchanged)`;
    /// `environment not recorded`.
    pub fn text(&self) -> String {
        if !self.changed.is_empty() {
            self.changed
                .iter()
                .map(|c| format!("{} {} -> {}", c.name, c.before, c.after))
                .collect::<Vec<_>>()
                .join("; ")
        } else if !self.unchanged.is_empty() {
            format!(
                "not the environment ({} unchanged)",
                self.unchanged.join(", ")
            )
        } else {
            "environment not recorded".into()
        }
    }

    /// [`Underneath::text`] with the commits: `triton 3.5.1 -> 3.6.0 between c12 and c13`.
    pub fn between(&self, last_good: &str, first_bad: &str) -> String {
        if self.changed.is_empty() {
            self.text()
        } else {
            format!("{} between {last_good} and {first_bad}", self.text())
        }
    }
}

/// The commit and environment of runs, read once for many steps.
pub struct RunEnvironments {
    /// run id -> (commit, tag name -> value).
    runs: HashMap<String, (String, BTreeMap<String, String>)>,
}

impl RunEnvironments {
    /// The environments of `runs` (one query however many).
    pub fn read<'a>(db: &Db, runs: impl IntoIterator<Item = &'a str>) -> Result<Self, DbError> {
        let ids: BTreeSet<&str> = runs.into_iter().collect();
        let mut out = HashMap::new();
        if ids.is_empty() {
            return Ok(RunEnvironments { runs: out });
        }
        let list: Vec<String> = ids.iter().map(|r| sql_str(r)).collect();
        let sql = format!(
            "SELECT run_id, coalesce(\"commit\", run_id), tags, image_digest FROM runs \
             WHERE run_id IN ({})",
            list.join(", ")
        );
        let mut stmt = db.conn.prepare(&sql).map_err(DbError::Query)?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                ))
            })
            .map_err(DbError::Query)?;
        for row in rows {
            let (id, commit, tags, image) = row.map_err(DbError::Query)?;
            let mut env = BTreeMap::new();
            if let Some(Ok(serde_json::Value::Object(m))) = tags
                .as_deref()
                .map(serde_json::from_str::<serde_json::Value>)
            {
                for (k, v) in m {
                    if let (Some(name), Some(v)) = (readable(&k), v.as_str()) {
                        env.insert(name, v.to_string());
                    }
                }
            }
            if let Some(image) = image.filter(|i| !i.is_empty()) {
                env.insert("image".into(), image);
            }
            out.insert(id, (commit, env));
        }
        Ok(RunEnvironments { runs: out })
    }

    /// The environment across the step from `last_good` to `first_bad`, from `runs`
    /// (the runs of both commits).
    pub fn across(&self, runs: &[String], last_good: &str, first_bad: &str) -> Underneath {
        let mut sides: [BTreeMap<&str, BTreeSet<&str>>; 2] = Default::default();
        for r in runs {
            let Some((commit, env)) = self.runs.get(r) else {
                continue;
            };
            let side = if commit == last_good {
                0
            } else if commit == first_bad {
                1
            } else {
                continue;
            };
            for (k, v) in env {
                sides[side].entry(k).or_default().insert(v);
            }
        }
        let mut u = Underneath::default();
        for (name, before) in &sides[0] {
            let Some(after) = sides[1].get(name) else {
                continue;
            };
            let join = |s: &BTreeSet<&str>| s.iter().copied().collect::<Vec<_>>().join(", ");
            if before == after {
                u.unchanged.push(name.to_string());
            } else {
                u.changed.push(EnvChange {
                    name: name.to_string(),
                    before: join(before),
                    after: join(after),
                });
            }
        }
        u
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (run, commit, its tags).
    type Run<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

    fn envs(list: &[Run]) -> RunEnvironments {
        RunEnvironments {
            runs: list
                .iter()
                .map(|(id, commit, tags)| {
                    (
                        id.to_string(),
                        (
                            commit.to_string(),
                            tags.iter()
                                .map(|(k, v)| (k.to_string(), v.to_string()))
                                .collect(),
                        ),
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn a_step_says_what_changed_underneath_or_that_nothing_did() {
        let e = envs(&[
            ("r1", "c12", &[("triton", "3.5.1"), ("driver", "570.1")]),
            ("r2", "c13", &[("triton", "3.6.0"), ("driver", "570.1")]),
            ("r3", "c14", &[("triton", "3.6.0"), ("driver", "570.1")]),
        ]);
        let runs: Vec<String> = ["r1", "r2", "r3"].map(String::from).to_vec();
        let u = e.across(&runs, "c12", "c13");
        assert_eq!(
            u.between("c12", "c13"),
            "triton 3.5.1 -> 3.6.0 between c12 and c13"
        );
        assert_eq!(u.unchanged, ["driver"]);
        let u = e.across(&runs, "c13", "c14");
        assert_eq!(u.text(), "not the environment (driver, triton unchanged)");
        assert_eq!(
            envs(&[]).across(&runs, "c1", "c2").text(),
            "environment not recorded"
        );
    }

    #[test]
    fn environment_tags_are_the_known_ones_and_env_prefixed() {
        assert_eq!(readable("triton").as_deref(), Some("triton"));
        assert_eq!(readable("env_rccl").as_deref(), Some("rccl"));
        assert_eq!(readable("machine"), None);
        assert_eq!(readable("gpu_clock_mhz_before"), None);
    }
}
