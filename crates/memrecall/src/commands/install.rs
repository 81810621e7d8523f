//! `memrecall hook install` and `uninstall`: memrecall's entries in an agent's settings file,
//! naming the binary by its absolute path, and the user's original bytes given back.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;

use super::{Failure, emit};
use agent_hooks::settings::{self, Document, SettingsError, record};
use agent_hooks::{Agent, Environment, Layout};

/// The arguments of `hook install` and `hook uninstall`.
#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    /// The agent whose settings to change.
    #[arg(long, value_enum)]
    pub(crate) agent: Agent,
    /// Use the project's settings file in DIR instead of the user's.
    #[arg(long, value_name = "DIR")]
    pub(crate) project: Option<PathBuf>,
    /// Change the settings file (the original is kept, beside it and under MEMRECALL_HOME, for
    /// uninstall to restore) instead of printing the snippet. Only for install; uninstall always
    /// writes.
    #[arg(long)]
    pub(crate) write: bool,
    /// The memrecall binary the agent should run [default: this one, by its absolute path].
    #[arg(long, value_name = "PATH")]
    pub(crate) command: Option<PathBuf>,
    /// Whose memory layout the installed hook reads, written into its command [default: the
    /// hook's own default for the agent]. Only for install.
    #[arg(long, value_enum)]
    pub(crate) layout: Option<Layout>,
}

/// What Codex needs before it runs a hook, said after every Codex install.
const CODEX_TRUST: &str = "Codex runs a hook only once you have trusted it: run `codex` in a terminal and trust the memrecall hook there (Codex then keeps a `trusted_hash` for it under `hooks.state`). Until then `codex exec` skips the hook without a word.";

fn settings_failure(error: SettingsError) -> Failure {
    Failure::from(anyhow::Error::from(error))
}

pub(crate) use super::hook_binary::running_binary;
use super::hook_binary::{HookProgram, copy_binary, hook_program};

pub(crate) fn install(args: &InstallArgs) -> Result<(), Failure> {
    let env = Environment::from_process();
    let path = settings::settings_path(args.agent, args.project.as_deref(), &env)
        .map_err(settings_failure)?;
    let HookProgram {
        path: program,
        copied_from,
        warning,
    } = hook_program(args.command.as_deref(), &env)?;
    let caveat = settings::command_caveat(args.agent, &program);
    for warning in warning.iter().chain(&caveat) {
        eprintln!("memrecall: {warning}");
    }
    let command = settings::hook_command(args.agent, &program, args.layout);
    let trust = if args.agent == Agent::Codex {
        format!("{CODEX_TRUST}\n")
    } else {
        String::new()
    };
    if !args.write {
        emit(&settings::snippet(args.agent, &command))?;
        if let Some((from, place)) = &copied_from {
            eprintln!(
                "memrecall: {} is in {place}, which goes away: with --write it is first copied to {}, which the snippet names",
                from.display(),
                program.display()
            );
        }
        eprintln!(
            "memrecall: merge this into {} (or run again with --write)",
            path.display()
        );
        if !trust.is_empty() {
            eprint!("memrecall: {trust}");
        }
        return Ok(());
    }
    let (text, existed) = settings::read(&path).map_err(settings_failure)?;
    let mut document = Document::parse(&text, args.agent, &path).map_err(settings_failure)?;
    let mut copied = String::new();
    if let Some((from, place)) = &copied_from {
        copy_binary(from, &program).map_err(|e| {
            Failure::from(anyhow::anyhow!(
                "cannot copy {} (it is in {place}, which goes away) to {}: {e}; name a binary that stays with --command PATH",
                from.display(),
                program.display()
            ))
        })?;
        copied = format!(
            "copied {} (in {place}, which goes away) to {}\n",
            from.display(),
            program.display()
        );
    }
    let had_entries = !document
        .memrecall_commands(args.agent, Some(&program))
        .is_empty();
    let changed = document
        .merge(args.agent, &command)
        .map_err(settings_failure)?;
    if !changed {
        return emit(&format!(
            "{copied}{} already runs the memrecall hook ({})\n{trust}",
            path.display(),
            program.display()
        ));
    }
    let written = document.text();
    // The backup beside the file is of the user's own file, never of an earlier install's.
    let backup = existed && !had_entries;
    settings::write(&path, &written, existed, backup).map_err(settings_failure)?;
    let kept = remember(&env, &path, &text, existed, had_entries, &written);
    let mut message = format!(
        "{copied}added the memrecall hook to {}: the agent runs {}\n",
        path.display(),
        program.display()
    );
    if backup {
        let _ = writeln!(
            message,
            "your previous file is kept in {}",
            settings::backup_path(&path).display()
        );
    }
    if !kept {
        message.push_str("uninstall will take out memrecall's entries only: there is no record of the file before the first install\n");
    }
    message.push_str(&trust);
    emit(&message)
}

/// Records what install changed in `path` (see [`record`]); `false` when uninstall will not be
/// able to give back the original bytes.
fn remember(
    env: &Environment,
    path: &Path,
    before: &str,
    existed: bool,
    had_entries: bool,
    written: &str,
) -> bool {
    let Some(home) = env.memrecall_home() else {
        return false;
    };
    let settings = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let original = match record::load(&home, &settings) {
        // Installed again over its own text: the original is still the one kept.
        Some(previous) if previous.installed == record::fingerprint(before) => previous.original,
        _ if !had_entries => existed.then(|| before.to_owned()),
        // An entry from an install made elsewhere, or a file edited since: no original to keep.
        _ => {
            record::forget(&home, &settings);
            return false;
        }
    };
    let kept = record::InstallRecord {
        settings,
        original,
        installed: record::fingerprint(written),
    };
    record::save(&home, &kept).is_ok()
}

pub(crate) fn uninstall(args: &InstallArgs) -> Result<(), Failure> {
    let env = Environment::from_process();
    let path = settings::settings_path(args.agent, args.project.as_deref(), &env)
        .map_err(settings_failure)?;
    let removed = uninstall_file(args.agent, &path, args.command.as_deref(), &env)?;
    emit(&removed.message)
}

/// What [`uninstall_file`] did.
pub(crate) struct Removed {
    /// Whether the file changed (or went).
    pub(crate) changed: bool,
    /// The line saying so.
    pub(crate) message: String,
}

/// Gives `path` (a settings file of `agent`) back as it was before install, or takes out
/// memrecall's entries (those running `program`, when given).
pub(crate) fn uninstall_file(
    agent: Agent,
    path: &Path,
    program: Option<&Path>,
    env: &Environment,
) -> Result<Removed, Failure> {
    let done = |message: String| Removed {
        changed: true,
        message,
    };
    let nothing = || Removed {
        changed: false,
        message: format!("{} has no memrecall hook to remove\n", path.display()),
    };
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let home = env.memrecall_home();
    let (text, existed) = settings::read(path).map_err(settings_failure)?;
    let kept = home
        .as_deref()
        .and_then(|home| record::load(home, &absolute));
    let forget = || {
        if let Some(home) = &home {
            record::forget(home, &absolute);
        }
    };
    if !existed {
        forget();
        return Ok(nothing());
    }
    if let Some(kept) = kept
        .as_ref()
        .filter(|k| k.installed == record::fingerprint(&text))
    {
        let message = if let Some(original) = &kept.original {
            settings::write(path, original, true, false).map_err(settings_failure)?;
            let backup = settings::backup_path(path);
            if std::fs::read_to_string(&backup).is_ok_and(|b| &b == original) {
                let _ = std::fs::remove_file(&backup);
            }
            format!("restored {} as it was before install\n", path.display())
        } else {
            settings::remove_created(path).map_err(settings_failure)?;
            remove_if_empty(path.parent());
            format!("removed {}, which install had created\n", path.display())
        };
        forget();
        return Ok(done(message));
    }
    let mut document = Document::parse(&text, agent, path).map_err(settings_failure)?;
    if !document.remove(agent, program) {
        return Ok(nothing());
    }
    let created = kept.as_ref().is_some_and(|k| k.original.is_none());
    if created && document.is_empty_object() {
        settings::remove_created(path).map_err(settings_failure)?;
        remove_if_empty(path.parent());
        forget();
        return Ok(done(format!(
            "removed {}, which install had created\n",
            path.display()
        )));
    }
    settings::write(path, &document.text(), true, false).map_err(settings_failure)?;
    forget();
    let why = if kept.is_some() {
        " (the file changed since install: the rest of it is kept as it now is)"
    } else {
        ""
    };
    Ok(done(format!(
        "removed the memrecall hook from {}{why}\n",
        path.display()
    )))
}

/// Removes the folder install created a settings file in, when that file was all it held (a
/// folder holding anything else fails to be removed and stays).
fn remove_if_empty(dir: Option<&Path>) {
    if let Some(dir) = dir {
        let _ = std::fs::remove_dir(dir);
    }
}
