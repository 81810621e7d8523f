//! Memory roots from the command line: `memrecall roots`, and the `--project`/`--user`/`--layout`
//! flags the other commands share.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;

use super::{Failure, emit};
use agent_hooks::layout::RecallRoots;
use agent_hooks::{Agent, Environment, Layout, layout, settings};

#[derive(Debug, Args)]
pub(crate) struct RootsArgs {
    /// Whose memory layout to resolve.
    #[arg(long, value_enum, default_value_t = Layout::Memrecall)]
    layout: Layout,
    /// The working directory to resolve for [default: the current directory].
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct RootArgs {
    /// Project memory root [default: $MEMRECALL_HOME/projects/<this directory>/memory].
    #[arg(long, value_name = "DIR")]
    pub(crate) project: Option<PathBuf>,
    /// User memory root [default: $MEMRECALL_HOME/memories; MEMRECALL_HOME defaults to ~/.memrecall].
    #[arg(long, value_name = "DIR")]
    pub(crate) user: Option<PathBuf>,
    /// Whose memory layout gives the default roots for this directory (see `memrecall roots`).
    #[arg(long, value_enum, default_value_t = Layout::Memrecall)]
    pub(crate) layout: Layout,
}

pub(crate) fn run(args: &RootsArgs) -> Result<(), Failure> {
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => current_dir()?,
    };
    let roots = layout::resolve(args.layout, &cwd, &Environment::from_process())
        .map_err(|e| Failure::root(e.to_string()))?;
    let show = |choice: &layout::RootChoice| match &choice.path {
        Some(path) if path.is_dir() => format!("{}\n  {}", path.display(), choice.why),
        Some(path) => format!("{} (does not exist yet)\n  {}", path.display(), choice.why),
        None => format!("none\n  {}", choice.why),
    };
    let mut text = format!(
        "layout: {}\ncwd: {}\nproject: {}\nuser: {}\n",
        roots.layout.as_str(),
        roots.cwd.display(),
        show(&roots.project),
        show(&roots.user),
    );
    if roots.project.origin == layout::RootOrigin::Repository {
        text.push_str(
            "  (chosen by a file in the repository: read as the agent reads it; memrecall writes nothing there)\n",
        );
    }
    for ignored in &roots.ignored {
        text.push_str("ignored: ");
        text.push_str(&crate::output::one_line(ignored));
        text.push('\n');
    }
    text.push_str(&hook_binaries(&Environment::from_process()));
    emit(&text)
}

/// Which binary this is, and which one each agent's installed hook runs (from the user's
/// settings files), with a warning for one that is not there.
fn hook_binaries(env: &Environment) -> String {
    let mut text = match super::install::running_binary() {
        Ok(binary) => format!("binary: {}\n", binary.display()),
        Err(e) => format!("binary: unknown ({e})\n"),
    };
    for agent in Agent::ALL {
        let Ok(path) = settings::settings_path(agent, None, env) else {
            continue;
        };
        let Ok((file, true)) = settings::read(&path) else {
            continue;
        };
        let Ok(document) = settings::Document::parse(&file, agent, &path) else {
            continue;
        };
        for command in document.memrecall_commands(agent, None) {
            let program = PathBuf::from(settings::program_of(&command));
            let missing = if program.is_absolute() && !program.is_file() {
                " (missing: the hook cannot run)"
            } else {
                ""
            };
            let _ = writeln!(
                text,
                "hook: {} runs {}{missing} ({})",
                agent.as_str(),
                program.display(),
                path.display()
            );
        }
    }
    text
}

fn current_dir() -> Result<PathBuf, Failure> {
    std::env::current_dir()
        .map_err(|e| Failure::from(anyhow::anyhow!("cannot read the current directory: {e}")))
}

/// Resolves the roots: explicit ones must exist and be directories; defaults (from the layout)
/// may be missing (an empty scope). Catalogs are kept under the memrecall home, never inside a
/// root (see [`layout::catalog_store`]); a settings file the layout ignored is said on stderr.
pub(crate) fn resolve_roots(args: &RootArgs) -> Result<RecallRoots, Failure> {
    let defaults = if args.project.is_none() || args.user.is_none() {
        let env = Environment::from_process();
        let resolved = layout::resolve(args.layout, &current_dir()?, &env)
            .map_err(|e| Failure::root(e.to_string()))?;
        for ignored in &resolved.ignored {
            eprintln!("memrecall: ignored: {}", crate::output::one_line(ignored));
        }
        let mut defaults = resolved.recall_roots(env.memrecall_home().as_deref());
        // An explicit root replaces its default, whoever chose that.
        if args.project.is_some() {
            defaults.project = None;
        }
        if args.user.is_some() {
            defaults.user = None;
        }
        Some(defaults)
    } else {
        None
    };
    let pick = |given: &Option<PathBuf>, default: Option<PathBuf>, scope: &str| match given {
        Some(dir) => check_root(dir, scope).map(Some),
        None => Ok(default),
    };
    Ok(RecallRoots {
        project: pick(
            &args.project,
            defaults.as_ref().and_then(|d| d.project.clone()),
            "project",
        )?,
        user: pick(
            &args.user,
            defaults.as_ref().and_then(|d| d.user.clone()),
            "user",
        )?,
        catalogs: defaults.map_or_else(
            || layout::catalog_store(Environment::from_process().memrecall_home().as_deref()),
            |d| d.catalogs,
        ),
    })
}

fn check_root(dir: &Path, scope: &str) -> Result<PathBuf, Failure> {
    let absolute = std::path::absolute(dir)
        .map_err(|e| Failure::root(format!("{scope} root {}: {e}", dir.display())))?;
    match std::fs::read_dir(&absolute) {
        Ok(_) => Ok(absolute),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Failure::root(format!(
            "{scope} root {} does not exist (pass an existing directory with --{scope})",
            dir.display()
        ))),
        Err(e) => Err(Failure::root(format!(
            "{scope} root {} cannot be read: {e}",
            dir.display()
        ))),
    }
}
