//! The binary's top-level modules (`commands`, `config`, `logging`, `output`, `stats`) form no
//! cycle: each uses only modules below it, so a module can be understood, and moved into a crate
//! of its own, without the ones above it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn binary_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/memrecall/src")
}

/// Every `.rs` file below `path` (or `path` itself).
fn rust_files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).unwrap() {
        files.extend(rust_files(&entry.unwrap().path()));
    }
    files
}

/// The top-level modules and the others each names as `crate::<module>` outside comments.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = binary_src();
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "main" || name == "test_support" {
            continue;
        }
        let mut uses = BTreeSet::new();
        for file in rust_files(&path) {
            for line in std::fs::read_to_string(&file).unwrap().lines() {
                let code = line.split("//").next().unwrap_or_default();
                for (at, _) in code.match_indices("crate::") {
                    let used: String = code[at + "crate::".len()..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if used != name && !used.is_empty() {
                        uses.insert(used);
                    }
                }
            }
        }
        modules.insert(name, uses);
    }
    modules
}

/// A cycle through `start`, if any, as the modules along it.
fn cycle_from(
    graph: &BTreeMap<String, BTreeSet<String>>,
    start: &str,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    let current = path.last().cloned().unwrap_or_else(|| start.to_owned());
    for next in graph.get(&current).into_iter().flatten() {
        if next == start {
            let mut cycle = path.clone();
            cycle.push(start.to_owned());
            return Some(cycle);
        }
        if !path.contains(next) && graph.contains_key(next) {
            path.push(next.clone());
            if let Some(cycle) = cycle_from(graph, start, path) {
                return Some(cycle);
            }
            path.pop();
        }
    }
    None
}

#[test]
fn the_binarys_top_level_modules_use_each_other_without_a_cycle() {
    let graph = module_graph();
    for module in ["commands", "config", "logging", "output", "stats"] {
        assert!(graph.contains_key(module), "{module} not found: {graph:?}");
    }
    for start in graph.keys() {
        let mut path = vec![start.clone()];
        if let Some(cycle) = cycle_from(&graph, start, &mut path) {
            panic!("a module cycle: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_cycle_finder_finds_a_cycle_of_two() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_owned(), BTreeSet::from(["b".to_owned()])),
        ("b".to_owned(), BTreeSet::from(["a".to_owned()])),
    ]
    .into();
    let mut path = vec!["a".to_owned()];
    assert_eq!(
        cycle_from(&graph, "a", &mut path),
        Some(vec!["a".to_owned(), "b".to_owned(), "a".to_owned()])
    );
}
