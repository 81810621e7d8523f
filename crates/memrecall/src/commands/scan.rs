//! `memrecall scan`: the documents found, the files skipped and the scan time.

use std::time::Instant;

use clap::Args;
use memory_scan::DocumentCache;

use super::roots::{RootArgs, resolve_roots};
use super::{Failure, emit};
use crate::output::ScanOutput;

#[derive(Debug, Args)]
pub(crate) struct ScanArgs {
    #[command(flatten)]
    roots: RootArgs,
    /// Print machine-readable JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &ScanArgs) -> Result<(), Failure> {
    let roots = resolve_roots(&args.roots)?.memory_roots();
    let started = Instant::now();
    let scan = DocumentCache::new()
        .scan_recall(&roots)
        .map_err(|e| Failure::root(e.to_string()))?;
    let output = ScanOutput::new(&roots, &scan, started.elapsed());
    if args.json {
        emit(&format!("{}\n", output.to_json()?))?;
    } else {
        emit(&output.to_text())?;
    }
    Ok(())
}
