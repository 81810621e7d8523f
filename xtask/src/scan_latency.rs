//! `cargo xtask scan-latency`: time from the recall call to the fast result on real trees.

use anyhow::Result;

/// Entry point of `cargo xtask scan-latency`.
pub fn main(_args: &[String]) -> Result<()> {
    anyhow::bail!("scan-latency is not implemented yet")
}
