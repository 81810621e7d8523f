//! `memrecall rank`: the deterministic ranking with each field's score contribution.

use std::time::Instant;

use clap::Args;
use memory_scan::DocumentCache;

use super::roots::{RootArgs, resolve_roots};
use super::{Failure, emit};
use crate::output::RankRow;

#[derive(Debug, Args)]
pub(crate) struct RankArgs {
    /// What the user asked.
    query: String,
    #[command(flatten)]
    roots: RootArgs,
    /// How many documents to show; 0 shows every match.
    #[arg(long, default_value_t = 5)]
    limit: usize,
    /// Print machine-readable JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &RankArgs) -> Result<(), Failure> {
    let roots = resolve_roots(&args.roots)?.memory_roots();
    let started = Instant::now();
    let scan = DocumentCache::new()
        .scan_recall(&roots)
        .map_err(|e| Failure::root(e.to_string()))?;
    let scan_time = started.elapsed();
    let rows = RankRow::rank(&args.query, &scan.documents);
    let verdicts = crate::output::token_verdicts(&args.query, &scan.documents);
    let limit = if args.limit == 0 {
        usize::MAX
    } else {
        args.limit
    };
    let rows: Vec<RankRow> = rows.into_iter().take(limit).collect();
    if args.json {
        let value = serde_json::json!({
            "query": args.query,
            "scorer": "shipped",
            "documents": scan.documents.len(),
            "scan_ms": scan_time.as_secs_f64() * 1_000.0,
            "tokens": verdicts,
            "ranked": rows,
        });
        emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&value).map_err(anyhow::Error::from)?
        ))?;
    } else {
        emit(&RankRow::to_text(
            &args.query,
            &rows,
            &verdicts,
            scan.documents.len(),
        ))?;
    }
    Ok(())
}
