//! One recall in a process that makes it and exits, such as an agent's hook started per prompt or
//! a command line: the session is built, the turn begun and its initial point taken; after the
//! answer is out, the catalogs the recall brought up to date are written within a deadline and
//! the session ends.

use std::sync::Arc;

use delivery_telemetry::TelemetrySink;
use memory_scan::{CatalogStore, MemoryRoots};
use recall_lifecycle::Delivery;

use crate::{FacadeError, MemoryRecall, RecallConfig, RecallOptions, ScannerChoice};

/// What a one-shot recall needs besides its query.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OnceConfig {
    /// The memory roots to scan.
    pub roots: MemoryRoots,
    /// Where the roots' catalogs are kept; `None`: the recall reads and writes none.
    pub catalogs: Option<CatalogStore>,
    /// The recall's options: selector, delivery design, delivery rule, limit, turn cap.
    pub options: RecallOptions,
    /// Where the recall's telemetry events go.
    pub telemetry: Arc<dyn TelemetrySink>,
}

impl OnceConfig {
    /// A one-shot recall of `roots` with the default options, no catalogs and `tracing`
    /// telemetry.
    pub fn new(roots: MemoryRoots) -> Self {
        Self {
            roots,
            catalogs: None,
            options: RecallOptions::default(),
            telemetry: Arc::new(delivery_telemetry::TracingSink),
        }
    }
}

/// A one-shot recall whose initial point has been taken: the session, to look at or go on with
/// (end the turn, wait for the selector), and what its initial point delivered.
#[derive(Debug)]
#[non_exhaustive]
pub struct OneRecall {
    /// The session of this one recall.
    pub recall: MemoryRecall,
    /// What the initial point delivered.
    pub initial: Delivery,
}

/// Builds a session over `config`'s roots (each catalog read whole, as a process making one
/// recall reads it: [`ScannerChoice::OneRecall`]), begins the turn for `query` and takes its
/// initial point, waiting at most the first-prompt ceiling. Must be called inside a tokio
/// runtime.
pub async fn recall_once(config: OnceConfig, query: &str) -> Result<OneRecall, FacadeError> {
    let OnceConfig {
        roots,
        catalogs,
        options,
        telemetry,
    } = config;
    let mut session = RecallConfig::new(roots);
    session.scanner = catalogs.map_or(ScannerChoice::Uncatalogued, ScannerChoice::OneRecall);
    session.telemetry = telemetry;
    session.options = options;
    let mut recall = MemoryRecall::new(session)?;
    recall.begin_turn(query, &[]);
    let initial = recall.initial().await;
    Ok(OneRecall { recall, initial })
}

impl OneRecall {
    /// Ends the session once the catalogs this recall brought up to date are written, or at
    /// `deadline`, whichever comes first: a catalog not written by then is left for a later
    /// process, and a write stuck in the file system does not keep this one from exiting.
    pub async fn finish(self, deadline: tokio::time::Instant) {
        let _ = tokio::time::timeout_at(deadline, self.recall.write_catalogs()).await;
        self.recall.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn tree() -> tempfile::TempDir {
        let tree = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tree.path().join("project")).unwrap();
        std::fs::write(
            tree.path().join("project/rollback.md"),
            "---\nname: Release rollback runbook\ndescription: How to roll back a bad release\n\
             type: project\n---\n\nRun `deploy rollback --to previous`.\n",
        )
        .unwrap();
        tree
    }

    fn roots(tree: &tempfile::TempDir) -> MemoryRoots {
        MemoryRoots {
            project: Some(tree.path().join("project")),
            user: None,
        }
    }

    #[tokio::test]
    async fn a_one_shot_recall_delivers_the_matching_memory_at_its_initial_point() {
        let tree = tree();
        let once = recall_once(OnceConfig::new(roots(&tree)), "roll back a release")
            .await
            .unwrap();
        let memory = once.initial.delivered().expect("delivered");
        assert!(memory.prompt.contains("Release rollback runbook"));
        once.finish(tokio::time::Instant::now() + Duration::from_secs(5))
            .await;
    }

    #[tokio::test]
    async fn a_one_shot_recall_with_a_catalog_store_leaves_a_catalog_when_finished() {
        let tree = tree();
        let catalogs = tempfile::tempdir().unwrap();
        let mut config = OnceConfig::new(roots(&tree));
        config.catalogs = Some(CatalogStore::Under(catalogs.path().to_path_buf()));
        let once = recall_once(config, "roll back a release").await.unwrap();
        once.finish(tokio::time::Instant::now() + Duration::from_secs(5))
            .await;
        assert!(
            std::fs::read_dir(catalogs.path()).unwrap().next().is_some(),
            "no catalog written"
        );
    }
}
