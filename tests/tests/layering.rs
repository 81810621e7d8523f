//! No crate's modules form a circle: in every crate under `crates/` and in `xtask`, the modules
//! below one parent use each other without a cycle, so a module can be understood, and moved into
//! a crate of its own, without the ones that use it.
//!
//! A module uses another when its code names it through `crate::`, `super::` or `self::` (in a
//! `use` line, `use` groups included, or inline in the code), or names a child module in a `use`
//! line. A use between a module and one of its ancestors or descendants is the module tree itself
//! and not counted; a use of an item a parent re-exports counts as a use of the parent.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use memrecall_e2e::{rust_files, workspace};

/// A graph of modules: each module and the siblings it uses.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// A module path inside a crate, its crate's name first.
type ModulePath = Vec<String>;

/// The module a source file below `src` holds: `lib.rs` and `main.rs` are the root, `a/mod.rs`
/// and `a.rs` are `a`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut module: Vec<String> = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(module.as_slice(), [only] if only == "lib" || only == "main")
        || module.last().is_some_and(|last| last == "mod")
    {
        module.pop();
    }
    module
}

/// Every crate's source files, as each file's module path (crate name first) and text.
fn workspace_sources() -> Vec<(ModulePath, String)> {
    let root = workspace();
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    crates.push(root.join("xtask"));
    let mut sources = Vec::new();
    for krate in crates {
        let src = krate.join("src");
        let name = krate.file_name().unwrap().to_string_lossy().into_owned();
        for file in rust_files(&src) {
            let mut module = vec![name.clone()];
            module.extend(module_of(&src, &file));
            sources.push((module, std::fs::read_to_string(&file).unwrap()));
        }
    }
    sources
}

/// One token of Rust source: comments, literals and lifetimes are dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    PathSeparator,
    Punct(char),
}

/// The tokens of `source` that can name a module.
fn tokens(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut at = 0;
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    while at < chars.len() {
        let c = chars[at];
        let next = chars.get(at + 1).copied();
        if c == '/' && next == Some('/') {
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while at < chars.len() {
                if chars[at] == '/' && chars.get(at + 1) == Some(&'*') {
                    depth += 1;
                    at += 2;
                } else if chars[at] == '*' && chars.get(at + 1) == Some(&'/') {
                    depth -= 1;
                    at += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    at += 1;
                }
            }
        } else if let Some(after) = raw_string_end(&chars, at) {
            at = after;
        } else if c == '"' {
            at += 1;
            while at < chars.len() && chars[at] != '"' {
                at += if chars[at] == '\\' { 2 } else { 1 };
            }
            at += 1;
        } else if c == '\'' {
            if next == Some('\\') {
                at += 3;
                while at < chars.len() && chars[at] != '\'' {
                    at += 1;
                }
                at += 1;
            } else if chars.get(at + 2) == Some(&'\'') {
                at += 3;
            } else {
                // A lifetime or a label: its name is not a path.
                at += 1;
                while at < chars.len() && is_ident(chars[at]) {
                    at += 1;
                }
            }
        } else if c.is_ascii_digit() {
            while at < chars.len() && is_ident(chars[at]) {
                at += 1;
            }
        } else if is_ident(c) {
            let start = if c == 'r' && next == Some('#') {
                at + 2
            } else {
                at
            };
            at = start;
            while at < chars.len() && is_ident(chars[at]) {
                at += 1;
            }
            let word: String = chars[start..at].iter().collect();
            if matches!(word.as_str(), "b" | "c" | "br" | "cr") && chars.get(at) == Some(&'"') {
                continue;
            }
            tokens.push(Token::Ident(word));
        } else if c == ':' && next == Some(':') {
            tokens.push(Token::PathSeparator);
            at += 2;
        } else {
            if !c.is_whitespace() {
                tokens.push(Token::Punct(c));
            }
            at += 1;
        }
    }
    tokens
}

/// Where a raw string literal starting at `at` (`r"…"`, `br#"…"#`, …) ends, if one does.
fn raw_string_end(chars: &[char], at: usize) -> Option<usize> {
    let mut cursor = at;
    if matches!(chars.get(cursor), Some('b' | 'c')) {
        cursor += 1;
    }
    if chars.get(cursor) != Some(&'r')
        || (at > 0 && (chars[at - 1].is_alphanumeric() || chars[at - 1] == '_'))
    {
        return None;
    }
    cursor += 1;
    let hashes = chars[cursor..].iter().take_while(|c| **c == '#').count();
    cursor += hashes;
    if chars.get(cursor) != Some(&'"') {
        return None;
    }
    cursor += 1;
    while cursor < chars.len() {
        if chars[cursor] == '"'
            && chars[cursor + 1..]
                .iter()
                .take_while(|c| **c == '#')
                .count()
                >= hashes
        {
            return Some(cursor + 1 + hashes);
        }
        cursor += 1;
    }
    Some(cursor)
}

/// The paths one `use` tree starting at `tokens[*at]` names, each with `prefix` before it.
fn use_tree(tokens: &[Token], at: &mut usize, prefix: &[String], paths: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    while let Some(token) = tokens.get(*at) {
        match token {
            Token::Ident(word) if word == "as" => {
                *at += 2;
                break;
            }
            Token::Ident(word) => {
                if word != "self" || path.is_empty() {
                    path.push(word.clone());
                }
                *at += 1;
            }
            Token::PathSeparator | Token::Punct('*') => *at += 1,
            Token::Punct('{') => {
                *at += 1;
                while !matches!(tokens.get(*at), None | Some(Token::Punct('}'))) {
                    use_tree(tokens, at, &path, paths);
                    if tokens.get(*at) == Some(&Token::Punct(',')) {
                        *at += 1;
                    }
                }
                *at += 1;
                return;
            }
            Token::Punct(_) => break,
        }
    }
    paths.push(path);
}

/// The paths each module of one file names through `crate::`, `super::` or `self::`, or in a
/// `use` line, and the modules the file declares inline.
fn named_paths(file_module: &[String], source: &str) -> Vec<(ModulePath, Vec<String>)> {
    let tokens = tokens(source);
    let mut named = Vec::new();
    // The inline modules open at this point, each with the brace depth that closes it.
    let mut open: Vec<(ModulePath, usize)> = vec![(file_module.to_vec(), 0)];
    let mut depth = 0;
    let mut at = 0;
    while at < tokens.len() {
        let current = open.last().unwrap().0.clone();
        match &tokens[at] {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                if open.len() > 1 && open.last().unwrap().1 == depth {
                    open.pop();
                }
                depth -= 1;
            }
            Token::Ident(word) if word == "mod" => {
                if let (Some(Token::Ident(name)), Some(Token::Punct('{'))) =
                    (tokens.get(at + 1), tokens.get(at + 2))
                {
                    let mut inline = current.clone();
                    inline.push(name.clone());
                    named.push((inline.clone(), Vec::new()));
                    depth += 1;
                    open.push((inline, depth));
                    at += 3;
                    continue;
                }
            }
            Token::Ident(word) if word == "use" => {
                at += 1;
                let mut paths = Vec::new();
                use_tree(&tokens, &mut at, &[], &mut paths);
                named.extend(paths.into_iter().map(|path| (current.clone(), path)));
                continue;
            }
            Token::Ident(word)
                if matches!(word.as_str(), "crate" | "super" | "self")
                    && tokens.get(at + 1) == Some(&Token::PathSeparator)
                    && at
                        .checked_sub(1)
                        .is_none_or(|before| tokens[before] != Token::PathSeparator)
                    && !(at >= 2
                        && tokens[at - 1] == Token::Ident("in".to_owned())
                        && tokens[at - 2] == Token::Punct('(')) =>
            {
                let mut path = Vec::new();
                while let Some(Token::Ident(segment)) = tokens.get(at) {
                    path.push(segment.clone());
                    at += 1;
                    if tokens.get(at) != Some(&Token::PathSeparator) {
                        break;
                    }
                    at += 1;
                }
                named.push((current, path));
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    named
}

/// The module `path`, named in `module`, leads to, if it leads into the same crate: the longest
/// known module its start names.
fn resolve(
    modules: &BTreeSet<ModulePath>,
    module: &[String],
    path: &[String],
) -> Option<ModulePath> {
    let (start, rest, target) = match path.first().map(String::as_str) {
        Some("crate") => (module[..1].to_vec(), &path[1..], Some(module[..1].to_vec())),
        Some("self") => (module.to_vec(), &path[1..], Some(module.to_vec())),
        Some("super") => {
            let supers = path
                .iter()
                .take_while(|segment| *segment == "super")
                .count();
            let keep = module.len().checked_sub(supers).filter(|keep| *keep >= 1)?;
            let start = module[..keep].to_vec();
            (start.clone(), &path[supers..], Some(start))
        }
        Some(_) => (module.to_vec(), path, None),
        None => return None,
    };
    let mut target = target;
    let mut probe = start;
    for segment in rest {
        probe.push(segment.clone());
        if !modules.contains(&probe) {
            break;
        }
        target = Some(probe.clone());
    }
    target
}

/// The graph of sibling modules of the given source files (module path, text): a module uses a
/// sibling when code anywhere below it names anything below that sibling.
fn module_graph(sources: &[(ModulePath, String)]) -> Graph {
    let named: Vec<(ModulePath, Vec<String>)> = sources
        .iter()
        .flat_map(|(module, source)| named_paths(module, source))
        .collect();
    let mut modules: BTreeSet<ModulePath> =
        sources.iter().map(|(module, _)| module.clone()).collect();
    modules.extend(named.iter().map(|(module, _)| module.clone()));
    let mut graph = Graph::new();
    for module in &modules {
        graph.entry(module.join("::")).or_default();
    }
    for (module, path) in &named {
        let Some(target) = resolve(&modules, module, path) else {
            continue;
        };
        let shared = module
            .iter()
            .zip(&target)
            .take_while(|(a, b)| a == b)
            .count();
        if shared == module.len() || shared == target.len() {
            continue;
        }
        graph
            .entry(module[..=shared].join("::"))
            .or_default()
            .insert(target[..=shared].join("::"));
    }
    graph
}

/// A cycle through `start`, if any, as the modules along it.
fn cycle_from(graph: &Graph, start: &str, path: &mut Vec<String>) -> Option<Vec<String>> {
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

/// One cycle through each module that is on one, each written once.
fn cycles(graph: &Graph) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for start in graph.keys() {
        let mut path = vec![start.clone()];
        if let Some(mut cycle) = cycle_from(graph, start, &mut path) {
            cycle.pop();
            let first = (0..cycle.len()).min_by_key(|at| &cycle[*at]).unwrap();
            cycle.rotate_left(first);
            cycle.push(cycle[0].clone());
            found.insert(cycle.join(" -> "));
        }
    }
    found
}

fn sources_of(files: &[(&str, &str)]) -> Vec<(ModulePath, String)> {
    files
        .iter()
        .map(|(module, source)| {
            let path = module.split("::").map(str::to_owned).collect();
            (path, (*source).to_owned())
        })
        .collect()
}

#[test]
fn no_crates_modules_use_each_other_in_a_cycle() {
    let graph = module_graph(&workspace_sources());
    for module in [
        "memrecall::commands",
        "lexical-score::delivery",
        "agent-hooks::settings",
    ] {
        assert!(graph.contains_key(module), "{module} not found: {graph:?}");
    }
    let found = cycles(&graph);
    assert!(
        found.is_empty(),
        "module cycles:\n{}",
        Vec::from_iter(found).join("\n")
    );
}

#[test]
fn the_cycle_finder_finds_a_cycle_of_two() {
    let graph: Graph = [
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

#[test]
fn a_cycle_through_super_groups_and_inline_paths_is_found() {
    let sources = sources_of(&[
        ("k", "mod parent;"),
        ("k::parent", "mod a; mod b; mod c;"),
        (
            "k::parent::a",
            "use super::{b::Thing, c};\n// crate::parent::c::ignored()\n",
        ),
        ("k::parent::b", "pub struct Thing;"),
        ("k::parent::c", "fn f() { let _ = super::a::helper(); }"),
    ]);
    let graph = module_graph(&sources);
    assert_eq!(
        cycles(&graph),
        BTreeSet::from(["k::parent::a -> k::parent::c -> k::parent::a".to_owned()])
    );
}

#[test]
fn uses_of_an_ancestor_or_a_descendant_and_inline_test_modules_make_no_cycle() {
    let sources = sources_of(&[
        ("k", "mod a; mod b; pub use a::Thing;"),
        (
            "k::a",
            "pub struct Thing; mod tests { use super::super::b::check; use crate::Thing; }",
        ),
        (
            "k::b",
            "use crate::Thing; use self::inner::x; mod inner { pub fn x() { super::super::b::y(); } }",
        ),
    ]);
    let graph = module_graph(&sources);
    assert!(cycles(&graph).is_empty(), "{graph:?}");
    assert!(graph["k::a"].contains("k::b"), "{graph:?}");
}
