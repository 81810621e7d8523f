//! `cargo xtask compare-scorers`: one query ranked over memory directories by the shipped scorer
//! and by the frozen scorer, side by side. `cargo xtask eval` compares the two over the
//! corpus; this shows the comparison on a tree of one's own. The frozen scorer is a measurement
//! tool (`lexical-score`'s `measurement` feature), so it lives here and not in the binary.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result};
use lexical_score::measurement::frozen;
use lexical_score::{QueryTokens, Ranked};
use memory_scan::{DocumentCache, MemoryRoots, ScannedDocument};

/// The options of `cargo xtask compare-scorers`.
#[derive(Debug, clap::Parser)]
#[command(args_override_self = true)]
#[command(group = clap::ArgGroup::new("roots").required(true).multiple(true))]
pub struct CompareScorersArgs {
    /// What the user asked
    query: String,
    /// A project memory directory
    #[arg(long, value_name = "DIR", group = "roots")]
    project: Option<PathBuf>,
    /// A user memory directory
    #[arg(long, value_name = "DIR", group = "roots")]
    user: Option<PathBuf>,
    /// How many documents each scorer shows; 0 shows every match
    #[arg(long, value_name = "N", default_value_t = 5)]
    limit: usize,
}

/// Entry point of `cargo xtask compare-scorers`.
pub fn main(args: &CompareScorersArgs) -> Result<()> {
    let roots = MemoryRoots {
        project: args.project.clone(),
        user: args.user.clone(),
    };
    let scan = DocumentCache::new()
        .scan_recall(&roots)
        .context("cannot scan the memory directories")?;
    let documents: Vec<&ScannedDocument> = scan.documents.iter().map(AsRef::as_ref).collect();
    print!("{}", compare(&args.query, &documents, args.limit));
    Ok(())
}

/// Both rankings of `query` over `documents` as a table, at most `limit` rows (0: every match).
fn compare(query: &str, documents: &[&ScannedDocument], limit: usize) -> String {
    let shipped = lexical_score::rank(&QueryTokens::new(query), documents);
    let frozen_documents: Vec<frozen::FrozenDocument<'_>> = documents
        .iter()
        .map(|d| frozen::FrozenDocument {
            memory_type: d.memory_type(),
            title: d.title(),
            description: d.description(),
            body: d.body(),
        })
        .collect();
    let frozen = frozen::rank(query, &frozen_documents);
    let limit = if limit == 0 { usize::MAX } else { limit };
    let cell = |ranking: &[Ranked], row: usize| {
        ranking
            .get(row)
            .and_then(|r| {
                let d = documents.get(r.index)?;
                Some(format!(
                    "{} {}/{}",
                    r.score,
                    d.scope().as_str(),
                    d.relative_path().display()
                ))
            })
            .unwrap_or_else(|| "-".to_owned())
    };
    let rows: Vec<(String, String)> = (0..shipped.len().max(frozen.len()).min(limit))
        .map(|row| (cell(&shipped, row), cell(&frozen, row)))
        .collect();
    let width = rows
        .iter()
        .map(|(shipped, _)| shipped.chars().count())
        .chain(["shipped (score, document)".len()])
        .max()
        .unwrap_or_default();
    let mut out = format!(
        "query: {query}\n{} document(s) scanned; {} matched by the shipped scorer, {} by the frozen one\n\n",
        documents.len(),
        shipped.len(),
        frozen.len()
    );
    let _ = writeln!(
        out,
        "  # | {:<width$} | frozen (score, document)",
        "shipped (score, document)"
    );
    for (i, (shipped, frozen)) in rows.iter().enumerate() {
        let _ = writeln!(out, "{:>3} | {shipped:<width$} | {frozen}", i + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    /// The frozen scorer sees no Chinese word, and gives every non-empty body a point.
    #[test]
    fn each_scorer_ranks_in_its_own_column_and_a_rank_it_lacks_is_a_dash() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("migrations.md"),
            "---\nname: 数据库迁移\ndescription: database migrations\ntype: project\n---\n先备份。\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("deploys.md"),
            "---\nname: Deploys\ndescription: how to deploy\ntype: project\n---\nRun the script.\n",
        )
        .unwrap();
        let roots = MemoryRoots {
            project: Some(dir.path().to_path_buf()),
            user: None,
        };
        let scan = DocumentCache::new().scan_recall(&roots).unwrap();
        let documents: Vec<&ScannedDocument> = scan.documents.iter().map(AsRef::as_ref).collect();

        let table = compare("数据库迁移", &documents, 5);

        let cells = |rank: &str| -> Vec<String> {
            let row = table.lines().find(|l| l.starts_with(rank)).unwrap();
            row.split(" | ").map(|c| c.trim().to_owned()).collect()
        };
        assert!(
            cells("  1 |")[1].ends_with(" project/migrations.md"),
            "{table}"
        );
        assert_eq!(cells("  2 |")[1], "-", "{table}");
        assert_eq!(cells("  2 |")[2], "1 project/migrations.md", "{table}");
        assert!(
            table.contains(
                "2 document(s) scanned; 1 matched by the shipped scorer, 2 by the frozen one"
            ),
            "{table}"
        );
    }

    #[test]
    fn a_memory_directory_is_required_and_the_limit_defaults_to_five() {
        assert!(CompareScorersArgs::try_parse_from(["compare-scorers", "deploys"]).is_err());
        let args =
            CompareScorersArgs::try_parse_from(["compare-scorers", "deploys", "--user", "/m"])
                .unwrap();
        assert_eq!(args.limit, 5);
    }
}
