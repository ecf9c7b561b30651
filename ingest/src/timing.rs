//! How long each phase of a command took, on stderr when asked (`PERFDB_TRACE=1`): a
//! leaf every crate may time itself with (it imports nothing).

/// With `PERFDB_TRACE=1`, print how long the phase since `t` took (to stderr); `t`
/// restarts for the next phase. Ingest and compare report their phases this way.
pub fn trace(phase: &str, t: &mut std::time::Instant) {
    if std::env::var_os("PERFDB_TRACE").is_some() {
        eprintln!("trace: {phase}: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    }
    *t = std::time::Instant::now();
}
