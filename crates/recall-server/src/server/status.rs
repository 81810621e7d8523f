//! The server's status report: sessions, roots and how they are watched, recalls, memory.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use memory_scan::CacheFootprint;
use memory_watch::WatchMode;
use recall_facade::MemoryRecall;

use super::{Server, lock};
use crate::protocol::Status;

impl Server {
    /// How each scanned root's changes are noticed, one `root: mode` per line's worth, in root
    /// order: "watched", "does not exist yet", or the reason it is checked file by file.
    fn watch_modes(&self) -> String {
        let caches: Vec<_> = lock(&self.caches).values().cloned().collect();
        let mut modes: Vec<String> = caches
            .iter()
            .flat_map(|cache| cache.roots())
            .map(|root| match root.mode {
                // Watching a root that is not there fails with the watcher's own words ("No
                // path was found"); what the user needs to know is that it is simply missing.
                _ if !root.path.exists() => {
                    format!("{}: does not exist yet", root.path.display())
                }
                WatchMode::Watching => format!("{}: watched", root.path.display()),
                WatchMode::FullScan { reason } => format!(
                    "{}: every file checked on each recall ({reason})",
                    root.path.display()
                ),
                _ => format!("{}: {:?}", root.path.display(), root.mode),
            })
            .collect();
        modes.sort();
        modes.dedup();
        if modes.is_empty() {
            "no root scanned yet".to_owned()
        } else {
            modes.join("; ")
        }
    }

    pub(super) fn status(&self) -> Status {
        let entries: Vec<_> = lock(&self.sessions)
            .slots
            .values()
            .map(|slot| Arc::clone(&slot.entry))
            .collect();
        let pending_recalls = entries
            .iter()
            .filter(|entry| {
                entry.try_lock().is_ok_and(|e| {
                    e.recall
                        .as_ref()
                        .is_some_and(MemoryRecall::has_pending_recall)
                })
            })
            .count();
        let mut roots: Vec<PathBuf> = lock(&self.caches)
            .keys()
            .flat_map(|roots| roots.project.iter().chain(roots.user.iter()).cloned())
            .collect();
        roots.sort();
        roots.dedup();
        let (rss_kib, peak_rss_kib) = memory();
        let mut footprint = CacheFootprint::default();
        for cache in lock(&self.caches).values() {
            footprint += cache.footprint();
        }
        Status {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            uptime_s: self.started.elapsed().as_secs_f64(),
            idle_exit_s: self.idle_exit().as_secs_f64(),
            sessions: entries.len(),
            pending_recalls,
            roots,
            watch: self.watch_modes(),
            recalls_served: self.served.load(Ordering::Relaxed),
            recalls_ended: self.sink.ended.load(Ordering::Relaxed),
            rss_kib,
            peak_rss_kib,
            footprint,
            last_selector_error: lock(&self.problems).last_selector_error.clone(),
            selector_key_unset: self.selector_key_unset(),
        }
    }
}

/// Resident and peak resident memory in KiB: from `/proc/self/status` on Linux; elsewhere (macOS)
/// the resident size from `ps(1)`, the peak unknown.
pub(super) fn memory() -> (Option<u64>, Option<u64>) {
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        return from_proc_status(&status);
    }
    let resident = std::process::Command::new("ps")
        .args(["-o", "rss=", "-p", &std::process::id().to_string()])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| rss_from_ps(&String::from_utf8_lossy(&output.stdout)));
    (resident, None)
}

/// `VmRSS` and `VmHWM` of a `/proc/<pid>/status` text, in KiB.
pub(super) fn from_proc_status(status: &str) -> (Option<u64>, Option<u64>) {
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The resident size `ps -o rss= -p PID` printed, in KiB (its unit on macOS and Linux).
pub(super) fn rss_from_ps(output: &str) -> Option<u64> {
    output.trim().parse().ok()
}
