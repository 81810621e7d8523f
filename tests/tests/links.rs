//! Every link and repository path the documentation and the comments cite leads somewhere: the
//! Markdown files' relative links, and the repository paths (`docs/spec.md#scores`) cited in
//! Markdown prose and in Rust and TOML comments, name files of the repository, and their
//! `#anchors` name headings of those files. Web links are not followed.

use std::collections::{BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// The folders and files a cited path may start with: those at the repository's root, and the
/// folders of a package (a path cited in a package may be relative to the package).
const CITABLE: &[&str] = &[
    "crates/",
    "docs/",
    "xtask/",
    "tests/",
    "corpus/",
    "fuzz/",
    "plugins/",
    ".ci/",
    ".claude-plugin/",
    "README.md",
    "ARCHITECTURE.md",
    "Cargo.toml",
    "deny.toml",
    "src/",
    "benches/",
    "examples/",
];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the repository")
        .to_path_buf()
}

/// The repository's files, relative to its root: those git tracks, or, without git, every file
/// outside build output and hidden folders.
fn files() -> Vec<PathBuf> {
    let root = repository();
    let tracked = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
        .ok()
        .filter(|output| output.status.success() && !output.stdout.is_empty());
    if let Some(output) = tracked {
        String::from_utf8_lossy(&output.stdout)
            .split('\0')
            .filter(|name| !name.is_empty())
            .map(PathBuf::from)
            .filter(|path| root.join(path).is_file())
            .collect()
    } else {
        let mut found = Vec::new();
        walk(&root, Path::new(""), &mut found);
        found
    }
}

fn walk(root: &Path, relative: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root.join(relative)) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let path = relative.join(&*name);
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            let skipped = matches!(&*name, "target" | "node_modules")
                || (name.starts_with('.') && !matches!(&*name, ".ci" | ".claude-plugin"));
            if !skipped {
                walk(root, &path, found);
            }
        } else if kind.is_file() {
            found.push(path);
        }
    }
}

fn files_with_extension(extension: &str) -> Vec<PathBuf> {
    files()
        .into_iter()
        .filter(|path| path.extension().is_some_and(|e| e == extension))
        .collect()
}

fn read(relative: &Path) -> String {
    let path = repository().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The prose of a Markdown text, line by line (numbered from 1), without fenced code blocks.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<&str> = None;
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"]
            .into_iter()
            .find(|marker| trimmed.starts_with(marker));
        match (fence, marker) {
            (None, Some(marker)) => fence = Some(marker),
            (Some(open), Some(marker)) if open == marker => fence = None,
            (None, None) => lines.push((index + 1, line)),
            _ => {}
        }
    }
    lines
}

/// The text of `line` outside inline code spans, and the text of each code span.
fn split_code(line: &str) -> (String, Vec<&str>) {
    let mut outside = String::new();
    let mut spans = Vec::new();
    let mut rest = line;
    while let Some(open) = rest.find('`') {
        outside.push_str(&rest[..open]);
        let ticks = rest[open..].len() - rest[open..].trim_start_matches('`').len();
        let after = &rest[open + ticks..];
        let closing = "`".repeat(ticks);
        match after.find(&closing) {
            Some(close) => {
                spans.push(&after[..close]);
                rest = &after[close + ticks..];
            }
            None => {
                rest = after;
            }
        }
    }
    outside.push_str(rest);
    (outside, spans)
}

/// The targets of the inline links `[text](target)` in `text`.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else {
            break;
        };
        let target = after[..end].trim();
        let target = target.split_whitespace().next().unwrap_or_default();
        let target = target.trim_start_matches('<').trim_end_matches('>');
        if !target.is_empty() {
            targets.push(target.to_owned());
        }
        rest = &after[end..];
    }
    targets
}

/// Whether a link target leaves the repository (a web address, a mail address).
fn is_external(target: &str) -> bool {
    target.contains("://") || target.starts_with("mailto:")
}

/// The comment text of each line of a Rust or TOML file that is a comment.
fn comment_lines(relative: &Path, text: &str) -> Vec<(usize, String)> {
    let rust = relative.extension().is_some_and(|e| e == "rs");
    text.lines()
        .enumerate()
        .filter_map(|(index, line)| {
            let trimmed = line.trim_start();
            let comment = if rust {
                trimmed.strip_prefix("//")
            } else {
                trimmed.strip_prefix('#')
            }?;
            Some((index + 1, comment.to_owned()))
        })
        .collect()
}

/// A code span that cites a repository path: it starts at one of [`CITABLE`] and holds no
/// placeholder, wildcard or space. The path comes without a trailing `:line`.
fn cited_path(span: &str) -> Option<&str> {
    if !CITABLE.iter().any(|root| span.starts_with(root)) {
        return None;
    }
    if span.contains(|c: char| c.is_whitespace() || "*<>{}[]…$|,;".contains(c)) {
        return None;
    }
    let path = span
        .rsplit_once(':')
        .filter(|(_, line)| !line.is_empty() && line.chars().all(|c| c.is_ascii_digit()))
        .map_or(span, |(path, _)| path);
    Some(path)
}

/// `relative` joined to `base` and normalised (`..` taken back, `.` dropped); `None` when it
/// leaves the repository.
fn resolve(base: &Path, relative: &str) -> Option<PathBuf> {
    let mut path = PathBuf::new();
    for component in base.join(relative).components() {
        match component {
            Component::Normal(part) => path.push(part),
            Component::ParentDir => {
                if !path.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(path)
}

/// The folder of the package `file` belongs to (the nearest one above it holding a
/// `Cargo.toml`), relative to the repository; the repository's root when there is none.
fn package_of(file: &Path) -> PathBuf {
    let root = repository();
    file.ancestors()
        .skip(1)
        .find(|folder| root.join(folder).join("Cargo.toml").is_file())
        .unwrap_or(Path::new(""))
        .to_path_buf()
}

/// One place a path or link is cited: the citing file and line, and what is cited.
#[derive(Debug)]
struct Citation {
    from: PathBuf,
    line: usize,
    target: String,
    /// The file the target names, relative to the repository; `None` for the citing file itself.
    file: Option<PathBuf>,
    anchor: Option<String>,
}

impl Citation {
    fn new(from: &Path, line: usize, target: &str, base: &Path) -> Self {
        let (path, anchor) = match target.split_once('#') {
            Some((path, anchor)) => (path, Some(anchor.to_owned())),
            None => (target, None),
        };
        let file = if path.is_empty() {
            None
        } else {
            Some(resolve(base, path).unwrap_or_else(|| PathBuf::from("/outside-the-repository")))
        };
        Self {
            from: from.to_path_buf(),
            line,
            target: target.to_owned(),
            file,
            anchor,
        }
    }

    /// A repository path cited in `from`: relative to the repository's root, or else to the
    /// package of `from`.
    fn path(from: &Path, line: usize, path: &str) -> Self {
        let in_package = Self::new(from, line, path, &package_of(from));
        if in_package.exists() {
            in_package
        } else {
            Self::new(from, line, path, Path::new(""))
        }
    }

    /// The file the citation leads to, relative to the repository.
    fn leads_to(&self) -> &Path {
        self.file.as_deref().unwrap_or(&self.from)
    }

    fn exists(&self) -> bool {
        repository().join(self.leads_to()).exists()
    }

    fn describe(&self) -> String {
        format!("{}:{}: {}", self.from.display(), self.line, self.target)
    }
}

/// The relative links of every Markdown file.
fn markdown_links() -> Vec<Citation> {
    let mut citations = Vec::new();
    for file in files_with_extension("md") {
        let text = read(&file);
        let base = file.parent().unwrap_or(Path::new(""));
        for (line, content) in prose_lines(&text) {
            let (outside, _) = split_code(content);
            for target in link_targets(&outside) {
                if !is_external(&target) {
                    citations.push(Citation::new(&file, line, &target, base));
                }
            }
        }
    }
    citations
}

/// The repository paths cited in code spans of every Markdown file's prose. Memories (the
/// corpus's topic files, which open with their frontmatter) speak of the projects they are
/// about, not of this repository, and are left out.
fn paths_cited_in_markdown() -> Vec<Citation> {
    let mut citations = Vec::new();
    for file in files_with_extension("md") {
        let text = read(&file);
        if text.starts_with("---") {
            continue;
        }
        for (line, content) in prose_lines(&text) {
            let (_, spans) = split_code(content);
            for path in spans.into_iter().filter_map(cited_path) {
                citations.push(Citation::path(&file, line, path));
            }
        }
    }
    citations
}

/// The repository paths cited in Rust and TOML comments, in code spans or as relative links.
fn paths_cited_in_comments() -> Vec<Citation> {
    let mut citations = Vec::new();
    let sources = files_with_extension("rs")
        .into_iter()
        .chain(files_with_extension("toml"));
    for file in sources {
        let text = read(&file);
        let base = file.parent().unwrap_or(Path::new(""));
        for (line, comment) in comment_lines(&file, &text) {
            let (outside, spans) = split_code(&comment);
            for path in spans.into_iter().filter_map(cited_path) {
                citations.push(Citation::path(&file, line, path));
            }
            // Rustdoc's intra-doc links (`[Foo](crate::Foo)`) are not paths; a link to a file
            // has a slash or a file extension.
            for target in link_targets(&outside) {
                let file_like = !target.contains("::")
                    && (target.contains('/')
                        || Path::new(&target).extension().is_some_and(|e| e == "md"))
                    && !is_external(&target);
                if file_like {
                    citations.push(Citation::new(&file, line, &target, base));
                }
            }
        }
    }
    citations
}

/// The anchor a heading gets: lowercase, punctuation dropped, spaces as `-`.
fn heading_anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings; a repeated heading's later anchors end in `-1`,
/// `-2`, ….
fn anchors_of(relative: &Path) -> BTreeSet<String> {
    let text = read(relative);
    let mut anchors = BTreeSet::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (_, line) in prose_lines(&text) {
        let trimmed = line.trim_start();
        let level = trimmed.len() - trimmed.trim_start_matches('#').len();
        let Some(heading) = trimmed[level..].strip_prefix(' ') else {
            continue;
        };
        if !(1..=6).contains(&level) {
            continue;
        }
        let anchor = heading_anchor(heading);
        let count = seen.entry(anchor.clone()).or_default();
        anchors.insert(match *count {
            0 => anchor.clone(),
            n => format!("{anchor}-{n}"),
        });
        *count += 1;
    }
    anchors
}

/// The citations whose file is missing.
fn missing(citations: &[Citation]) -> Vec<String> {
    citations
        .iter()
        .filter(|citation| !citation.exists())
        .map(Citation::describe)
        .collect()
}

/// The citations of an existing Markdown file whose anchor names none of its headings.
fn unknown_anchors(citations: &[Citation]) -> Vec<String> {
    let mut anchors: HashMap<PathBuf, BTreeSet<String>> = HashMap::new();
    citations
        .iter()
        .filter(|citation| citation.exists())
        .filter(|citation| citation.leads_to().extension().is_some_and(|e| e == "md"))
        .filter_map(|citation| {
            let anchor = citation.anchor.as_deref()?;
            let known = anchors
                .entry(citation.leads_to().to_path_buf())
                .or_insert_with(|| anchors_of(citation.leads_to()));
            (!known.contains(anchor)).then(|| citation.describe())
        })
        .collect()
}

fn assert_none(what: &str, found: &[String]) {
    assert!(found.is_empty(), "{what}:\n  {}", found.join("\n  "));
}

#[test]
fn markdown_links_lead_to_files_of_the_repository() {
    assert_none(
        "links to files that are not in the repository",
        &missing(&markdown_links()),
    );
}

#[test]
fn markdown_link_anchors_name_headings_of_their_files() {
    assert_none(
        "links to headings that do not exist",
        &unknown_anchors(&markdown_links()),
    );
}

#[test]
fn repository_paths_cited_in_markdown_exist() {
    assert_none(
        "paths cited that are not in the repository",
        &missing(&paths_cited_in_markdown()),
    );
}

#[test]
fn repository_paths_cited_in_comments_exist() {
    assert_none(
        "paths cited in comments that are not in the repository",
        &missing(&paths_cited_in_comments()),
    );
}

#[test]
fn anchors_of_cited_paths_name_headings_of_their_files() {
    let citations: Vec<Citation> = paths_cited_in_markdown()
        .into_iter()
        .chain(paths_cited_in_comments())
        .collect();
    assert_none(
        "cited paths whose heading does not exist",
        &unknown_anchors(&citations),
    );
}

#[test]
fn a_heading_anchor_is_its_lowercase_words_joined_by_hyphens() {
    assert_eq!(
        heading_anchor("Let the model look memory up: `memrecall mcp`"),
        "let-the-model-look-memory-up-memrecall-mcp"
    );
    assert_eq!(
        heading_anchor("Candidates, the heuristic result and the fast result"),
        "candidates-the-heuristic-result-and-the-fast-result"
    );
}

#[test]
fn a_cited_path_is_found_in_code_spans_and_links_outside_them() {
    let (outside, spans) = split_code("see `docs/spec.md#scores` and [the guide](docs/library.md)");
    assert_eq!(spans, ["docs/spec.md#scores"]);
    assert_eq!(link_targets(&outside), ["docs/library.md"]);
    assert_eq!(
        cited_path("crates/x/src/lib.rs:12"),
        Some("crates/x/src/lib.rs")
    );
    assert_eq!(cited_path("target/agents/<agent>/"), None);
    assert_eq!(cited_path("lib.rs"), None);
}
