//! Starting a root's cache from its persistent catalog, and writing the catalog back.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[cfg(doc)]
use lexical_score::PreparedText;
use lexical_score::QueryTokens;

use super::{DocumentCache, RootCache, Started};
use crate::catalog::{self, CatalogStore};
use crate::document::Scope;
use crate::engine::{Directories, MemoryRoots, PriorListings, Walked, list_scopes};
use crate::entry::{Entries, path_order};
use crate::error::CatalogRejection;
use crate::lock;
use crate::report::{CatalogLoad, CatalogOutcome, CatalogWrite, ScanError};

impl DocumentCache {
    /// Lists the roots while the roots in `starting` are started (from their catalogs). On the
    /// listing side, a starting root's catalog first offers its directory listings to the walk;
    /// on the other, its entries are read and decoded. The two parts are checked independently.
    pub(super) fn list_while_starting(
        &self,
        roots: &MemoryRoots,
        starting: Vec<(usize, Scope, PathBuf)>,
        mut priors: [Option<PriorListings>; 2],
        stable_before: i64,
        query: Option<&QueryTokens>,
    ) -> (Result<Walked, ScanError>, Vec<(usize, Started)>) {
        let opened: Vec<_> = starting
            .into_iter()
            .map(|(slot, scope, root)| {
                let catalog = match &self.catalogs {
                    Some((store, read)) => {
                        catalog::open(&store.location(&root), *read).map_err(Arc::new)
                    }
                    None => Ok(None),
                };
                (slot, scope, root, catalog)
            })
            .collect();
        // While a catalog is decoded, the other core takes the keys of its root's listed files,
        // which the visit would otherwise take after the decoding. (The files of a root without
        // a catalog are all read, and reading needs no key taken before.)
        let keys_early: Vec<Scope> = opened
            .iter()
            .filter(|(_, _, _, catalog)| matches!(catalog, Ok(Some(_))))
            .map(|(_, scope, _, _)| *scope)
            .collect();
        crate::par::join(
            || {
                for (slot, _, _, catalog) in &opened {
                    let directories = match catalog {
                        Ok(Some(opened)) => opened.directories().unwrap_or_else(|rejection| {
                            tracing::debug!(%rejection, "catalog directory listings ignored");
                            Directories::new()
                        }),
                        _ => Directories::new(),
                    };
                    priors[*slot] = Some(PriorListings {
                        directories,
                        stable_before,
                        changes: None,
                    });
                }
                list_scopes(roots, priors).map(|mut walked| {
                    walked.take_keys(|scope| keys_early.contains(&scope));
                    walked
                })
            },
            || {
                opened
                    .iter()
                    .map(|(slot, scope, root, catalog)| {
                        let started = self.start_root(root.clone(), *scope, catalog, query);
                        (*slot, started)
                    })
                    .collect::<Vec<_>>()
            },
        )
    }

    /// Writes the catalog of every root whose entries changed since its catalog was read or
    /// written. Does nothing for a cache built without catalogs.
    ///
    /// Blocking, and meant to run off the recall's critical path (after the fast result is
    /// published). A root whose state directory cannot be written (a read-only tree) is reported
    /// and tried again after the next scan; recall is unaffected.
    pub fn persist_catalogs(&self) -> Vec<CatalogWrite> {
        self.persist_catalogs_with(&mut |location, entries, directories| {
            catalog::save(location, entries, directories)
        })
    }

    /// [`DocumentCache::persist_catalogs`], each catalog written by `save`.
    pub(crate) fn persist_catalogs_with(
        &self,
        save: &mut catalog::SaveFn<'_>,
    ) -> Vec<CatalogWrite> {
        let Some((store, _)) = &self.catalogs else {
            return Vec::new();
        };
        let _writing = lock(&self.writing);
        let (project_root, snapshots): (Option<PathBuf>, Vec<(Scope, PathBuf, _)>) = {
            let mut scopes = lock(&self.scopes);
            // The project root counts whether or not its cache changed: a user scope naming the
            // same root must not write over the project's catalog when only the user scope is dirty.
            let project_root = scopes[0].as_ref().map(|cache| cache.root.clone());
            let snapshots = [Scope::Project, Scope::User]
                .into_iter()
                .zip(scopes.iter_mut())
                .filter_map(|(scope, slot)| {
                    let cache = slot.as_mut().filter(|cache| cache.dirty)?;
                    cache.dirty = false;
                    let snapshot = (cache.entries.clone(), cache.directories.clone());
                    Some((scope, cache.root.clone(), snapshot))
                })
                .collect();
            (project_root, snapshots)
        };
        let same_root = |a: &Path, b: &Path| {
            fs::canonicalize(a)
                .ok()
                .is_some_and(|a| fs::canonicalize(b).ok() == Some(a))
        };
        snapshots
            .into_iter()
            // The same root given for both scopes has one catalog, the project scope's: the user
            // scope recalls none of its files (see the engine's overlap rule).
            .filter(|(scope, root, _)| {
                *scope == Scope::Project
                    || !project_root
                        .as_deref()
                        .is_some_and(|project| same_root(project, root))
            })
            .map(|(scope, root, (entries, directories))| {
                let outcome = match save(&store.location(&root), &entries, &directories) {
                    Ok(written) => {
                        if matches!(store, CatalogStore::Under(_)) {
                            forget_in_root_catalog(&root);
                        }
                        Ok(written)
                    }
                    Err(error) => {
                        self.mark_dirty(&root);
                        Err(Arc::new(error))
                    }
                };
                CatalogWrite {
                    scope,
                    path: store.catalog_path(&root),
                    outcome,
                }
            })
            .collect()
    }

    /// A root's cache as this scan starts it: from its catalog's entries when `catalog` (already
    /// opened, `None` without catalogs or when there is none) decodes.
    pub(super) fn start_root(
        &self,
        root: PathBuf,
        scope: Scope,
        catalog: &Result<Option<catalog::Opened>, Arc<CatalogRejection>>,
        query: Option<&QueryTokens>,
    ) -> Started {
        let mut cache = RootCache {
            root,
            entries: Entries::new(),
            directories: Directories::new(),
            dirty: self.catalogs.is_some(),
            complete: false,
        };
        let Some((store, _)) = &self.catalogs else {
            return (cache, None);
        };
        let loaded = match catalog {
            Ok(Some(opened)) => opened
                .entries(&cache.root, scope, query)
                .map(Some)
                .map_err(Arc::new),
            Ok(None) => Ok(None),
            Err(rejection) => Err(Arc::clone(rejection)),
        };
        let outcome = match loaded {
            Ok(Some(mut entries)) => {
                let loaded = entries.len();
                // Written in listing order; sorted here should another writer have used another.
                if !entries.is_sorted_by(|a, b| path_order(a, b).is_le()) {
                    entries.sort_by(path_order);
                }
                cache.entries = entries;
                cache.dirty = false;
                CatalogOutcome::Loaded { entries: loaded }
            }
            Ok(None) => CatalogOutcome::Missing,
            Err(reason) => {
                tracing::debug!(root = %cache.root.display(), %reason, "catalog ignored");
                CatalogOutcome::Rejected { reason }
            }
        };
        let load = CatalogLoad {
            scope,
            path: store.catalog_path(&cache.root),
            outcome,
        };
        (cache, Some(load))
    }
}

/// Removes the catalog an earlier writer kept inside `root`, now that one is kept elsewhere.
fn forget_in_root_catalog(root: &Path) {
    let outcome = crate::state_dir::remove_in_root_catalog(root);
    if let Err(error) = &outcome {
        tracing::debug!(root = %root.display(), %error, "cannot remove an in-root catalog");
    } else if outcome.is_ok_and(|removed| removed) {
        tracing::debug!(root = %root.display(), "removed an in-root catalog");
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::fs;
    use std::time::{Duration, SystemTime};

    use std::sync::Arc;

    use crate::document::{Document, ScannedDocument};
    use crate::entry::{CacheEntry, Verdict};
    use crate::key::FileKey;
    use crate::report::SkipReason;

    use super::*;

    use crate::topic::parse_topic;

    /// A root holding `a.md` titled "Current" and a catalog whose entry for it carries the file's
    /// exact key but a stale document titled "Stale": the same-tick rewrite the key cannot see.
    fn root_with_stale_catalog_entry(stable: bool) -> (tempfile::TempDir, MemoryRoots) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.md");
        fs::write(&path, "---\nname: Current\ntype: user\n---\n").unwrap();
        let key = FileKey::from_metadata(&fs::metadata(&path).unwrap());
        let stale = parse_topic("---\nname: Stale\ntype: user\n---\n").unwrap();
        let document = Document::from_scan(
            Scope::Project,
            path,
            PathBuf::from("a.md"),
            stale,
            SystemTime::UNIX_EPOCH,
        );
        let entry = CacheEntry {
            key,
            stable,
            verdict: Verdict::Document(Arc::new(ScannedDocument::new(document))),
        };
        catalog::save_in_root(
            dir.path(),
            &[(OsString::from("a.md"), entry)],
            &Directories::new(),
        )
        .unwrap();
        let roots = MemoryRoots {
            project: Some(dir.path().to_path_buf()),
            user: None,
        };
        (dir, roots)
    }

    #[test]
    fn transient_skip_verdicts_are_left_out_of_the_catalog_and_the_rest_loads() {
        let (dir, _roots) = root_with_stale_catalog_entry(true);
        let transient = CacheEntry {
            key: FileKey {
                device: 1,
                inode: 2,
                size: 3,
                mtime_ns: 4,
                ctime_ns: 5,
            },
            stable: true,
            verdict: Verdict::Skipped(SkipReason::Unreadable {
                error: "input/output error".into(),
            }),
        };
        let (mut entries, directories) =
            catalog::load(dir.path(), Scope::Project).unwrap().unwrap();
        entries.push((OsString::from("flaky.md"), transient));

        let written = catalog::save_in_root(dir.path(), &entries, &directories).unwrap();
        let (loaded, _) = catalog::load(dir.path(), Scope::Project).unwrap().unwrap();

        assert_eq!(written, 1);
        assert_eq!(loaded.len(), 1);
        assert_eq!(loaded[0].0, OsString::from("a.md"));
    }

    /// Dates the paths in `stable` and `root` itself an hour back, writes the root's catalog, and
    /// returns the roots with what the catalog holds.
    #[cfg(unix)]
    fn catalog_of_stable(root: &Path, stable: &[PathBuf]) -> (MemoryRoots, Entries, Directories) {
        let hour_ago = SystemTime::now() - Duration::from_hours(1);
        for path in stable.iter().map(PathBuf::as_path).chain([root]) {
            fs::File::open(path)
                .unwrap()
                .set_modified(hour_ago)
                .unwrap();
        }
        let roots = MemoryRoots {
            project: Some(root.to_path_buf()),
            user: None,
        };
        let writer = DocumentCache::with_catalog();
        writer.scan_recall(&roots).unwrap();
        writer.persist_catalogs();
        let (entries, directories) = catalog::load(root, Scope::Project).unwrap().unwrap();
        (roots, entries, directories)
    }

    // Directory listings are remembered on Unix only (elsewhere every scan lists each directory).
    #[cfg(unix)]
    #[test]
    fn catalog_listings_naming_a_path_instead_of_a_name_are_ignored() {
        use crate::engine::EntryKind;
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join(".memrecall")).unwrap();
        fs::create_dir(dir.path().join("a")).unwrap();
        fs::write(dir.path().join("a/x.md"), "---\ntype: user\n---\n").unwrap();
        let (roots, entries, mut directories) = catalog_of_stable(
            dir.path(),
            &[dir.path().join("a/x.md"), dir.path().join("a")],
        );
        let root_listing = directories
            .get_mut(Path::new(""))
            .expect("root listing kept");
        // `a/` would walk `a` a second time.
        root_listing
            .entries
            .push((OsString::from("a/"), EntryKind::Directory));
        catalog::save_in_root(dir.path(), &entries, &directories).unwrap();

        let cache = DocumentCache::with_catalog();
        let scan = cache.scan_recall(&roots).unwrap();

        assert_eq!(scan.report.listings_reused, 0);
        assert_eq!(scan.documents.len(), 1);
        // The listings the walk made replace them in the next catalog.
        cache.persist_catalogs();
        let (_, directories) = catalog::load(dir.path(), Scope::Project).unwrap().unwrap();
        assert_eq!(directories[Path::new("")].entries.len(), 1);
    }

    /// A listing that calls a symlink a file (a catalog no walk wrote) must not lead the scan to
    /// read through it: here to a topic outside the root.
    #[cfg(unix)]
    #[test]
    fn symlink_a_stored_listing_calls_a_file_is_not_read_through() {
        use crate::engine::EntryKind;
        let outside = tempfile::tempdir().unwrap();
        fs::write(
            outside.path().join("secret.md"),
            "---\ntype: user\n---\nThe vault code is 4711.\n",
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join(".memrecall")).unwrap();
        fs::write(dir.path().join("a.md"), "---\ntype: user\n---\nInside.\n").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), dir.path().join("link.md"))
            .unwrap();
        // A directory holding a topic symlink is never remembered; forge its listing.
        let (roots, entries, mut directories) =
            catalog_of_stable(dir.path(), &[dir.path().join("a.md")]);
        let key = FileKey::from_metadata(&fs::metadata(dir.path()).unwrap());
        let forged = crate::engine::DirectoryListing {
            key,
            stable: true,
            entries: vec![
                (OsString::from("a.md"), EntryKind::File),
                (OsString::from("link.md"), EntryKind::File),
            ],
        };
        directories.insert(PathBuf::new(), forged);
        catalog::save_in_root(dir.path(), &entries, &directories).unwrap();

        let scan = DocumentCache::with_catalog().scan_recall(&roots).unwrap();

        assert_eq!(scan.report.listings_reused, 1);
        assert!(scan.documents.iter().all(|d| !d.body().contains("4711")));
        let link = scan
            .report
            .skipped
            .iter()
            .find(|s| s.path.ends_with("link.md"))
            .expect("the symlink is reported");
        assert_eq!(link.reason, SkipReason::NotAFile);
    }

    #[test]
    fn a_catalog_written_in_byte_order_is_reused_in_full() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("a")).unwrap();
        let mut entries = Vec::new();
        for relative in ["a/b.md", "a-b.md"] {
            let path = dir.path().join(relative);
            fs::write(&path, "---\ntype: user\n---\n").unwrap();
            let file = fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(SystemTime::now() - Duration::from_hours(1))
                .unwrap();
            let key = FileKey::from_metadata(&fs::metadata(&path).unwrap());
            let topic = parse_topic("---\ntype: user\n---\n").unwrap();
            let document = Document::from_scan(
                Scope::Project,
                path,
                PathBuf::from(relative),
                topic,
                SystemTime::UNIX_EPOCH,
            );
            let verdict = Verdict::Document(Arc::new(ScannedDocument::new(document)));
            entries.push((
                OsString::from(relative),
                CacheEntry {
                    key,
                    stable: true,
                    verdict,
                },
            ));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(entries[0].0, OsString::from("a-b.md"));
        catalog::save_in_root(dir.path(), &entries, &Directories::new()).unwrap();
        let roots = MemoryRoots {
            project: Some(dir.path().to_path_buf()),
            user: None,
        };

        let scan = DocumentCache::with_catalog().scan_recall(&roots).unwrap();

        assert_eq!((scan.report.from_catalog, scan.report.reread), (2, 0));
    }

    #[test]
    fn unstable_catalog_entry_is_read_again_even_when_its_key_matches() {
        let (_dir, roots) = root_with_stale_catalog_entry(false);

        let scan = DocumentCache::with_catalog().scan_recall(&roots).unwrap();

        assert_eq!(scan.documents[0].title(), "Current");
        assert_eq!((scan.report.reread, scan.report.from_catalog), (1, 0));
    }

    #[test]
    fn stable_catalog_entry_is_trusted_on_its_key_alone() {
        let (_dir, roots) = root_with_stale_catalog_entry(true);

        let scan = DocumentCache::with_catalog().scan_recall(&roots).unwrap();

        assert_eq!(scan.documents[0].title(), "Stale");
        assert_eq!((scan.report.reread, scan.report.from_catalog), (0, 1));
    }

    #[test]
    fn a_catalog_decodes_the_same_from_memory_as_from_its_file() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.md", "b.md", "notes.md"] {
            let text = format!("---\nname: {name}\ntype: user\n---\n\nbody of {name}\n");
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let roots = MemoryRoots {
            project: Some(dir.path().to_path_buf()),
            user: None,
        };
        let cache = DocumentCache::with_catalog();
        cache.scan_recall(&roots).unwrap();
        cache.persist_catalogs();
        let bytes = std::fs::read(catalog::catalog_path(dir.path())).unwrap();

        let from_file = catalog::load(dir.path(), Scope::Project)
            .unwrap()
            .unwrap()
            .0
            .len();

        assert_eq!(catalog::decode_bytes(&bytes).unwrap(), from_file);
        assert_eq!(from_file, 3);
        assert!(matches!(
            catalog::decode_bytes(&bytes[..bytes.len() - 1]),
            Err(crate::CatalogRejection::Damaged { .. })
        ));
    }
}
