//! `cargo xtask unused-deps`: every dependency a workspace crate declares is named in its code,
//! and every entry of `[workspace.dependencies]` is declared by some crate.
//!
//! A dependency counts as named when a source file of the right kind holds `name::`,
//! `use name` or `extern crate name` with `name` not preceded by an identifier character
//! (`tokio::select!`, `#[derive(serde::Serialize)]` and `use serde_json::json;` all count), or
//! `"name"` / `"name::` as the value of a path-taking attribute key (serde's `with = "…"`,
//! `crate = "…"`). Comments and other string literals do not count: a test asserting on a log
//! target `"name::module"` names no crate (see [`code_only`]).
//! Normal and build dependencies must be named under the package's `src/` (or its `build.rs`);
//! dev-dependencies anywhere in the package (tests, benches, examples, doctests in `src/`). A
//! dependency declared only to switch on a feature of another is listed in [`ALLOWED`] with its
//! reason; an allowance whose dependency its package no longer declares is reported too, so the
//! list holds only what it still lets through.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

mod code;

use code::code_only;

/// `(package, dependency, reason)`: dependencies the check lets through, each for its reason.
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "xtask",
        "zerovec",
        "named by the icu_segmenter_data macros `cargo xtask icu-data` expands",
    ),
    (
        "xtask",
        "zerotrie",
        "named by the icu_segmenter_data macros `cargo xtask icu-data` expands",
    ),
];

/// Runs the check on the workspace; fails listing every finding.
pub fn main() -> Result<()> {
    let root = crate::workspace_root()?;
    let metadata = metadata(&root)?;
    let workspace_manifest = std::fs::read_to_string(root.join("Cargo.toml"))
        .context("cannot read the workspace's Cargo.toml")?;
    let mut findings = unused_in_packages(&metadata.members())?;
    findings.extend(unused_workspace_entries(
        &workspace_manifest,
        &metadata.members(),
    )?);
    findings.extend(stale_allowances(ALLOWED, &metadata.members()));
    if findings.is_empty() {
        println!(
            "unused-deps: every declared dependency of the {} workspace crates is used",
            metadata.members().len()
        );
        return Ok(());
    }
    for finding in &findings {
        eprintln!("unused-deps: {finding}");
    }
    bail!(
        "{} findings: remove each unused dependency (or add it to ALLOWED in xtask/src/unused_deps.rs with the reason) and each stale allowance",
        findings.len()
    )
}

/// What `cargo metadata --no-deps` says of the workspace.
#[derive(Debug, Deserialize)]
pub struct Metadata {
    packages: Vec<Package>,
    workspace_members: Vec<String>,
}

impl Metadata {
    fn members(&self) -> Vec<&Package> {
        self.packages
            .iter()
            .filter(|p| self.workspace_members.contains(&p.id))
            .collect()
    }
}

/// One workspace crate.
#[derive(Debug, Deserialize)]
pub struct Package {
    name: String,
    id: String,
    manifest_path: PathBuf,
    dependencies: Vec<Dependency>,
    /// Its targets; a test target may live outside the package's directory.
    #[serde(default)]
    targets: Vec<Target>,
}

/// One build target of a crate.
#[derive(Debug, Deserialize)]
pub struct Target {
    /// The target's root source file.
    src_path: PathBuf,
}

/// One declared dependency.
#[derive(Debug, Deserialize)]
pub struct Dependency {
    name: String,
    rename: Option<String>,
    /// `None` for a normal dependency, else `"dev"` or `"build"`.
    kind: Option<String>,
}

impl Dependency {
    /// The name code uses for it: the rename, else the package name with `-` as `_`.
    fn crate_name(&self) -> String {
        self.rename
            .as_deref()
            .unwrap_or(&self.name)
            .replace('-', "_")
    }

    fn is_dev(&self) -> bool {
        self.kind.as_deref() == Some("dev")
    }
}

/// One dependency nothing uses.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Finding {
    /// A crate declares a dependency its code never names.
    Unnamed {
        /// The declaring crate.
        package: String,
        /// The dependency, as declared.
        dependency: String,
        /// Whether it is a dev-dependency.
        dev: bool,
    },
    /// A `[workspace.dependencies]` entry no crate declares.
    UndeclaredWorkspaceEntry {
        /// The entry's key.
        dependency: String,
    },
    /// An [`ALLOWED`] entry whose package does not declare its dependency (any more).
    StaleAllowance {
        /// The package the allowance names.
        package: String,
        /// The dependency it lets through.
        dependency: String,
    },
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unnamed {
                package,
                dependency,
                dev,
            } => {
                let kind = if *dev { "dev-dependency" } else { "dependency" };
                write!(
                    f,
                    "{package} declares the {kind} {dependency} but never names it"
                )
            }
            Self::UndeclaredWorkspaceEntry { dependency } => write!(
                f,
                "[workspace.dependencies] lists {dependency} but no workspace crate declares it"
            ),
            Self::StaleAllowance {
                package,
                dependency,
            } => write!(
                f,
                "ALLOWED lets {package}'s {dependency} through but {package} does not declare it: remove the allowance"
            ),
        }
    }
}

fn metadata(root: &Path) -> Result<Metadata> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .current_dir(root)
        .output()
        .context("could not start cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    serde_json::from_slice(&output.stdout).context("cannot read cargo metadata's output")
}

/// The dependencies each package declares but never names.
pub fn unused_in_packages(packages: &[&Package]) -> Result<Vec<Finding>> {
    let mut findings = Vec::new();
    for package in packages {
        let dir = package
            .manifest_path
            .parent()
            .context("a manifest path has a parent directory")?;
        let src_dir = dir.join("src");
        let mut all_sources = read_sources(dir)?;
        // Targets declared outside the package's directory (end-to-end tests kept in the
        // workspace's `tests/`) count with the dev-dependencies' users.
        // Compared resolved: cargo names such a target `crates/x/../../tests/…`.
        let resolved_dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let outside: BTreeSet<PathBuf> = package
            .targets
            .iter()
            .filter_map(|target| std::fs::canonicalize(&target.src_path).ok())
            .filter(|src| !src.starts_with(&resolved_dir))
            .filter_map(|src| src.parent().map(Path::to_path_buf))
            .collect();
        for target_dir in outside {
            all_sources.extend(read_sources(&target_dir)?);
        }
        let mut build_sources = read_sources(&src_dir)?;
        if let Ok(build) = std::fs::read_to_string(dir.join("build.rs")) {
            build_sources.push(build);
        }
        let mut seen = BTreeSet::new();
        for dependency in &package.dependencies {
            let name = dependency.crate_name();
            // The same crate may be declared twice (normal and dev, to add test features).
            if !seen.insert((name.clone(), dependency.is_dev())) {
                continue;
            }
            if ALLOWED
                .iter()
                .any(|&(p, d, _)| p == package.name && d == dependency.name)
            {
                continue;
            }
            let sources = if dependency.is_dev() {
                &all_sources
            } else {
                &build_sources
            };
            if !sources.iter().any(|source| names_crate(source, &name)) {
                findings.push(Finding::Unnamed {
                    package: package.name.clone(),
                    dependency: dependency.name.clone(),
                    dev: dependency.is_dev(),
                });
            }
        }
    }
    findings.sort();
    Ok(findings)
}

/// The `[workspace.dependencies]` entries that no member declares.
pub fn unused_workspace_entries(manifest: &str, packages: &[&Package]) -> Result<Vec<Finding>> {
    let manifest: toml::Table = toml::from_str(manifest).context("the workspace's Cargo.toml")?;
    let Some(entries) = manifest
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(toml::Value::as_table)
    else {
        return Ok(Vec::new());
    };
    let declared: BTreeSet<&str> = packages
        .iter()
        .flat_map(|p| &p.dependencies)
        .map(|d| d.name.as_str())
        .collect();
    Ok(entries
        .keys()
        .filter(|key| !declared.contains(key.as_str()))
        .map(|key| Finding::UndeclaredWorkspaceEntry {
            dependency: key.clone(),
        })
        .collect())
}

/// The allowances of `allowed` (`(package, dependency, reason)`) whose package is not among
/// `packages` or does not declare the dependency: left in place, each would let the dependency
/// through unchecked if it came back.
pub fn stale_allowances(allowed: &[(&str, &str, &str)], packages: &[&Package]) -> Vec<Finding> {
    allowed
        .iter()
        .filter(|&&(package, dependency, _)| {
            !packages
                .iter()
                .any(|p| p.name == package && p.dependencies.iter().any(|d| d.name == dependency))
        })
        .map(|&(package, dependency, _)| Finding::StaleAllowance {
            package: package.to_owned(),
            dependency: dependency.to_owned(),
        })
        .collect()
}

/// The text of every Rust source under `dir` (none when it does not exist): `.rs` files and the
/// `.rs.data` files of ICU4X baked data, which a module pulls in with `include!`.
fn read_sources(dir: &Path) -> Result<Vec<String>> {
    let mut sources = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => {
                return Err(error).with_context(|| format!("cannot list {}", dir.display()));
            }
        };
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
            let path = entry.path();
            let file_type = entry.file_type()?;
            if file_type.is_dir() {
                pending.push(path);
            } else if file_type.is_file() && is_rust_source(&path) {
                sources.push(
                    std::fs::read_to_string(&path)
                        .with_context(|| format!("cannot read {}", path.display()))?,
                );
            }
        }
    }
    Ok(sources)
}

/// Whether `path` is a `.rs` file or baked data (`.rs.data`).
fn is_rust_source(path: &Path) -> bool {
    match path.extension().and_then(|e| e.to_str()) {
        Some("rs") => true,
        Some("data") => path
            .file_stem()
            .is_some_and(|stem| Path::new(stem).extension().is_some_and(|e| e == "rs")),
        _ => false,
    }
}

/// Whether `source` names the crate `name` as a path root, in a `use` or in `extern crate`,
/// outside comments and string literals (but for an attribute's path value).
fn names_crate(source: &str, name: &str) -> bool {
    let code = code_only(source);
    names_crate_in_code(&code, name)
}

/// [`names_crate`] on code whose comments and plain string literals are already blanked.
fn names_crate_in_code(source: &str, name: &str) -> bool {
    source.match_indices(name).any(|(at, _)| {
        let before = source[..at].chars().next_back();
        let after = &source[at + name.len()..];
        if before == Some('"') && (after.starts_with('"') || after.starts_with("::")) {
            return true;
        }
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            return false;
        }
        if after.starts_with("::") {
            return true;
        }
        let after_is_boundary = after
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let preceding = source[..at].trim_end();
        after_is_boundary && (preceding.ends_with("use") || preceding.ends_with("extern crate"))
    })
}

#[cfg(test)]
mod tests;
