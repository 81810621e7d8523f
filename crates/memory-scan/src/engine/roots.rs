//! Opening the configured roots and listing them, with the rule for roots that overlap.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::access::{OpenParent, RootDir};
use super::walk::{Walk, walk_root};
use super::{Directories, EarlyKey, MemoryRoots, PriorListings, Root, is_markdown};
use crate::document::Scope;
use crate::report::ScanError;

/// Both roots listed (project first), not yet visited.
pub(crate) struct Walked {
    pub(super) scopes: Vec<(Scope, Walk)>,
    pub(super) warnings: Vec<String>,
}

/// One scope's directory listings after a walk with priors.
pub(crate) struct WalkedDirectories {
    pub(crate) scope: Scope,
    /// The listings the next walk may reuse.
    pub(crate) directories: Directories,
    /// Whether they differ from the remembered ones.
    pub(crate) changed: bool,
    /// How many directories were not listed because their remembered listing held.
    pub(crate) reused: usize,
    /// How many directories were listed from the file system.
    pub(crate) listed: usize,
    /// How many directories were opened to take their key.
    pub(crate) stated: usize,
    /// How many files had their key taken ahead of their visit (see [`Walked::take_keys`]).
    pub(crate) keys_taken: usize,
}

/// Lists every configured root. With `priors` (project, user), a directory whose remembered
/// listing still holds (see [`PriorListings`]) is not listed again, and the walk records the
/// listings it used for the next scan ([`Walked::take_directories`]).
///
/// A missing root is an empty scope; a project root that cannot be listed is an error, a user
/// root that cannot be listed is a warning.
pub(crate) fn list_scopes(
    roots: &MemoryRoots,
    priors: [Option<PriorListings>; 2],
) -> Result<Walked, ScanError> {
    let mut walked_scopes = Walked {
        scopes: Vec::with_capacity(2),
        warnings: Vec::new(),
    };
    let [project_prior, user_prior] = priors;
    let mut project_root = None;
    for (scope, root, prior) in [
        (Scope::Project, &roots.project, project_prior),
        (Scope::User, &roots.user, user_prior),
    ] {
        let Some(root) = root else { continue };
        let walked = open_root(root).and_then(|opened| match opened {
            Some(opened) => walk_root(scope, &opened, prior).map(|walked| Some((opened, walked))),
            None => Ok(None),
        });
        match walked {
            Ok(Some((opened, mut walked))) => {
                match (scope, &project_root) {
                    (Scope::Project, _) => project_root = Some(opened),
                    (Scope::User, Some(project)) => {
                        if let Some(warning) =
                            drop_files_of_the_project(project, &opened, &mut walked, &walked_scopes)
                        {
                            walked_scopes.warnings.push(warning);
                        }
                    }
                    (Scope::User, None) => {}
                }
                walked_scopes.scopes.push((scope, walked));
            }
            Ok(None) => {}
            Err(source) if scope == Scope::Project => {
                return Err(ScanError::ProjectRoot {
                    path: root.clone(),
                    source,
                });
            }
            Err(error) => walked_scopes.warnings.push(format!(
                "cannot read user memory root {}: {error}; recalling from the project scope only",
                root.display()
            )),
        }
    }
    Ok(walked_scopes)
}

/// A document's identity is its absolute path, so a file both roots reach (the same root given
/// twice, or one root inside the other) is one document, in the project scope: drops from the
/// user scope's `walk` every file the project's walk (in `walked`) already holds, and says so.
fn drop_files_of_the_project(
    project: &Root,
    user: &Root,
    walk: &mut Walk,
    walked: &Walked,
) -> Option<String> {
    let overlapping = project.canonical.starts_with(&user.canonical)
        || user.canonical.starts_with(&project.canonical);
    if !overlapping {
        return None;
    }
    let (_, project_walk) = walked
        .scopes
        .iter()
        .find(|(scope, _)| *scope == Scope::Project)?;
    let in_project: std::collections::HashSet<PathBuf> = project_walk
        .candidates
        .iter()
        .map(|candidate| project.canonical.join(&candidate.relative))
        .chain(project_walk.skipped.iter().filter_map(|skipped| {
            let relative = skipped.path.strip_prefix(&project.absolute).ok()?;
            Some(project.canonical.join(relative))
        }))
        .collect();
    let candidates_before = walk.candidates.len();
    walk.candidates
        .retain(|candidate| !in_project.contains(&user.canonical.join(&candidate.relative)));
    // `files_seen` counts `*.md` entries, each once; a skipped directory that could not be listed
    // is reported but was not counted, unless its name made it a `*.md` entry too (reported then
    // twice under one path).
    let mut dropped_skips = std::collections::HashSet::new();
    walk.skipped.retain(|skipped| {
        let shared = skipped
            .path
            .strip_prefix(&user.absolute)
            .is_ok_and(|relative| in_project.contains(&user.canonical.join(relative)));
        // The walk's limits are said at an entry they left uncounted.
        let counted = !skipped.reason.is_limit();
        if shared && counted && skipped.path.file_name().is_some_and(is_markdown) {
            dropped_skips.insert(skipped.path.clone());
        }
        !shared
    });
    let dropped = candidates_before - walk.candidates.len() + dropped_skips.len();
    if dropped == 0 {
        return None;
    }
    walk.files_seen = walk.files_seen.saturating_sub(dropped);
    Some(format!(
        "the user memory root {} and the project memory root {} overlap; {dropped} file(s) under both are recalled once, in the project scope",
        user.absolute.display(),
        project.absolute.display()
    ))
}

impl Walked {
    /// What each scope's walk recorded of its directory listings (nothing for a walk without
    /// priors); the walk keeps its candidates.
    pub(crate) fn take_directories(&mut self) -> Vec<WalkedDirectories> {
        self.scopes
            .iter_mut()
            .map(|(scope, walk)| WalkedDirectories {
                scope: *scope,
                directories: std::mem::take(&mut walk.directories),
                changed: walk.directories_changed,
                reused: walk.listings_reused,
                listed: walk.directories_listed,
                stated: walk.directories_stated,
                keys_taken: walk.keys_taken,
            })
            .collect()
    }

    /// Takes the [`FileKey`] of every candidate of the scopes `wanted` picks, now, in parallel.
    /// Worth it only for a scope whose visit will compare most keys with remembered ones while the
    /// CPU has other work (its catalog being decoded): otherwise the visit takes them itself,
    /// where they are needed, and a file read anyway needs none.
    ///
    /// Each thread keeps the directory it is in open (see [`OpenParent`]).
    pub(crate) fn take_keys(&mut self, wanted: impl Fn(Scope) -> bool) {
        for (_, walk) in self.scopes.iter_mut().filter(|(scope, _)| wanted(*scope)) {
            walk.keys_taken += walk.candidates.len();
            crate::par::for_each_init(
                &mut walk.candidates,
                || OpenParent::new(Arc::clone(&walk.root)),
                |parent, candidate| {
                    candidate.early_key = parent
                        .key(&candidate.relative, candidate.symlink)
                        .map_or(EarlyKey::Unavailable, EarlyKey::Taken);
                },
            );
        }
    }
}

/// `None` when the root does not exist.
pub(super) fn open_root(root: &Path) -> io::Result<Option<Root>> {
    let absolute = std::path::absolute(root)?;
    match fs::metadata(&absolute) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
        Ok(metadata) if !metadata.is_dir() => Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            "the memory root is not a directory",
        )),
        Ok(_) => {
            let canonical = fs::canonicalize(&absolute)?;
            Ok(Some(Arc::new(RootDir::open(absolute, canonical)?)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_taken_early_only_for_the_scopes_asked_for() {
        let (project, user) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for dir in [&project, &user] {
            fs::write(dir.path().join("a.md"), "---\ntype: user\n---\n").unwrap();
        }
        let roots = MemoryRoots {
            project: Some(project.path().to_path_buf()),
            user: Some(user.path().to_path_buf()),
        };
        let mut walked = list_scopes(&roots, [None, None]).unwrap();

        walked.take_keys(|scope| scope == Scope::User);

        let early: Vec<(Scope, bool)> = walked
            .scopes
            .iter()
            .flat_map(|(scope, walk)| {
                walk.candidates
                    .iter()
                    .map(|c| (*scope, matches!(c.early_key, EarlyKey::Taken(_))))
            })
            .collect();
        assert_eq!(early, vec![(Scope::Project, false), (Scope::User, true)]);
    }
}
