//! `memrecall hook`: its arguments, and installing or removing the hook in an agent's settings.

use clap::{Args, Subcommand};

use super::Failure;
use super::install::InstallArgs;
use agent_hooks::{Agent, Layout};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct HookArgs {
    #[command(subcommand)]
    pub(crate) action: Option<HookAction>,
    /// The agent running the hook: it decides the event names and the output shape.
    #[arg(long, value_enum, required = true)]
    pub(crate) agent: Option<Agent>,
    /// Whose memory layout to read [default: the agent's own where it keeps memory (Claude
    /// Code's project memory, Qwen Code), memrecall's otherwise].
    #[arg(long, value_enum)]
    pub(crate) layout: Option<Layout>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HookAction {
    /// Print the settings snippet that runs the hook at each prompt, tool result and turn end;
    /// --write merges it into the agent's settings file.
    Install(InstallArgs),
    /// Give the agent's settings file back as it was before `install --write` (or, when it
    /// changed since, take out memrecall's entries only).
    Uninstall(InstallArgs),
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
    match action {
        HookAction::Install(args) => super::install::install(args),
        HookAction::Uninstall(args) => super::install::uninstall(args),
    }
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
