//! `cargo xtask class-table`: rewrites `lexical-score`'s character class table
//! (`crates/lexical-score/src/text/class_table.rs`) from the Unicode tables of the crates it is
//! built with. Run it after a Unicode update; a unit test of `lexical-score` fails while the
//! committed table differs from what they give.

use std::io::Write as _;

use anyhow::{Context, Result};

/// Writes the table file when it differs from what the Unicode tables give, and says which.
pub fn main() -> Result<()> {
    let path = lexical_score::class_table::path();
    let source = lexical_score::class_table::source();
    let current =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    if current == source {
        println!("{} is up to date", path.display());
        return Ok(());
    }
    // Written beside the file and renamed over it, so an interrupted run leaves the old table.
    let directory = path
        .parent()
        .with_context(|| format!("{} has no parent directory", path.display()))?;
    let mut file = tempfile::NamedTempFile::new_in(directory)
        .with_context(|| format!("creating a temporary file in {}", directory.display()))?;
    let permissions = std::fs::metadata(&path)
        .with_context(|| format!("reading the permissions of {}", path.display()))?
        .permissions();
    file.write_all(source.as_bytes())
        .and_then(|()| file.as_file().set_permissions(permissions))
        .and_then(|()| file.as_file().sync_all())
        .with_context(|| format!("writing the new table beside {}", path.display()))?;
    file.persist(&path)
        .with_context(|| format!("replacing {}", path.display()))?;
    println!("rewrote {}", path.display());
    Ok(())
}
