//! The README's library example (`examples/library.rs`) recalls from the demo memory tree.

#[allow(dead_code)] // its `main` is the example's; the test calls what `main` calls.
#[path = "../examples/library.rs"]
mod library;

use std::path::Path;

/// Copies the files below `from` into `to`, so that recall's catalog is written in the copy and
/// the repository's demo tree stays as a first run sees it.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

// The paused clock does not move while the scan runs on a blocking thread, so the first prompt's
// 100 ms wait always sees the scan's result, however slow the machine.
#[tokio::test(start_paused = true)]
async fn the_library_example_delivers_the_rollback_runbook_for_a_rollback_query() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/demo");
    let copy = tempfile::tempdir().unwrap();
    copy_tree(&demo, copy.path()).unwrap();
    let prompt = library::first_prompt(
        copy.path().join("project"),
        copy.path().join("user"),
        "how do we roll back a release?",
    )
    .await
    .unwrap();
    let prompt = prompt.expect("the example delivers a prompt");
    assert!(prompt.contains("Release rollback runbook"), "{prompt}");
}
