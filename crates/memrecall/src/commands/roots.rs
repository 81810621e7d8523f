//! Memory roots from the command line: `memrecall roots`, and the `--project`/`--user`/`--layout`
//! flags the other commands share.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;

use super::{Failure, emit};
use agent_hooks::layout::RecallRoots;
use agent_hooks::{Agent, Environment, Layout, installed, layout, qwen_code, settings};

#[derive(Debug, Args)]
pub(crate) struct RootsArgs {
    /// Whose memory layout to resolve [default: each layout an installed hook of an agent reads,
    /// else memrecall's].
    #[arg(long, value_enum)]
    layout: Option<Layout>,
    /// The working directory to resolve for [default: the current directory].
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct RootArgs {
    /// Project memory root [default: the layout's for this directory (see --layout); in
    /// memrecall's, $MEMRECALL_HOME/projects/<this directory>/memory].
    #[arg(long, value_name = "DIR")]
    pub(crate) project: Option<PathBuf>,
    /// User memory root [default: the layout's; in memrecall's, $MEMRECALL_HOME/memories, where
    /// MEMRECALL_HOME defaults to ~/.memrecall].
    #[arg(long, value_name = "DIR")]
    pub(crate) user: Option<PathBuf>,
    /// Whose memory layout gives the default roots for this directory [default: the one the
    /// agents' installed hooks read (see `memrecall roots`), else memrecall's].
    #[arg(long, value_enum)]
    pub(crate) layout: Option<Layout>,
}

/// Why a command reads a layout.
enum Why {
    /// The command line named it.
    Given,
    /// No agent runs memrecall's hook: memrecall's own layout.
    NoHook,
    /// The installed hooks that read it, in words.
    Hooks(Vec<String>),
}

/// A layout a command reads, and why.
struct LayoutChoice {
    layout: Layout,
    why: Why,
}

impl LayoutChoice {
    /// The hooks that read it, in words, when they chose it.
    fn readers(&self) -> Option<String> {
        match &self.why {
            Why::Hooks(readers) => Some(readers.join(", ")),
            Why::Given | Why::NoHook => None,
        }
    }
}

/// The layouts to read for `cwd`, the one commands read first: the one given, else each layout
/// an installed hook reads, else memrecall's.
fn layout_choices(given: Option<Layout>, cwd: &Path, env: &Environment) -> Vec<LayoutChoice> {
    if let Some(layout) = given {
        return vec![LayoutChoice {
            layout,
            why: Why::Given,
        }];
    }
    let hooks = installed::installed_hooks(cwd, env);
    if hooks.is_empty() {
        return vec![LayoutChoice {
            layout: Layout::Memrecall,
            why: Why::NoHook,
        }];
    }
    installed::layouts(&hooks)
        .into_iter()
        .map(|layout| LayoutChoice {
            layout,
            why: Why::Hooks(
                hooks
                    .iter()
                    .filter(|hook| hook.layout == layout)
                    .map(installed::InstalledHook::describe)
                    .collect(),
            ),
        })
        .collect()
}

pub(crate) fn run(args: &RootsArgs) -> Result<(), Failure> {
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => current_dir()?,
    };
    let env = Environment::from_process();
    let choices = layout_choices(args.layout, &cwd, &env);
    let mut text = String::new();
    for (i, choice) in choices.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(&layout_text(choice, &cwd, &env)?);
    }
    if let [first, _, ..] = choices.as_slice() {
        let _ = writeln!(
            text,
            "\nrecall, scan and rank read the first layout ({}); --layout chooses another",
            first.layout.as_str()
        );
    }
    text.push_str(&hook_binaries(&env));
    emit(&text)
}

/// One layout's roots for `cwd`, and why each is where it is.
fn layout_text(choice: &LayoutChoice, cwd: &Path, env: &Environment) -> Result<String, Failure> {
    let roots =
        layout::resolve(choice.layout, cwd, env).map_err(|e| Failure::root(e.to_string()))?;
    let show = |choice: &layout::RootChoice| match &choice.path {
        Some(path) if path.is_dir() => format!("{}\n  {}", path.display(), choice.why),
        Some(path) => format!("{} (does not exist yet)\n  {}", path.display(), choice.why),
        None => format!("none\n  {}", choice.why),
    };
    let mut text = format!("layout: {}\n", roots.layout.as_str());
    match &choice.why {
        Why::Given => {}
        Why::NoHook => text.push_str(
            "  no agent runs memrecall's hook, so memrecall's own layout (an installed hook changes this)\n",
        ),
        Why::Hooks(_) => {
            let readers = choice.readers().unwrap_or_default();
            let _ = writeln!(text, "  read by {}", crate::output::one_line(&readers));
        }
    }
    let _ = write!(
        text,
        "cwd: {}\nproject: {}\nuser: {}\n",
        roots.cwd.display(),
        show(&roots.project),
        show(&roots.user),
    );
    if roots.layout == Layout::QwenCode
        && let qwen_code::OwnRecall::On(file) = qwen_code::own_recall(&roots.cwd, env)
    {
        let setting = qwen_code::OWN_RECALL_SETTING.join(".");
        let source = file.map_or_else(
            || "on by default".to_owned(),
            |file| format!("true in {}", file.display()),
        );
        let _ = writeln!(
            text,
            "  Qwen Code delivers these notes itself ({setting} is {source}): memrecall's Qwen Code hook leaves them to it, so each reaches the model once; set it to false for memrecall to deliver them"
        );
    }
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
    Ok(text)
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
        let cwd = current_dir()?;
        let choices = layout_choices(args.layout, &cwd, &env);
        let mut choices = choices.iter();
        let chosen = choices.next().map_or(Layout::Memrecall, |first| {
            if let Some(readers) = first.readers() {
                say_followed(first.layout, &readers, choices.as_slice());
            }
            first.layout
        });
        let resolved =
            layout::resolve(chosen, &cwd, &env).map_err(|e| Failure::root(e.to_string()))?;
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

/// Says on stderr which layout a command follows and which hooks read it, and the other
/// layouts installed hooks read.
fn say_followed(layout: Layout, readers: &str, others: &[LayoutChoice]) {
    let mut line = format!("memrecall: layout {} (read by {readers})", layout.as_str());
    for other in others {
        if let Some(readers) = other.readers() {
            let _ = write!(
                line,
                "; {} is read by {readers}: --layout {} reads it",
                other.layout.as_str(),
                other.layout.as_str()
            );
        }
    }
    eprintln!("{}", crate::output::one_line(&line));
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
