//! `memrecall uninstall`: every hook entry memrecall wrote taken out (each settings file given
//! back as it was when it did not change since), the registrations memrecall did not write
//! named with the agent's own command, the server stopped, the catalogs of the current
//! directory's roots and memrecall's directories removed; the user's notes only when they say
//! so.

use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use clap::Args;

use super::install::uninstall_file;
use super::{Failure, emit};
use agent_hooks::agent_files;
use agent_hooks::settings;
use agent_hooks::{Agent, Environment, Layout, layout};

/// The folders of memrecall's home that hold the user's notes.
const NOTES: [&str; 2] = ["memories", "projects"];

#[derive(Debug, Args)]
pub(crate) struct UninstallArgs {
    /// Keep the notes in MEMRECALL_HOME/memories and MEMRECALL_HOME/projects without asking
    /// (what happens without a terminal to ask on).
    #[arg(long, conflicts_with = "delete_notes")]
    pub(crate) keep_notes: bool,
    /// Delete the notes too, without asking.
    #[arg(long)]
    pub(crate) delete_notes: bool,
}

pub(crate) fn run(args: &UninstallArgs) -> Result<(), Failure> {
    let env = Environment::from_process();
    let mut report = Report::default();
    remove_hooks(&env, &mut report);
    name_registrations(&env, &mut report);
    emit(&std::mem::take(&mut report.text))?;
    if let Err(failure) = super::server::run_stop() {
        report.problem(format!("cannot stop the server: {}", failure.message));
    }
    remove_catalogs(&env, &mut report);
    remove_directories(&env, args, &mut report);
    emit(&report.text)?;
    if report.problems == 0 {
        Ok(())
    } else {
        Err(Failure::from(anyhow::anyhow!(
            "{} thing(s) could not be removed (above)",
            report.problems
        )))
    }
}

#[derive(Default)]
struct Report {
    text: String,
    problems: usize,
}

impl Report {
    fn say(&mut self, line: impl std::fmt::Display) {
        let _ = writeln!(self.text, "{line}");
    }

    fn problem(&mut self, line: impl std::fmt::Display) {
        self.problems += 1;
        self.say(line);
    }
}

fn remove_hooks(env: &Environment, report: &mut Report) {
    for path in settings::installed_files(env) {
        let Some(agent) = settings::agent_of(&path, env) else {
            report.problem(format!(
                "left {}: install changed it, but it is no agent's settings file",
                path.display()
            ));
            continue;
        };
        match uninstall_file(agent, &path, None, env) {
            Ok(Some(removed)) => report.say(removed.trim_end()),
            Ok(None) => {}
            Err(failure) => report.problem(failure.message),
        }
    }
}

/// Names the plugins, extensions and MCP registrations memrecall finds but did not write, each
/// with the agent's command that removes it; the agents themselves are not run.
fn name_registrations(env: &Environment, report: &mut Report) {
    let lines: Vec<String> = Agent::ALL
        .into_iter()
        .flat_map(|agent| agent_files::own_registrations(agent, env))
        .collect();
    if !lines.is_empty() {
        report.say("the agents registered memrecall themselves; remove those registrations with:");
        for line in lines {
            report.say(format_args!("  {line}"));
        }
    }
}

/// Removes `path`, a directory or a file, when it is there; says so.
fn remove(path: &Path, report: &mut Report) {
    let Ok(metadata) = std::fs::symlink_metadata(path) else {
        return;
    };
    let result = if metadata.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    };
    match result {
        Ok(()) => report.say(format_args!("removed {}", path.display())),
        Err(e) => report.problem(format_args!("cannot remove {}: {e}", path.display())),
    }
}

/// Removes the catalogs kept inside the current directory's roots, for every layout, and those
/// of the notes under memrecall's home.
fn remove_catalogs(env: &Environment, report: &mut Report) {
    let mut roots = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        for &which in <Layout as clap::ValueEnum>::value_variants() {
            if let Ok(resolved) = layout::resolve(which, &cwd, env) {
                roots.extend(resolved.project.path);
                roots.extend(resolved.user.path);
            }
        }
    }
    if let Some(home) = env.memrecall_home() {
        roots.push(home.join("memories"));
        if let Ok(projects) = std::fs::read_dir(home.join("projects")) {
            roots.extend(projects.flatten().map(|p| p.path().join("memory")));
        }
    }
    roots.sort();
    roots.dedup();
    for root in roots {
        remove_catalog_dir(&root.join(memory_scan::CATALOG_DIR_NAME), report);
    }
}

/// Removes a root's catalog directory: the catalog (and a temporary file of one being written),
/// then the directory once that leaves it empty. A directory holding anything else, or a
/// symlink in its place, is left as it is.
fn remove_catalog_dir(dir: &Path, report: &mut Report) {
    if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        report.problem(format_args!("cannot read {}", dir.display()));
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        // The catalog, and `catalog.tmp-…` of one being written.
        let is_catalog = name
            .to_string_lossy()
            .starts_with(memory_scan::CATALOG_FILE_NAME);
        if is_catalog
            && entry.file_type().is_ok_and(|t| t.is_file())
            && let Err(e) = std::fs::remove_file(entry.path())
        {
            report.problem(format_args!(
                "cannot remove {}: {e}",
                entry.path().display()
            ));
        }
    }
    match std::fs::remove_dir(dir) {
        Ok(()) => report.say(format_args!("removed {}", dir.display())),
        Err(_) => report.problem(format_args!(
            "left {}: it holds files that are not memrecall's catalog",
            dir.display()
        )),
    }
}

/// Whether the notes go: the flag, else the answer on a terminal, else no.
fn delete_notes(args: &UninstallArgs, notes: &[PathBuf], report: &mut Report) -> bool {
    if args.delete_notes || notes.is_empty() {
        return true;
    }
    if args.keep_notes {
        return false;
    }
    let listed = notes
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" and ");
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        report.say(format_args!(
            "kept your notes in {listed} (no terminal to ask on: pass --delete-notes to remove them too)"
        ));
        return false;
    }
    eprint!("memrecall: delete your notes in {listed} too? [y/N] ");
    let mut answer = String::new();
    let yes = std::io::stdin().read_line(&mut answer).is_ok()
        && matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes");
    if !yes {
        report.say(format_args!("kept your notes in {listed}"));
    }
    yes
}

/// Removes memrecall's home (all of it but the notes, unless they go too) and the server's run
/// directory. A home that holds the user's home directory is left alone.
fn remove_directories(env: &Environment, args: &UninstallArgs, report: &mut Report) {
    let run_dir = recall_server::ServerPaths::from_env(env).map(|paths| paths.dir);
    let Some(home) = env.memrecall_home() else {
        if let Some(dir) = run_dir {
            remove(&dir, report);
        }
        return;
    };
    if let Some(dir) = run_dir.filter(|dir| !dir.starts_with(&home)) {
        remove(&dir, report);
    }
    if env.home().is_some_and(|user| user.starts_with(&home)) {
        report.problem(format_args!(
            "left {}: MEMRECALL_HOME holds your home directory; remove memrecall's files from it by hand",
            home.display()
        ));
        return;
    }
    let Ok(entries) = std::fs::read_dir(&home) else {
        return;
    };
    let notes: Vec<PathBuf> = NOTES
        .iter()
        .map(|name| home.join(name))
        .filter(|path| path.exists())
        .collect();
    let delete_notes = delete_notes(args, &notes, report);
    for entry in entries.flatten() {
        let is_notes = NOTES.iter().any(|name| entry.file_name() == *name);
        if delete_notes || !is_notes {
            remove(&entry.path(), report);
        }
    }
    if delete_notes {
        match std::fs::remove_dir(&home) {
            Ok(()) => report.say(format_args!("removed {}", home.display())),
            Err(e) => report.problem(format_args!("cannot remove {}: {e}", home.display())),
        }
    }
}
