//! Memory stays where its owner put it: nothing outside a root is read, however the tree changes
//! during a scan, and the catalog is as private as the memories it copies and lands only under
//! its root.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use memory_scan::{
    CatalogOutcome, CatalogRejection, CatalogWriteError, DocumentCache, SkipReason, StateDirError,
    catalog_path,
};

use crate::support::{Tree, setpriv_as_root, topic, write, write_topic};

/// The marker only the outside file holds.
const OUTSIDE: &str = "OUTSIDE-SECRET";

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

/// Flips `link` between `inside` and `outside` until `stop`; returns how many flips were made.
fn flip(link: &Path, inside: &Path, outside: &Path, stop: &AtomicBool) -> usize {
    let next = link.with_extension("next");
    let mut flips = 0;
    while !stop.load(Ordering::Relaxed) {
        let target = if flips % 2 == 0 { outside } else { inside };
        let _ = fs::remove_file(&next);
        symlink(target, &next).unwrap();
        fs::rename(&next, link).unwrap();
        flips += 1;
    }
    flips
}

/// Runs scans (fresh and cached, with and without a catalog) while another thread flips `link`;
/// returns how many documents carried the outside marker, and how many scans and flips ran.
fn scans_while_flipping(tree: &Tree, link: &Path, inside: &Path, outside: &Path) -> usize {
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let (stop, link, inside, outside) = (
            Arc::clone(&stop),
            link.to_path_buf(),
            inside.to_path_buf(),
            outside.to_path_buf(),
        );
        std::thread::spawn(move || flip(&link, &inside, &outside, &stop))
    };
    let (mut leaks, mut scans) = (0, 0);
    let cached = DocumentCache::with_catalog();
    // Bounded by count and by time, whichever ends first; nothing is asserted about time.
    let started = Instant::now();
    while scans < 2_000 && started.elapsed() < Duration::from_secs(3) {
        let fresh = DocumentCache::new();
        for cache in [&fresh, &cached] {
            let scan = cache.scan_recall(&tree.project_only()).unwrap();
            leaks += scan
                .documents
                .iter()
                .filter(|d| d.body().contains(OUTSIDE) || d.title().contains(OUTSIDE))
                .count();
            scans += 1;
        }
        cached.persist_catalogs();
    }
    stop.store(true, Ordering::Relaxed);
    let flips = flipper.join().unwrap();
    assert!(flips > 0 && scans > 0, "the race did not run");
    eprintln!("{scans} scans while the link flipped {flips} times: {leaks} outside reads");
    leaks
}

#[test]
fn a_topic_symlink_flipped_to_an_outside_file_during_scans_never_reads_it() {
    let tree = Tree::new();
    let inside = write(
        &tree.project(),
        "notes/inside.txt",
        topic("user", "Inside", "", "inside"),
    );
    let outside = write(
        tree.dir.path(),
        "elsewhere/secret.md",
        topic("user", OUTSIDE, "", OUTSIDE),
    );
    write_topic(&tree.project(), "a.md");
    let link = tree.project().join("link.md");
    symlink(&inside, &link).unwrap();

    let leaks = scans_while_flipping(&tree, &link, &inside, &outside);

    assert_eq!(leaks, 0);
}

#[test]
fn a_directory_flipped_to_a_symlink_out_of_the_root_during_scans_is_never_read() {
    let tree = Tree::new();
    let inside = tree.project().join("real");
    let outside = tree.dir.path().join("elsewhere");
    write(&inside, "a.md", topic("user", "Inside", "", "inside"));
    write(&outside, "a.md", topic("user", OUTSIDE, "", OUTSIDE));
    let link = tree.project().join("sub");
    symlink(&inside, &link).unwrap();
    // `sub` itself is a symlink to a directory, never walked; a real directory swapped in and
    // out is what the walk would enter.
    fs::remove_file(&link).unwrap();
    fs::create_dir(&link).unwrap();
    write(&link, "a.md", topic("user", "Sub", "", "sub"));

    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, link, outside) = (Arc::clone(&stop), link.clone(), outside.clone());
        std::thread::spawn(move || {
            let parked = link.with_extension("parked");
            let mut swaps = 0usize;
            while !stop.load(Ordering::Relaxed) {
                fs::rename(&link, &parked).unwrap();
                symlink(&outside, &link).unwrap();
                fs::remove_file(&link).unwrap();
                fs::rename(&parked, &link).unwrap();
                swaps += 1;
            }
            swaps
        })
    };
    let mut leaks = 0;
    for _ in 0..1_000 {
        let scan = DocumentCache::new()
            .scan_recall(&tree.project_only())
            .unwrap();
        leaks += scan
            .documents
            .iter()
            .filter(|d| d.body().contains(OUTSIDE))
            .count();
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(swaps > 0);
    eprintln!("1000 scans while the directory was swapped {swaps} times: {leaks} outside reads");

    assert_eq!(leaks, 0);
}

#[test]
fn a_symlinked_directory_leading_out_of_the_root_is_reported_as_skipped() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    write_topic(&tree.user(), "u.md");
    symlink(tree.user(), tree.project().join("shared")).unwrap();
    symlink(
        tree.project().join("a.md"),
        tree.project().join("not-a-dir"),
    )
    .unwrap();

    let scan = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();

    let skipped: Vec<_> = scan
        .report
        .skipped
        .iter()
        .map(|s| (s.path.clone(), s.reason.clone()))
        .collect();
    assert_eq!(
        skipped,
        vec![(
            tree.project().join("shared"),
            SkipReason::SymlinkOutsideRoot
        )]
    );
}

#[test]
fn the_catalog_is_private_whatever_the_umask_gave_its_directory() {
    let tree = Tree::new();
    let secret = write_topic(&tree.project(), "secret.md");
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o600)).unwrap();
    let cache = DocumentCache::with_catalog();
    cache.scan_recall(&tree.project_only()).unwrap();

    let writes = cache.persist_catalogs();

    assert!(writes[0].outcome.is_ok(), "{writes:?}");
    let catalog = catalog_path(&tree.project());
    assert_eq!(mode(&catalog), 0o600);
    assert_eq!(mode(catalog.parent().unwrap()), 0o700);
}

#[test]
fn an_existing_wider_catalog_and_its_directory_are_tightened_when_opened() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    let cache = DocumentCache::with_catalog();
    cache.scan_recall(&tree.project_only()).unwrap();
    cache.persist_catalogs();
    let catalog = catalog_path(&tree.project());
    fs::set_permissions(&catalog, fs::Permissions::from_mode(0o644)).unwrap();
    fs::set_permissions(catalog.parent().unwrap(), fs::Permissions::from_mode(0o755)).unwrap();

    let scan = DocumentCache::with_catalog()
        .scan_recall(&tree.project_only())
        .unwrap();

    assert!(matches!(
        scan.report.catalogs[0].outcome,
        CatalogOutcome::Loaded { .. }
    ));
    assert_eq!(mode(&catalog), 0o600);
    assert_eq!(mode(catalog.parent().unwrap()), 0o700);
}

/// Needs root and `setpriv` to try as another user; elsewhere it says it was not run.
#[test]
fn another_user_cannot_read_the_catalog_of_private_memories() {
    let tree = Tree::new();
    let Some(setpriv) = setpriv_as_root(&tree) else {
        return;
    };
    for dir in [tree.dir.path().to_path_buf(), tree.project()] {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let secret = write(
        &tree.project(),
        "secret.md",
        topic("user", "Secret", "", "the vault key is in the blue folder"),
    );
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o600)).unwrap();
    let cache = DocumentCache::with_catalog();
    cache.scan_recall(&tree.project_only()).unwrap();
    assert!(cache.persist_catalogs()[0].outcome.is_ok());

    let read_as_another_user = |path: &Path| {
        std::process::Command::new(&setpriv)
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "cat"])
            .arg(path)
            .output()
            .unwrap()
    };

    let catalog = read_as_another_user(&catalog_path(&tree.project()));
    assert!(!catalog.status.success());
    assert!(!String::from_utf8_lossy(&catalog.stdout).contains("vault"));
    // The same user can read a file of mode 0644 in the tree: the refusal is the catalog's mode.
    let readable = write_topic(&tree.project(), "public.md");
    fs::set_permissions(&readable, fs::Permissions::from_mode(0o644)).unwrap();
    assert!(read_as_another_user(&readable).status.success());
}

#[test]
fn a_symlinked_state_directory_is_refused_and_nothing_is_written_through_it() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    let elsewhere = tree.dir.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    fs::write(elsewhere.join("catalog"), "precious").unwrap();
    symlink(&elsewhere, tree.project().join(".memrecall")).unwrap();
    let cache = DocumentCache::with_catalog();

    let scan = cache.scan_recall(&tree.project_only()).unwrap();
    let writes = cache.persist_catalogs();

    let CatalogOutcome::Rejected { reason } = &scan.report.catalogs[0].outcome else {
        panic!("loaded through a symlink: {:?}", scan.report.catalogs);
    };
    assert!(
        matches!(
            **reason,
            CatalogRejection::UnsafeState(StateDirError::Symlink { .. })
        ),
        "{reason}"
    );
    let error = writes[0].outcome.as_ref().unwrap_err();
    assert!(
        matches!(
            **error,
            CatalogWriteError::State(StateDirError::Symlink { .. })
        ),
        "{error}"
    );
    assert_eq!(
        fs::read_to_string(elsewhere.join("catalog")).unwrap(),
        "precious"
    );
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 1);
    assert_eq!(scan.documents.len(), 1);
}

#[test]
fn a_symlinked_catalog_file_is_refused_and_its_target_left_alone() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    let elsewhere = tree.dir.path().join("elsewhere");
    fs::write(&elsewhere, "precious").unwrap();
    fs::create_dir(tree.project().join(".memrecall")).unwrap();
    symlink(&elsewhere, catalog_path(&tree.project())).unwrap();
    let cache = DocumentCache::with_catalog();

    let scan = cache.scan_recall(&tree.project_only()).unwrap();
    let writes = cache.persist_catalogs();

    assert!(matches!(
        &scan.report.catalogs[0].outcome,
        CatalogOutcome::Rejected { reason }
            if matches!(**reason, CatalogRejection::UnsafeState(StateDirError::Symlink { .. }))
    ));
    // The write replaces the link itself, never what it points to.
    assert!(writes[0].outcome.is_ok(), "{writes:?}");
    assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "precious");
    assert!(
        fs::symlink_metadata(catalog_path(&tree.project()))
            .unwrap()
            .is_file()
    );
}

#[test]
fn a_state_directory_owned_by_another_user_is_refused() {
    let tree = Tree::new();
    if setpriv_as_root(&tree).is_none() {
        return;
    }
    write_topic(&tree.project(), "a.md");
    let state = tree.project().join(".memrecall");
    fs::create_dir(&state).unwrap();
    std::os::unix::fs::chown(&state, Some(65534), Some(65534)).unwrap();
    let cache = DocumentCache::with_catalog();

    let scan = cache.scan_recall(&tree.project_only()).unwrap();
    let writes = cache.persist_catalogs();

    assert!(matches!(
        &scan.report.catalogs[0].outcome,
        CatalogOutcome::Rejected { reason } if matches!(
            **reason,
            CatalogRejection::UnsafeState(StateDirError::ForeignOwner { owner: 65534, .. })
        )
    ));
    assert!(writes[0].outcome.is_err());
    assert_eq!(fs::read_dir(&state).unwrap().count(), 0);
}
