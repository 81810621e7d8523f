//! `MEMRECALL_LOG`: what the libraries' `tracing` events a command a user runs shows on its
//! standard error.

use crate::support::Tree;

fn recall_args(tree: &Tree) -> Vec<String> {
    let mut args = vec!["recall".to_owned(), "release checklist".to_owned()];
    args.extend(tree.root_args());
    args
}

#[test]
fn memrecall_log_debug_shows_the_libraries_events_on_standard_error() {
    let tree = Tree::standard();
    let run = tree.run_once_with_env(&recall_args(&tree), &[("MEMRECALL_LOG", "debug")]);
    run.success();
    assert!(
        run.stderr
            .contains("DEBUG recall_lifecycle::recall: catalog written"),
        "{}",
        run.stderr
    );
}

#[test]
fn without_memrecall_log_a_recall_shows_no_library_events() {
    let tree = Tree::standard();
    let run = tree.run_once_with_env(&recall_args(&tree), &[]);
    run.success();
    assert!(!run.stderr.contains("recall_lifecycle"), "{}", run.stderr);
}

#[test]
fn an_unreadable_memrecall_log_is_said_once_on_standard_error() {
    let tree = Tree::standard();
    let run = tree.run_once_with_env(&recall_args(&tree), &[("MEMRECALL_LOG", "loud=very")]);
    run.success();
    assert_eq!(
        run.stderr.matches("MEMRECALL_LOG=\"loud=very\"").count(),
        1,
        "{}",
        run.stderr
    );
}
