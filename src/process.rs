//! Process helpers of the commands that run benchmarks.
//!
//! A benchmark command run as one supervised trial (`perfdb run`, each trial of
//! `perfdb ab`): its output passed through as it comes and kept, the command in a
//! process group of its own, so that a deadline or a cancelled CI job (SIGINT,
//! SIGTERM) ends the command with every child it started, never leaving them on the
//! GPU.
//!
//! The trial ends when the command's process exits, not when its output closes: a
//! background child that holds stdout (`nvidia-smi dmon &`) would otherwise stall the
//! trial and be timed as part of it. Output still arriving after the exit is read for
//! [`DRAIN`], then what is left of the group is killed and the run says so.

// kill(2) of a process group, signal(2) and geteuid(2) have no safe std form; this
// module is the only user, each call one line with its reason.
#![allow(unsafe_code)]

use std::io::{Read, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// How long output is still read after the command exited.
pub const DRAIN: Duration = Duration::from_secs(2);
/// How long a group asked to stop (SIGTERM) has before it is killed (SIGKILL).
pub const GRACE: Duration = Duration::from_secs(2);

/// Where a command's output is shown while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Echo {
    /// stdout to ours, stderr to ours.
    AsIs,
    /// Both to our stderr (our stdout carries a report).
    ToStderr,
    Quiet,
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It exited by itself (`status` says how).
    Exited,
    /// Its deadline passed: the group was stopped.
    Deadline,
    /// perfdb received this signal (SIGINT, SIGTERM): the group was stopped.
    Interrupted(i32),
}

/// What a command printed: stdout and stderr merged as whole lines in the order they
/// arrived, and stdout alone; how it ended; and what happened to output that was
/// still arriving after it exited, if any did.
pub struct Captured {
    pub status: ExitStatus,
    pub merged: Vec<u8>,
    pub stdout: Vec<u8>,
    pub ended: Ended,
    /// When the command's process was seen to end: the trial's end, whatever output
    /// was read after it.
    pub exited_at: Instant,
    pub after_exit: Option<String>,
}

static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // Async-signal-safe: one atomic store.
    SIGNAL.store(sig, Ordering::SeqCst);
}

/// The user this process acts as: who must own a folder perfdb writes into.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// From now on SIGINT and SIGTERM are noted, not fatal: the command running is
/// stopped with its group and the caller decides what to keep ([`interrupted`]).
pub fn catch_interrupts() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: installs a handler that only stores to an atomic.
        unsafe {
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
    }
}

/// The signal received since [`catch_interrupts`], if one was.
pub fn interrupted() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// `SIGINT`, `SIGTERM` (the two signals caught), or "a signal".
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

fn kill_group(pgid: u32, sig: libc::c_int) {
    // SAFETY: kill(2) with a negative pid signals the process group the command leads
    // (it was started in a group of its own); no memory is touched.
    unsafe {
        libc::kill(-(pgid as libc::pid_t), sig);
    }
}

/// Read `from` to its end, echoing as `echo` says, appending whole lines to `merged`
/// and (stdout) everything to `own`.
fn pump(
    mut from: impl Read,
    echo: Echo,
    is_stderr: bool,
    merged: Arc<Mutex<Vec<u8>>>,
    own: Arc<Mutex<Vec<u8>>>,
) -> std::io::Result<()> {
    let mut buf = [0u8; 16 * 1024];
    let mut partial: Vec<u8> = Vec::new();
    loop {
        let n = from.read(&mut buf)?;
        if n == 0 {
            break;
        }
        let chunk = &buf[..n];
        match (echo, is_stderr) {
            (Echo::Quiet, _) => {}
            (Echo::AsIs, false) => {
                let mut o = std::io::stdout().lock();
                o.write_all(chunk)?;
                o.flush()?;
            }
            _ => {
                let mut e = std::io::stderr().lock();
                e.write_all(chunk)?;
                e.flush()?;
            }
        }
        if !is_stderr {
            own.lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend_from_slice(chunk);
        }
        partial.extend_from_slice(chunk);
        if let Some(last) = partial.iter().rposition(|b| *b == b'\n') {
            let rest = partial.split_off(last + 1);
            merged
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend_from_slice(&partial);
            partial = rest;
        }
    }
    if !partial.is_empty() {
        partial.push(b'\n');
        merged
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(&partial);
    }
    Ok(())
}

/// Run `command` in a process group of its own, its output shown as `echo` says and
/// kept, until it exits, `deadline` passes or perfdb is interrupted (the group is then
/// stopped: SIGTERM, and SIGKILL after [`GRACE`]).
pub fn run(
    command: &mut Command,
    echo: Echo,
    deadline: Option<Instant>,
) -> std::io::Result<Captured> {
    run_cancellable(command, echo, deadline, None)
}

/// [`run`], also stopped (as by SIGTERM) once `cancel` is set: a build started ahead
/// that the bisect no longer needs.
pub fn run_cancellable(
    command: &mut Command,
    echo: Echo,
    deadline: Option<Instant>,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> std::io::Result<Captured> {
    use std::os::unix::process::CommandExt;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let pgid = child.id();
    let merged = Arc::new(Mutex::new(Vec::new()));
    let stdout = Arc::new(Mutex::new(Vec::new()));
    // The readers end when the last holder of the pipes closes them: the command, or a
    // background child it left. They are not joined: one may outlive the trial.
    let (done_tx, done_rx) = mpsc::channel::<std::io::Result<()>>();
    for (is_stderr, from) in [
        (
            false,
            Box::new(child.stdout.take().expect("piped")) as Box<dyn Read + Send>,
        ),
        (true, Box::new(child.stderr.take().expect("piped"))),
    ] {
        let (m, o, tx) = (merged.clone(), stdout.clone(), done_tx.clone());
        std::thread::spawn(move || {
            let _ = tx.send(pump(from, echo, is_stderr, m, o));
        });
    }
    drop(done_tx);
    // Wait for the exit, the deadline or a signal, whichever comes first.
    let (status, ended) = loop {
        if let Some(status) = child.try_wait()? {
            break (status, Ended::Exited);
        }
        let cancelled = cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::SeqCst));
        let stop = match (interrupted(), deadline) {
            (Some(sig), _) => Some(Ended::Interrupted(sig)),
            (None, _) if cancelled => Some(Ended::Interrupted(libc::SIGTERM)),
            (None, Some(d)) if Instant::now() >= d => Some(Ended::Deadline),
            _ => None,
        };
        if let Some(why) = stop {
            kill_group(pgid, libc::SIGTERM);
            let until = Instant::now() + GRACE;
            let status = loop {
                if let Some(s) = child.try_wait()? {
                    break s;
                }
                if Instant::now() >= until {
                    kill_group(pgid, libc::SIGKILL);
                    break child.wait()?;
                }
                std::thread::sleep(Duration::from_millis(5));
            };
            break (status, why);
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let exited_at = Instant::now();
    // Output still in the pipes, or still being written by the group's other
    // processes: read for a while, then stop them.
    let drained = |within: Duration| -> std::io::Result<bool> {
        let until = Instant::now() + within;
        let mut finished = 0;
        while finished < 2 {
            let left = until.saturating_duration_since(Instant::now());
            match done_rx.recv_timeout(left) {
                Ok(r) => {
                    r?;
                    finished += 1;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => return Ok(false),
                Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(true),
            }
        }
        Ok(true)
    };
    let mut after_exit = None;
    if !drained(DRAIN)? {
        kill_group(pgid, libc::SIGKILL);
        let closed = drained(GRACE)?;
        after_exit = Some(format!(
            "its output stayed open after the command exited (a background process holding \
             it): read for {} s more, then the command's process group was killed{}",
            DRAIN.as_secs(),
            if closed {
                ""
            } else {
                "; a process outside the group still holds it, and it is no longer read"
            }
        ));
    }
    let take =
        |v: &Arc<Mutex<Vec<u8>>>| std::mem::take(&mut *v.lock().unwrap_or_else(|p| p.into_inner()));
    Ok(Captured {
        status,
        merged: take(&merged),
        stdout: take(&stdout),
        ended,
        exited_at,
        after_exit,
    })
}

/// A command's words as a person would type them (each quoted as a shell needs).
pub fn command_line(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Quote a word for display the way a shell would need it.
pub fn shell_word(w: &str) -> String {
    if !w.is_empty()
        && w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}
