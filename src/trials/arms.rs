//! The two arms as the command line gives them: two shell commands, one command in two
//! directories, or one command with two environments.

use crate::cli::AbArgs;
use crate::process::shell_word;
use perfdb_reports::ab::Arm;
use std::path::PathBuf;
use std::process::Command;

/// How each arm's trial is started: two shell commands, one command in two
/// directories, or one command with two environments.
pub enum Arms {
    Shell([String; 2]),
    Dirs([PathBuf; 2], Vec<String>),
    Envs([Vec<(String, String)>; 2], Vec<String>),
}

impl Arms {
    pub fn from_args(a: &AbArgs) -> anyhow::Result<Arms> {
        let needs_command = |form: &str| -> anyhow::Result<Vec<String>> {
            if a.command.is_empty() {
                anyhow::bail!("{form} runs the command given after `--` (e.g. -- python bench.py)");
            }
            Ok(a.command.clone())
        };
        match (&a.base, &a.head, &a.base_dir, &a.head_dir) {
            (Some(b), Some(h), None, None) => {
                if !a.command.is_empty() || !a.base_env.is_empty() || !a.head_env.is_empty() {
                    anyhow::bail!(
                        "--base/--head are whole shell commands: give no command after `--` and no --base-env/--head-env"
                    );
                }
                Ok(Arms::Shell([b.clone(), h.clone()]))
            }
            (None, None, Some(b), Some(h)) => {
                for d in [b, h] {
                    if !d.is_dir() {
                        anyhow::bail!("--base-dir/--head-dir {}: not a directory", d.display());
                    }
                }
                Ok(Arms::Dirs(
                    [b.clone(), h.clone()],
                    needs_command("--base-dir/--head-dir")?,
                ))
            }
            (None, None, None, None) if !a.base_env.is_empty() || !a.head_env.is_empty() => {
                Ok(Arms::Envs(
                    [
                        crate::commands::parse_pairs(&a.base_env, "--base-env")?,
                        crate::commands::parse_pairs(&a.head_env, "--head-env")?,
                    ],
                    needs_command("--base-env/--head-env")?,
                ))
            }
            _ => anyhow::bail!(
                "give the arms one way: --base CMD --head CMD, or --base-dir DIR --head-dir DIR -- CMD, or --base-env K=V --head-env K=V -- CMD"
            ),
        }
    }

    pub fn command(&self, arm: Arm) -> Command {
        let i = arm.index();
        match self {
            Arms::Shell(c) => {
                let mut cmd = Command::new("sh");
                cmd.arg("-c").arg(&c[i]);
                cmd
            }
            Arms::Dirs(d, argv) => {
                let mut cmd = Command::new(&argv[0]);
                cmd.args(&argv[1..]).current_dir(&d[i]);
                cmd
            }
            Arms::Envs(e, argv) => {
                let mut cmd = Command::new(&argv[0]);
                cmd.args(&argv[1..]).envs(e[i].iter().cloned());
                cmd
            }
        }
    }

    /// The arm's command as words, the folder it runs in and the environment it adds:
    /// what an identity pass of the arm runs.
    pub fn parts(&self, arm: Arm) -> (Vec<String>, Option<PathBuf>, Vec<(String, String)>) {
        let i = arm.index();
        match self {
            Arms::Shell(c) => (
                vec!["sh".into(), "-c".into(), c[i].clone()],
                None,
                Vec::new(),
            ),
            Arms::Dirs(d, argv) => (argv.clone(), Some(d[i].clone()), Vec::new()),
            Arms::Envs(e, argv) => (argv.clone(), None, e[i].clone()),
        }
    }

    /// `program args` started where and as the arm's command starts (its folder, its
    /// environment; a shell command's own `cd` is not followed: see
    /// [`Arms::python_command`]).
    pub fn alongside(&self, arm: Arm, program: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args);
        match self {
            Arms::Shell(_) => {}
            Arms::Dirs(d, _) => {
                cmd.current_dir(&d[arm.index()]);
            }
            Arms::Envs(e, _) => {
                cmd.envs(e[arm.index()].iter().cloned());
            }
        }
        cmd
    }

    /// The arm's Python interpreter started where and as the arm starts it, with `extra`
    /// arguments right after it, then (with `keep_rest`) the arm's own words after the
    /// interpreter: `cd ../main && python bench.py` with `-m triton.profiler.proton`
    /// runs `cd ../main && python -m triton.profiler.proton bench.py`, through the shell,
    /// in that folder. The interpreter's name is returned beside it. None when the arm
    /// runs no Python.
    pub fn python_command(
        &self,
        arm: Arm,
        extra: &[&str],
        keep_rest: bool,
    ) -> Option<(Command, String)> {
        let i = arm.index();
        let is_python = |w: &str| python_of(w).is_some();
        let extra_words: Vec<String> = extra.iter().map(|w| shell_word(w)).collect();
        match self {
            Arms::Shell(commands) => {
                let c = &commands[i];
                // The first word of the shell command that is an interpreter: its span.
                let mut at = 0;
                let (start, word) = c.split_inclusive(char::is_whitespace).find_map(|piece| {
                    let start = at;
                    at += piece.len();
                    let w = piece.trim_end();
                    is_python(w).then(|| (start, w.to_string()))
                })?;
                let end = start + word.len();
                let rest = if keep_rest { &c[end..] } else { "" };
                let script = format!("{}{word} {}{rest}", &c[..start], extra_words.join(" "));
                let python = python_of(&word)?;
                let mut cmd = Command::new("sh");
                cmd.arg("-c").arg(script);
                Some((cmd, python))
            }
            Arms::Dirs(_, argv) | Arms::Envs(_, argv) => {
                let at = argv.iter().position(|w| is_python(w))?;
                let mut words: Vec<String> = argv[..=at].to_vec();
                words.extend(extra.iter().map(|w| w.to_string()));
                if keep_rest {
                    words.extend(argv[at + 1..].iter().cloned());
                }
                let python = python_of(&argv[at])?;
                let mut cmd = Command::new(&words[0]);
                cmd.args(&words[1..]);
                match self {
                    Arms::Dirs(d, _) => {
                        cmd.current_dir(&d[i]);
                    }
                    Arms::Envs(e, _) => {
                        cmd.envs(e[i].iter().cloned());
                    }
                    Arms::Shell(_) => {}
                }
                Some((cmd, python))
            }
        }
    }

    /// The arm's command as words: a shell command as `sh -c CMD`.
    pub fn argv(&self, arm: Arm) -> Vec<String> {
        match self {
            Arms::Shell(c) => vec!["sh".into(), "-c".into(), c[arm.index()].clone()],
            Arms::Dirs(_, argv) | Arms::Envs(_, argv) => argv.clone(),
        }
    }

    /// The arm's command as a person would type it.
    pub fn describe(&self, arm: Arm) -> String {
        let i = arm.index();
        let words = |argv: &[String]| crate::process::command_line(argv);
        match self {
            Arms::Shell(c) => c[i].clone(),
            Arms::Dirs(d, argv) => format!(
                "(cd {} && {})",
                shell_word(&d[i].to_string_lossy()),
                words(argv)
            ),
            Arms::Envs(e, argv) => {
                let env: Vec<String> = e[i]
                    .iter()
                    .map(|(k, v)| shell_word(&format!("{k}={v}")))
                    .collect();
                format!("{} {}", env.join(" "), words(argv))
            }
        }
    }
}

/// The Python interpreter an arm's command runs, if it names one (`python3 bench.py`,
/// `.venv/bin/python -m x`, `env X=1 python bench.py`).
pub fn python_of(command: &str) -> Option<String> {
    command
        .split_whitespace()
        .map(|w| w.trim_matches(['\'', '"']))
        .find(|w| {
            let name = w.rsplit('/').next().unwrap_or(w);
            name.strip_prefix("python")
                .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
        })
        .map(String::from)
}
