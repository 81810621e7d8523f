//! Real temporary directories watched by the real watcher. Every change is written and then
//! scanned at once: the scan's barrier, not a pause, makes sure its event has come through.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use memory_scan::{DocumentCache, MemoryRoots, RecallScan};
use notify::event::Flag;
use notify::{Event, EventKind};

use super::{FallbackReason, WatchHub, WatchMode, WatchedCache};

fn topic(name: &str, body: &str) -> String {
    format!("---\nname: {name}\ntype: project\n---\n\n{body}\n")
}

fn write(root: &Path, relative: &str, text: &str) -> PathBuf {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, text).unwrap();
    path
}

/// A watched project root holding `a.md`, `b.md` and `notes/c.md`, scanned once (the full scan
/// that starts its watch). `None`, said why, where this machine cannot watch.
fn watched_tree() -> Option<(tempfile::TempDir, MemoryRoots, WatchedCache)> {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.md", &topic("A", "alpha"));
    write(dir.path(), "b.md", &topic("B", "bravo"));
    write(dir.path(), "notes/c.md", &topic("C", "charlie"));
    let roots = MemoryRoots {
        project: Some(dir.path().to_path_buf()),
        user: None,
    };
    let cache = WatchedCache::new();
    let first = cache.scan_recall(&roots).unwrap();
    assert_eq!(first.documents.len(), 3);
    if let WatchMode::FullScan { reason } = &cache.roots()[0].mode {
        eprintln!("not run: this machine cannot watch a temporary directory ({reason})");
        return None;
    }
    Some((dir, roots, cache))
}

/// The documents' paths and titles, and the skipped paths.
fn outcome(scan: &RecallScan) -> (Vec<(PathBuf, String)>, Vec<PathBuf>) {
    (
        scan.documents
            .iter()
            .map(|d| (d.path().to_path_buf(), d.title().to_owned()))
            .collect(),
        scan.report.skipped.iter().map(|s| s.path.clone()).collect(),
    )
}

/// Checks `scan` finds what a fresh cache's full scan finds, stat'ed no file, and opened only
/// the directories it listed again.
fn assert_like_a_full_scan_without_stats(scan: &RecallScan, roots: &MemoryRoots) {
    let full = DocumentCache::new().scan_recall(roots).unwrap();
    assert_eq!(outcome(scan), outcome(&full));
    assert_eq!(scan.report.work.files_stated, 0, "{:?}", scan.report.work);
    let work = scan.report.work;
    assert_eq!(work.directories_stated, work.directories_listed, "{work:?}");
}

// Off Unix every scan lists and checks each directory, so no scan skips an unchanged root.
#[cfg(unix)]
#[test]
fn an_unchanged_root_is_neither_listed_nor_stated() {
    let Some((_dir, roots, cache)) = watched_tree() else {
        return;
    };

    let scan = cache.scan_recall(&roots).unwrap();

    assert_like_a_full_scan_without_stats(&scan, &roots);
    assert_eq!(scan.report.work.directories_listed, 0);
    assert_eq!((scan.report.reread, scan.report.reused), (0, 3));
}

#[test]
fn a_created_topic_is_seen_by_the_next_scan() {
    let Some((dir, roots, cache)) = watched_tree() else {
        return;
    };
    write(dir.path(), "d.md", &topic("D", "delta"));

    let scan = cache.scan_recall(&roots).unwrap();

    assert_like_a_full_scan_without_stats(&scan, &roots);
    assert_eq!(scan.documents.len(), 4);
    assert_eq!(scan.report.reread, 1);
}

#[test]
fn an_edit_in_place_keeping_size_and_mtime_is_seen_by_the_next_scan() {
    let Some((dir, roots, cache)) = watched_tree() else {
        return;
    };
    let path = dir.path().join("b.md");
    let mtime = fs::metadata(&path).unwrap().modified().unwrap();
    let file = fs::File::options().write(true).open(&path).unwrap();
    std::io::Write::write_all(&mut &file, topic("B", "BRAVO").as_bytes()).unwrap();
    file.set_modified(mtime).unwrap();
    drop(file);
    assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), mtime);

    let scan = cache.scan_recall(&roots).unwrap();

    assert_like_a_full_scan_without_stats(&scan, &roots);
    assert_eq!(scan.report.reread, 1);
    let edited = scan.documents.iter().find(|d| d.path() == path).unwrap();
    assert!(edited.body().contains("BRAVO"), "{}", edited.body());
}

#[test]
fn a_renamed_topic_is_seen_under_its_new_name_by_the_next_scan() {
    let Some((dir, roots, cache)) = watched_tree() else {
        return;
    };
    fs::rename(dir.path().join("a.md"), dir.path().join("notes/a2.md")).unwrap();

    let scan = cache.scan_recall(&roots).unwrap();

    assert_like_a_full_scan_without_stats(&scan, &roots);
    let paths: Vec<_> = scan.documents.iter().map(|d| d.path()).collect();
    assert!(paths.contains(&dir.path().join("notes/a2.md").as_path()));
    assert!(!paths.contains(&dir.path().join("a.md").as_path()));
}

#[test]
fn a_deleted_topic_is_gone_from_the_next_scan() {
    let Some((dir, roots, cache)) = watched_tree() else {
        return;
    };
    fs::remove_file(dir.path().join("notes/c.md")).unwrap();

    let scan = cache.scan_recall(&roots).unwrap();

    assert_like_a_full_scan_without_stats(&scan, &roots);
    assert_eq!(scan.documents.len(), 2);
    assert_eq!(scan.report.reread, 0);
}

#[test]
fn a_new_subdirectory_with_topics_is_walked_by_the_next_scan() {
    let Some((dir, roots, cache)) = watched_tree() else {
        return;
    };
    write(dir.path(), "fresh/deeper/e.md", &topic("E", "echo"));
    write(dir.path(), "fresh/f.md", &topic("F", "foxtrot"));

    let scan = cache.scan_recall(&roots).unwrap();

    assert_like_a_full_scan_without_stats(&scan, &roots);
    assert_eq!(scan.documents.len(), 5);
    assert_eq!(scan.report.reread, 2);
}

/// The overflow is injected into the watcher's event path (the handler the watcher's thread
/// calls), as the `notify` crate reports a kernel queue overflow: a real overflow needs more
/// events than the kernel's queue holds, which a test cannot produce reliably.
#[test]
fn an_overflow_falls_back_to_the_stat_path_and_says_so() {
    let Some((dir, roots, cache)) = watched_tree() else {
        return;
    };
    cache
        .hub
        .shared
        .handle(Ok(Event::new(EventKind::Other).set_flag(Flag::Rescan)));
    write(
        dir.path(),
        "notes/lost.md",
        &topic("Lost", "an event the overflow lost"),
    );

    let mode = cache.roots()[0].mode.clone();
    let rescan = cache.scan_recall(&roots).unwrap();
    let after = cache.scan_recall(&roots).unwrap();

    assert!(
        matches!(
            mode,
            WatchMode::FullScan {
                reason: FallbackReason::Overflow
            }
        ),
        "{mode:?}"
    );
    assert!(
        rescan.report.work.directories_stated > 0,
        "{:?}",
        rescan.report.work
    );
    assert_eq!(rescan.documents.len(), 4);
    assert!(matches!(cache.roots()[0].mode, WatchMode::Watching));
    assert_like_a_full_scan_without_stats(&after, &roots);
}

#[test]
fn a_root_that_does_not_exist_is_scanned_the_stat_way_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let roots = MemoryRoots {
        project: Some(dir.path().join("missing")),
        user: None,
    };
    let cache = WatchedCache::new();

    let scan = cache.scan_recall(&roots).unwrap();

    assert!(scan.documents.is_empty());
    let mode = cache.roots()[0].mode.clone();
    assert!(
        matches!(
            mode,
            WatchMode::FullScan {
                reason: FallbackReason::Unwatchable(_) | FallbackReason::WatcherFailed(_)
            }
        ),
        "{mode:?}"
    );
}

#[test]
fn a_root_given_for_both_scopes_sees_a_deletion_in_both() {
    let Some((dir, _, cache)) = watched_tree() else {
        return;
    };
    let both = MemoryRoots {
        project: Some(dir.path().to_path_buf()),
        user: Some(dir.path().to_path_buf()),
    };
    cache.scan_recall(&both).unwrap();
    fs::remove_file(dir.path().join("a.md")).unwrap();

    let scan = cache.scan_recall(&both).unwrap();

    let full = DocumentCache::new().scan_recall(&both).unwrap();
    assert_eq!(outcome(&scan), outcome(&full));
    assert_eq!(scan.documents.len(), 2);
}

#[cfg(target_os = "linux")]
#[test]
fn network_and_fuse_file_systems_are_known_to_report_no_events() {
    assert!(super::mode::remote_file_system(0x6969));
    assert!(super::mode::remote_file_system(0x6573_5546));
    // ext4 and tmpfs report their own changes.
    assert!(!super::mode::remote_file_system(0xEF53));
    assert!(!super::mode::remote_file_system(0x0102_1994));
}

#[test]
fn roots_idle_longer_than_asked_are_unwatched_and_watched_again_when_scanned() {
    let Some((dir, roots, cache)) = watched_tree() else {
        return;
    };
    let later = Instant::now() + Duration::from_hours(1);

    let kept = cache.unwatch_idle_at(Instant::now(), Duration::from_hours(1));
    let dropped = cache.unwatch_idle_at(later, Duration::from_mins(10));
    let listed_after = cache.roots().len();
    write(dir.path(), "g.md", &topic("G", "golf"));
    let rescan = cache.scan_recall(&roots).unwrap();

    assert!(kept.is_empty());
    assert_eq!(dropped, vec![dir.path().to_path_buf()]);
    assert_eq!(listed_after, 0);
    assert_eq!(rescan.documents.len(), 4);
    assert!(rescan.report.work.directories_stated > 0);
    assert!(matches!(cache.roots()[0].mode, WatchMode::Watching));
}

#[test]
fn scans_from_several_threads_take_turns_and_agree() {
    let Some((dir, roots, cache)) = watched_tree() else {
        return;
    };
    let cache = std::sync::Arc::new(cache);
    write(dir.path(), "h.md", &topic("H", "hotel"));

    let scans: Vec<RecallScan> = (0..4)
        .map(|_| {
            let (cache, roots) = (std::sync::Arc::clone(&cache), roots.clone());
            std::thread::spawn(move || cache.scan_recall(&roots).unwrap())
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|thread| thread.join().unwrap())
        .collect();

    for scan in &scans {
        assert_eq!(scan.documents.len(), 4);
        assert_eq!(outcome(scan), outcome(&scans[0]));
    }
}

/// Two caches over one shared watcher, each having scanned `dir` once; `None`, said why, where
/// this machine cannot watch.
fn two_caches_sharing_a_watcher(
    dir: &Path,
) -> Option<(std::sync::Arc<WatchHub>, MemoryRoots, [WatchedCache; 2])> {
    let hub = std::sync::Arc::new(WatchHub::new());
    let roots = MemoryRoots {
        project: Some(dir.to_path_buf()),
        user: None,
    };
    let caches = [(); 2].map(|()| WatchedCache::sharing(DocumentCache::new(), &hub));
    for cache in &caches {
        cache.scan_recall(&roots).unwrap();
        if let WatchMode::FullScan { reason } = &cache.roots()[0].mode {
            eprintln!("not run: this machine cannot watch a temporary directory ({reason})");
            return None;
        }
    }
    Some((hub, roots, caches))
}

#[test]
fn caches_sharing_a_watcher_hold_one_watch_per_root_and_each_sees_every_change() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.md", &topic("A", "alpha"));
    let Some((hub, roots, caches)) = two_caches_sharing_a_watcher(dir.path()) else {
        return;
    };
    write(dir.path(), "b.md", &topic("B", "bravo"));

    let scans = caches
        .each_ref()
        .map(|cache| cache.scan_recall(&roots).unwrap());

    assert_eq!(hub.watched_roots(), 1);
    for scan in &scans {
        assert_like_a_full_scan_without_stats(scan, &roots);
        assert_eq!(scan.documents.len(), 2);
    }
}

#[test]
fn a_cache_dropped_from_a_shared_watcher_leaves_the_others_watching() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.md", &topic("A", "alpha"));
    let Some((hub, roots, [first, second])) = two_caches_sharing_a_watcher(dir.path()) else {
        return;
    };

    drop(first);
    write(dir.path(), "b.md", &topic("B", "bravo"));
    let scan = second.scan_recall(&roots).unwrap();
    let watched_with_one = hub.watched_roots();
    drop(second);

    assert_like_a_full_scan_without_stats(&scan, &roots);
    assert_eq!(scan.documents.len(), 2);
    assert_eq!(watched_with_one, 1);
    assert_eq!(hub.watched_roots(), 0);
}

#[test]
fn a_root_replaced_under_a_shared_watcher_is_watched_again_for_every_cache() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("memory");
    write(&dir, "a.md", &topic("A", "alpha"));
    let Some((hub, roots, caches)) = two_caches_sharing_a_watcher(&dir) else {
        return;
    };
    fs::rename(&dir, parent.path().join("old")).unwrap();
    write(&dir, "c.md", &topic("C", "charlie"));

    let rescans = caches
        .each_ref()
        .map(|cache| cache.scan_recall(&roots).unwrap());
    write(&dir, "d.md", &topic("D", "delta"));
    let after = caches
        .each_ref()
        .map(|cache| cache.scan_recall(&roots).unwrap());

    assert_eq!(hub.watched_roots(), 1);
    for scan in &rescans {
        assert_eq!(outcome(scan).0.len(), 1, "{:?}", outcome(scan));
    }
    for (cache, scan) in caches.iter().zip(&after) {
        assert!(matches!(cache.roots()[0].mode, WatchMode::Watching));
        assert_like_a_full_scan_without_stats(scan, &roots);
        assert_eq!(scan.documents.len(), 2);
    }
}

#[test]
fn many_caches_share_one_watcher_thread() {
    let dirs: Vec<tempfile::TempDir> = (0..16).map(|_| tempfile::tempdir().unwrap()).collect();
    let hub = std::sync::Arc::new(WatchHub::new());
    if let Some(error) = hub.error() {
        eprintln!("not run: this machine cannot watch ({error})");
        return;
    }
    let threads_before = thread_count();

    let caches: Vec<WatchedCache> = dirs
        .iter()
        .map(|dir| {
            write(dir.path(), "a.md", &topic("A", "alpha"));
            let cache = WatchedCache::sharing(DocumentCache::new(), &hub);
            let roots = MemoryRoots {
                project: Some(dir.path().to_path_buf()),
                user: None,
            };
            cache.scan_recall(&roots).unwrap();
            cache
        })
        .collect();

    assert_eq!(hub.watched_roots(), 16);
    if let (Some(before), Some(after)) = (threads_before, thread_count()) {
        // Scans may start the thread pool's threads; no thread is started per cache.
        assert!(
            after < before + 16,
            "{before} threads before, {after} after"
        );
    }
    drop(caches);
    assert_eq!(hub.watched_roots(), 0);
}

/// The threads of this process, where the system tells.
fn thread_count() -> Option<usize> {
    fs::read_dir("/proc/self/task").ok().map(Iterator::count)
}

#[test]
fn a_watcher_whose_thread_is_gone_gives_every_root_a_full_scan_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.md", &topic("A", "alpha"));
    let Some((hub, roots, caches)) = two_caches_sharing_a_watcher(dir.path()) else {
        return;
    };

    hub.fail_for_test();
    write(dir.path(), "b.md", &topic("B", "bravo"));
    let scans = caches
        .each_ref()
        .map(|cache| cache.scan_recall(&roots).unwrap());
    let again = caches[0].scan_recall(&roots).unwrap();

    for (cache, scan) in caches.iter().zip(&scans) {
        assert_eq!(scan.documents.len(), 2);
        assert!(
            scan.report.work.directories_stated > 0,
            "{:?}",
            scan.report.work
        );
        let mode = cache.roots()[0].mode.clone();
        assert!(
            matches!(
                mode,
                WatchMode::FullScan {
                    reason: FallbackReason::WatcherFailed(_)
                }
            ),
            "{mode:?}"
        );
    }
    assert!(again.report.work.directories_stated > 0);
    assert_eq!(hub.watched_roots(), 0);
    drop(caches);
}
