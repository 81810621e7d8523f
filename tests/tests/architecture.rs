//! Every test ARCHITECTURE.md names exists: where the document says that a test checks an
//! invariant (a backticked name followed by " (test)", or by ", test)" or ", test;" in a list of
//! tests), a function of that name is defined in a `.rs` file of the workspace (`crates/`,
//! `tests/`, `xtask/`).

use std::collections::BTreeSet;

use memrecall_e2e::{rust_files, workspace};

/// The names a text cites as tests: each backticked name directly followed by ` (test)`,
/// `, test)` or `, test;`, whatever line breaks the text has between them.
fn cited_tests(text: &str) -> BTreeSet<String> {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut cited = BTreeSet::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find('`') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('`') else { break };
        let name = &after[..end];
        let tail = &after[end + 1..];
        if [" (test)", ", test)", ", test;"]
            .iter()
            .any(|citation| tail.starts_with(citation))
            && !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            cited.insert(name.to_owned());
        }
        rest = &after[end + 1..];
    }
    cited
}

/// Every function name the sources define (`fn name`).
fn defined_functions(sources: &[String]) -> BTreeSet<String> {
    let mut defined = BTreeSet::new();
    for source in sources {
        let mut rest = source.as_str();
        while let Some(at) = rest.find("fn ") {
            let before_is_word = rest[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            let name: String = rest[at + 3..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !before_is_word && !name.is_empty() {
                defined.insert(name);
            }
            rest = &rest[at + 3..];
        }
    }
    defined
}

/// The cited tests no source defines.
fn missing(document: &str, sources: &[String]) -> Vec<String> {
    let defined = defined_functions(sources);
    cited_tests(document)
        .into_iter()
        .filter(|name| !defined.contains(name))
        .collect()
}

#[test]
fn every_test_the_architecture_names_exists() {
    let root = workspace();
    let document = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut sources = Vec::new();
    for folder in ["crates", "tests", "xtask"] {
        for file in rust_files(&root.join(folder)) {
            sources.push(std::fs::read_to_string(&file).unwrap());
        }
    }
    assert!(
        cited_tests(&document).len() >= 10,
        "ARCHITECTURE.md cites too few tests: {:?}",
        cited_tests(&document)
    );
    let missing = missing(&document, &sources);
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names tests no .rs file defines:\n{}",
        missing.join("\n")
    );
}

#[test]
fn a_cited_test_no_source_defines_is_reported() {
    let document = "a bad file is skipped (`skips_bad_files`, test); a symlink is refused\n\
                    (`made_up_first`, test; `no_such_test_anywhere`,\n test) and `refuses` (test); \
                    `plain` is no citation.";
    let sources = ["#[test]\nfn skips_bad_files() {}\nfn refuses_all() {}".to_owned()];
    assert_eq!(
        missing(document, &sources),
        vec![
            "made_up_first".to_owned(),
            "no_such_test_anywhere".to_owned(),
            "refuses".to_owned()
        ]
    );
}
