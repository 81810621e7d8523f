//! A tree past the walk's limits: recall still delivers what it read within them, and says what
//! was left out.

use crate::support::Tree;

#[test]
fn recall_over_a_tree_deeper_than_the_walk_goes_delivers_the_shallow_note_and_warns_once() {
    let tree = Tree::new();
    tree.project_topic(
        "rollback.md",
        "Release rollback runbook",
        "how to roll back a release",
        "project",
        "Run the rollback script.",
    );
    let deep = format!(
        "{}/hidden.md",
        vec!["d"; memory_scan::MAX_DEPTH + 4].join("/")
    );
    tree.project_topic(&deep, "Hidden rollback note", "", "project", "Too deep.");

    let run = tree.run_with_roots("recall", "how do we roll back a release?", &[]);

    run.success().no_panic();
    assert!(
        run.stdout.contains("Release rollback runbook"),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("Hidden rollback note"),
        "{}",
        run.stdout
    );
    let warnings: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("warning:") && l.contains("directory levels below its root"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", run.stdout);
}
