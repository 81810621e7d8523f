//! Installing memrecall's hook entry in a settings file and taking it out again, so that an
//! uninstall gives back the bytes the install found when the file did not change since: install
//! keeps a [`record`](super::record) of the file before it (and a backup of the user's own file
//! beside it); uninstall puts those bytes back when the file still holds exactly what install
//! wrote, and otherwise takes out memrecall's entries only.

use std::path::{Path, PathBuf};

use super::{Document, SettingsError, backup_path, read, record, remove_created, write};
use crate::{Agent, Environment};

/// A settings file read and parsed for an install: nothing is written until
/// [`Install::write`], so a file that cannot be read or parsed is refused before anything else
/// is done.
pub struct Install {
    agent: Agent,
    path: PathBuf,
    text: String,
    existed: bool,
    document: Document,
}

/// What [`Install::write`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installed {
    /// The file already ran the hook; nothing was written.
    AlreadyThere,
    /// The entry was written into the file.
    Added {
        /// The backup kept of the user's own file, beside it.
        backup: Option<PathBuf>,
        /// Whether uninstall can give back the file's bytes from before the first install
        /// (`false` without memrecall's home, or when the file held an install made elsewhere
        /// or was edited since).
        restorable: bool,
    },
}

impl Install {
    /// Reads and parses `path`, a settings file of `agent` (missing: an empty one).
    pub fn read(agent: Agent, path: &Path) -> Result<Self, SettingsError> {
        let (text, existed) = read(path)?;
        let document = Document::parse(&text, agent, path)?;
        Ok(Self {
            agent,
            path: path.to_path_buf(),
            text,
            existed,
            document,
        })
    }

    /// Merges memrecall's entry running `command` (which names `program`) into the file and
    /// writes it, keeping a backup of the user's own file beside it and, under memrecall's home
    /// in `env`, the record that lets uninstall give back the bytes it had.
    pub fn write(
        mut self,
        program: &Path,
        command: &str,
        env: &Environment,
    ) -> Result<Installed, SettingsError> {
        let had_entries = !self
            .document
            .memrecall_commands(self.agent, Some(program))
            .is_empty();
        if !self.document.merge(self.agent, command)? {
            return Ok(Installed::AlreadyThere);
        }
        let written = self.document.text();
        // The backup beside the file is of the user's own file, never of an earlier install's.
        let backup = self.existed && !had_entries;
        write(&self.path, &written, self.existed, backup)?;
        let restorable = self.remember(env, had_entries, &written);
        Ok(Installed::Added {
            backup: backup.then(|| backup_path(&self.path)),
            restorable,
        })
    }

    /// Records what install changed in the file (see [`record`]); `false` when uninstall will
    /// not be able to give back the original bytes.
    fn remember(&self, env: &Environment, had_entries: bool, written: &str) -> bool {
        let Some(home) = env.memrecall_home() else {
            return false;
        };
        let settings = absolute(&self.path);
        let original = match record::load(&home, &settings) {
            // Installed again over its own text: the original is still the one kept.
            Some(previous) if previous.installed == record::fingerprint(&self.text) => {
                previous.original
            }
            _ if !had_entries => self.existed.then(|| self.text.clone()),
            // An entry from an install made elsewhere, or a file edited since: no original.
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
}

/// What [`uninstall`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uninstalled {
    /// The file is missing or holds no memrecall hook; nothing changed.
    NothingToRemove,
    /// The file was given back as it was before install.
    Restored,
    /// The file install had created was removed (and its folder, when that was all it held).
    RemovedCreated,
    /// memrecall's entries were taken out and the rest kept.
    EntriesRemoved {
        /// Whether there was a record of the install the file changed since.
        changed_since_install: bool,
    },
}

impl Uninstalled {
    /// Whether the file changed (or went).
    pub const fn changed(self) -> bool {
        !matches!(self, Self::NothingToRemove)
    }
}

/// Gives `path` (a settings file of `agent`) back as it was before install, when it holds
/// exactly what install wrote, or takes out memrecall's entries (those running `program`, when
/// given), keeping the rest as it now is.
pub fn uninstall(
    agent: Agent,
    path: &Path,
    program: Option<&Path>,
    env: &Environment,
) -> Result<Uninstalled, SettingsError> {
    let absolute = absolute(path);
    let home = env.memrecall_home();
    let (text, existed) = read(path)?;
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
        return Ok(Uninstalled::NothingToRemove);
    }
    if let Some(kept) = kept
        .as_ref()
        .filter(|k| k.installed == record::fingerprint(&text))
    {
        let done = if let Some(original) = &kept.original {
            write(path, original, true, false)?;
            let backup = backup_path(path);
            if read(&backup).is_ok_and(|(b, existed)| existed && &b == original) {
                let _ = std::fs::remove_file(&backup);
            }
            Uninstalled::Restored
        } else {
            remove_created(path)?;
            remove_if_empty(path.parent());
            Uninstalled::RemovedCreated
        };
        forget();
        return Ok(done);
    }
    let mut document = Document::parse(&text, agent, path)?;
    if !document.remove(agent, program) {
        return Ok(Uninstalled::NothingToRemove);
    }
    let created = kept.as_ref().is_some_and(|k| k.original.is_none());
    if created && document.is_empty_object() {
        remove_created(path)?;
        remove_if_empty(path.parent());
        forget();
        return Ok(Uninstalled::RemovedCreated);
    }
    write(path, &document.text(), true, false)?;
    forget();
    Ok(Uninstalled::EntriesRemoved {
        changed_since_install: kept.is_some(),
    })
}

/// The settings files install records name (project ones included), then each agent's user
/// settings file: every file an uninstall of everything looks at.
pub fn installed_files(env: &Environment) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = env
        .memrecall_home()
        .map(|home| record::all(&home))
        .unwrap_or_default()
        .into_iter()
        .map(|kept| kept.settings)
        .collect();
    files.sort();
    for agent in Agent::ALL {
        if let Ok(path) = super::settings_path(agent, None, env) {
            let path = absolute(&path);
            if !files.contains(&path) {
                files.push(path);
            }
        }
    }
    files
}

/// The agent whose settings file `path` is: the one whose user settings it is, else the one
/// whose folder and file name it has (a project's settings).
pub fn agent_of(path: &Path, env: &Environment) -> Option<Agent> {
    Agent::ALL
        .into_iter()
        .find(|&agent| super::settings_path(agent, None, env).is_ok_and(|user| user == path))
        .or_else(|| {
            Agent::ALL.into_iter().find(|agent| {
                let conventions = agent.conventions();
                path.file_name()
                    .is_some_and(|f| f == conventions.settings_file)
                    && path
                        .parent()
                        .and_then(Path::file_name)
                        .is_some_and(|d| d == conventions.dot_dir)
            })
        })
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Removes the folder install created a settings file in, when that file was all it held (a
/// folder holding anything else fails to be removed and stays).
fn remove_if_empty(dir: Option<&Path>) {
    if let Some(dir) = dir {
        let _ = std::fs::remove_dir(dir);
    }
}

#[cfg(test)]
mod tests;
