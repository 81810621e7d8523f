//! `cargo xtask eval`: recall quality, delivery and deterministic scoring latency.

use anyhow::Result;

/// Entry point of `cargo xtask eval`.
pub fn main(_args: &[String]) -> Result<()> {
    anyhow::bail!("eval is not implemented yet")
}
