//! The README's and the guides' examples are files of the repository, byte for byte, so they
//! cannot drift: the memory file is one of the demo tree's, and the library guide's example is the facade's example,
//! which the facade's tests run. Each library crate's README shows its `lib.rs` example, which
//! its doctests run.

use std::path::{Path, PathBuf};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the repository")
        .to_path_buf()
}

fn read(relative: &str) -> String {
    let path = repository().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The text of the one block fenced as ```` ```{info} ```` in the section of `file` under
/// `heading` (up to the next second-level heading), each line ending in a newline.
fn fenced_block(file: &str, heading: &str, info: &str) -> String {
    let readme = read(file);
    let section = heading;
    let heading = format!("{heading}\n");
    let start = readme
        .find(&heading)
        .unwrap_or_else(|| panic!("the README has no section {section:?}"))
        + heading.len();
    let body = &readme[start..];
    let body = body.find("\n## ").map_or(body, |end| &body[..end]);
    let opening = format!("```{info}\n");
    let mut blocks = body.split(opening.as_str()).skip(1);
    let block = blocks
        .next()
        .unwrap_or_else(|| panic!("section {section:?} has no {info} block"));
    assert!(
        blocks.next().is_none(),
        "section {section:?} has more than one {info} block"
    );
    let (text, _) = block
        .split_once("```\n")
        .unwrap_or_else(|| panic!("the {info} block of {section:?} is not closed"));
    text.to_owned()
}

#[test]
fn the_readme_memory_file_is_the_demo_rollback_runbook() {
    assert_eq!(
        fenced_block("README.md", "## Memory files", "markdown"),
        read("corpus/demo/project/release-rollback.md")
    );
}

#[test]
fn the_library_guide_example_is_the_facade_example_the_tests_run() {
    assert_eq!(
        fenced_block("docs/library.md", "# Use memrecall as a library", "rust"),
        read("crates/recall-facade/examples/library.rs")
    );
}

/// The visible lines of the first example in a crate's `lib.rs` documentation (rustdoc's hidden
/// `# ` lines left out), each ending in a newline.
fn crate_doc_example(crate_dir: &Path) -> String {
    let lib = read(&format!("{}/src/lib.rs", crate_dir.display()));
    let doc: Vec<&str> = lib
        .lines()
        .filter_map(|line| line.strip_prefix("//!"))
        .map(|line| line.strip_prefix(' ').unwrap_or(line))
        .collect();
    let start = doc
        .iter()
        .position(|line| line.starts_with("```"))
        .unwrap_or_else(|| panic!("{}: no example in lib.rs", crate_dir.display()));
    let mut example = String::new();
    for line in doc[start + 1..]
        .iter()
        .take_while(|line| !line.starts_with("```"))
        .filter(|line| line.trim() != "#" && !line.trim_start().starts_with("# "))
    {
        example.push_str(line);
        example.push('\n');
    }
    example
}

#[test]
fn each_library_readme_shows_its_crate_doc_example() {
    let crates = std::fs::read_dir(repository().join("crates")).expect("the crates folder");
    let mut checked = 0;
    for entry in crates.flatten() {
        let crate_dir = Path::new("crates").join(entry.file_name());
        let manifest = read(&format!("{}/Cargo.toml", crate_dir.display()));
        if manifest
            .lines()
            .any(|line| line.trim() == "publish = false")
        {
            continue;
        }
        // Every crate a registry may receive has a README: a new library crate is checked too.
        assert!(
            repository().join(&crate_dir).join("README.md").is_file(),
            "{} is a published crate without a README.md",
            crate_dir.display()
        );
        // The binary's crate has no library example to show.
        if !repository().join(&crate_dir).join("src/lib.rs").is_file() {
            continue;
        }
        let readme = format!("{}/README.md", crate_dir.display());
        let name = entry.file_name().to_string_lossy().into_owned();
        assert_eq!(
            fenced_block(&readme, &format!("# {name}"), "rust"),
            crate_doc_example(&crate_dir),
            "{readme} shows another example than the crate's lib.rs"
        );
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} library READMEs found");
}
