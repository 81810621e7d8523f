//! `memrecall hook install` and `uninstall`: memrecall's entries in an agent's settings file,
//! naming the binary by its absolute path, and the user's original bytes given back (the
//! transaction is `agent_hooks::settings`' [`Install`] and [`settings::uninstall`]; this parses
//! the arguments, copies a binary that goes away, and says what was done).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;

use super::{Failure, emit};
use agent_hooks::settings::{self, Install, Installed, SettingsError, Uninstalled};
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
    // What an agent that runs only trusted hooks needs before it runs this one.
    let trust = args
        .agent
        .conventions()
        .hook_trust
        .map_or_else(String::new, |trust| format!("{}\n", trust.note));
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
    let install = Install::read(args.agent, &path).map_err(settings_failure)?;
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
    let (backup, restorable) = match install
        .write(&program, &command, &env)
        .map_err(settings_failure)?
    {
        Installed::AlreadyThere => {
            return emit(&format!(
                "{copied}{} already runs the memrecall hook ({})\n{trust}",
                path.display(),
                program.display()
            ));
        }
        Installed::Added { backup, restorable } => (backup, restorable),
    };
    let mut message = format!(
        "{copied}added the memrecall hook to {}: the agent runs {}\n",
        path.display(),
        program.display()
    );
    if let Some(backup) = backup {
        let _ = writeln!(
            message,
            "your previous file is kept in {}",
            backup.display()
        );
    }
    if !restorable {
        message.push_str("uninstall will take out memrecall's entries only: there is no record of the file before the first install\n");
    }
    message.push_str(&trust);
    emit(&message)
}

pub(crate) fn uninstall(args: &InstallArgs) -> Result<(), Failure> {
    let env = Environment::from_process();
    let path = settings::settings_path(args.agent, args.project.as_deref(), &env)
        .map_err(settings_failure)?;
    let removed = uninstall_file(args.agent, &path, args.command.as_deref(), &env)?;
    emit(
        &removed.unwrap_or_else(|| format!("{} has no memrecall hook to remove\n", path.display())),
    )
}

/// Uninstalls memrecall's hook from `path` (a settings file of `agent`; the entries running
/// `program`, when given) and says what was done: `None` when nothing changed.
pub(crate) fn uninstall_file(
    agent: Agent,
    path: &Path,
    program: Option<&Path>,
    env: &Environment,
) -> Result<Option<String>, Failure> {
    let done = settings::uninstall(agent, path, program, env).map_err(settings_failure)?;
    let path = path.display();
    Ok(match done {
        Uninstalled::NothingToRemove => None,
        Uninstalled::Restored => Some(format!("restored {path} as it was before install\n")),
        Uninstalled::RemovedCreated => Some(format!("removed {path}, which install had created\n")),
        Uninstalled::EntriesRemoved {
            changed_since_install,
        } => {
            let why = if changed_since_install {
                " (the file changed since install: the rest of it is kept as it now is)"
            } else {
                ""
            };
            Some(format!("removed the memrecall hook from {path}{why}\n"))
        }
    })
}
