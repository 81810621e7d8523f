//! The layouts the installed hooks read, and notes no installed agent reads: a memory root of any
//! layout for the directory that holds notes while no installed hook reads it is a problem, fixed
//! by moving its notes into the root of the same scope that the first installed layout reads.

use std::path::{Path, PathBuf};

use super::Problem;
use agent_hooks::installed::{self, InstalledHook};
use agent_hooks::{Agent, Environment, Layout, layout, settings};

/// Every layout, for the roots a note may have been written to.
const ALL_LAYOUTS: [Layout; 3] = [Layout::Memrecall, Layout::ClaudeCode, Layout::QwenCode];

/// The layouts whose roots `doctor` shows: those the installed hooks read (of `only`'s hooks
/// when an agent is named), else the named agent's default, else memrecall's; and a problem for
/// each root holding notes that no installed hook reads.
pub(super) fn layouts(
    only: Option<Agent>,
    cwd: &Path,
    env: &Environment,
    problems: &mut Vec<Problem>,
) -> Vec<Layout> {
    let hooks = installed::installed_hooks(cwd, env);
    unread_notes(&installed::layouts(&hooks), cwd, env, problems);
    let shown: Vec<InstalledHook> = hooks
        .into_iter()
        .filter(|hook| only.is_none_or(|agent| hook.agent == agent))
        .collect();
    match installed::layouts(&shown).as_slice() {
        [] => vec![only.map_or(Layout::Memrecall, agent_hooks::default_layout)],
        layouts => layouts.to_vec(),
    }
}

/// A problem for each root of any layout for `cwd` that holds notes and that none of `read`
/// reads; nothing when no hook is installed.
fn unread_notes(read: &[Layout], cwd: &Path, env: &Environment, problems: &mut Vec<Problem>) {
    let Some(&first) = read.first() else {
        return;
    };
    let roots_of = |layout| {
        layout::resolve(layout, cwd, env)
            .ok()
            .map(|resolved| [resolved.project.path, resolved.user.path])
    };
    let read_roots: Vec<PathBuf> = read
        .iter()
        .filter_map(|&layout| roots_of(layout))
        .flatten()
        .flatten()
        .collect();
    let destinations = roots_of(first).unwrap_or_default();
    let mut seen: Vec<PathBuf> = Vec::new();
    for layout in ALL_LAYOUTS {
        let Some(roots) = roots_of(layout) else {
            continue;
        };
        for ((scope, root), destination) in ["project", "user"]
            .into_iter()
            .zip(roots)
            .zip(&destinations)
        {
            let Some(root) = root else { continue };
            if read_roots.contains(&root) || seen.contains(&root) || !root.is_dir() {
                continue;
            }
            seen.push(root.clone());
            let Some((notes @ 1.., _)) = super::setup::scan(&root) else {
                continue;
            };
            let fix = match destination {
                Some(destination) => move_command(&root, destination),
                None => format!(
                    "move them to a root an installed agent reads (`memrecall roots` lists them), or run the hook with --layout {}",
                    layout.as_str()
                ),
            };
            problems.push(Problem::new(
                format!(
                    "{notes} note(s) in {}, the {} layout's {scope} root, which no installed agent reads (they read the {} layout)",
                    root.display(),
                    layout.as_str(),
                    read.iter().map(|l| l.as_str()).collect::<Vec<_>>().join(" and ")
                ),
                fix,
            ));
        }
    }
}

/// The command that moves the notes in `from` into `to`, keeping any file already there.
fn move_command(from: &Path, to: &Path) -> String {
    if cfg!(windows) {
        let quoted = |path: &Path| format!("'{}'", path.display().to_string().replace('\'', "''"));
        format!(
            "New-Item -ItemType Directory -Force {}; Move-Item {} {}",
            quoted(to),
            quoted(&from.join("*")),
            quoted(to)
        )
    } else {
        let to = settings::shell_quoted(to);
        format!(
            "mkdir -p {to} && mv -n {}/* {to}/",
            settings::shell_quoted(from)
        )
    }
}
