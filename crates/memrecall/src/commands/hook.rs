//! `memrecall hook`: its arguments, and installing or removing the hook in an agent's settings.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{Failure, emit};
use crate::agent::{Agent, Environment, Layout, settings};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct HookArgs {
    #[command(subcommand)]
    pub(crate) action: Option<HookAction>,
    /// The agent running the hook: it decides the event names and the output shape.
    #[arg(long, value_enum, required = true)]
    pub(crate) agent: Option<Agent>,
    /// Whose memory layout to read [default: the agent's own where it keeps memory (Claude
    /// Code, Qwen Code), memrecall's otherwise].
    #[arg(long, value_enum)]
    pub(crate) layout: Option<Layout>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HookAction {
    /// Print the settings snippet that runs the hook at each prompt, tool result and turn end;
    /// --write merges it into the agent's settings file.
    Install(InstallArgs),
    /// Remove the entry `install --write` added from the agent's settings file.
    Uninstall(InstallArgs),
}

#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    /// The agent whose settings to change.
    #[arg(long, value_enum)]
    agent: Agent,
    /// Use the project's settings file in DIR instead of the user's.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Change the settings file (a backup of it is kept beside it) instead of printing the
    /// snippet. Only for install; uninstall always writes.
    #[arg(long)]
    write: bool,
}

/// Whether the command line asks to run a hook (not to install or uninstall one). Read as
/// `OsString`s: an argument that is not UTF-8 must not make the hook panic.
pub(crate) fn is_hook_run() -> bool {
    is_hook_run_in(&std::env::args_os().skip(1).take(2).collect::<Vec<_>>())
}

fn is_hook_run_in(args: &[std::ffi::OsString]) -> bool {
    args.first().is_some_and(|a| a == "hook")
        && !args
            .get(1)
            .and_then(|a| a.to_str())
            .is_some_and(|a| matches!(a, "install" | "uninstall" | "help"))
}

pub(crate) fn run_settings(action: &HookAction) -> Result<(), Failure> {
    let env = Environment::from_process();
    let (args, installing) = match action {
        HookAction::Install(args) => (args, true),
        HookAction::Uninstall(args) => (args, false),
    };
    let settings_error = |e: settings::SettingsError| Failure::from(anyhow::Error::from(e));
    let path = settings::settings_path(args.agent, args.project.as_deref(), &env)
        .map_err(settings_error)?;
    if installing && !args.write {
        let snippet = serde_json::to_string_pretty(&settings::snippet(args.agent))
            .map_err(anyhow::Error::from)?;
        emit(&format!("{snippet}\n"))?;
        eprintln!(
            "memrecall: merge this into {} (or run again with --write)",
            path.display()
        );
        return Ok(());
    }
    let (mut current, existed) = settings::read(&path).map_err(settings_error)?;
    let changed = if installing {
        settings::merge(&mut current, args.agent, &path).map_err(settings_error)?
    } else {
        settings::remove(&mut current, args.agent)
    };
    if changed {
        settings::write(&path, &current, existed).map_err(settings_error)?;
    }
    let message = match (installing, changed) {
        (true, true) => format!("added the memrecall hook to {}", path.display()),
        (true, false) => format!("{} already runs the memrecall hook", path.display()),
        (false, true) => format!("removed the memrecall hook from {}", path.display()),
        (false, false) => format!("{} has no memrecall hook to remove", path.display()),
    };
    let backup = if changed && existed {
        format!(
            " (the previous file is in {})",
            settings::backup_path(&path).display()
        )
    } else {
        String::new()
    };
    emit(&format!("{message}{backup}\n"))
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::is_hook_run_in;

    #[cfg(unix)]
    #[test]
    fn an_argument_that_is_not_utf8_is_still_a_hook_run() {
        use std::os::unix::ffi::OsStringExt as _;
        let args = vec![OsString::from("hook"), OsString::from_vec(vec![0xff])];
        assert!(is_hook_run_in(&args));
    }

    #[test]
    fn install_is_not_a_hook_run() {
        let args = vec![OsString::from("hook"), OsString::from("install")];
        assert!(!is_hook_run_in(&args));
    }
}
