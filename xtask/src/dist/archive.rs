//! The `cargo binstall` archive: `memrecall-<version>-<target>.tar.gz` and its SHA-256 file.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Read as _, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use sha2::Digest as _;

/// Writes `memrecall-<version>-<target>.tar.gz` into `out`: one folder of the archive's name
/// holding the binary (mode 0755) and the README (0644), owned by root, every entry stamped with
/// `SOURCE_DATE_EPOCH` when it is set (so that a rebuild of the same binary packs the same
/// bytes), else with the current time. Returns its path.
pub fn write(out: &Path, target: &str, binary: &Path, readme: &Path) -> Result<PathBuf> {
    let folder = format!("memrecall-{}-{target}", super::VERSION);
    let path = out.join(format!("{folder}.tar.gz"));
    let mtime = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        });
    let file = File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
    let gzip = flate2::write::GzEncoder::new(BufWriter::new(file), flate2::Compression::best());
    let mut tar = tar::Builder::new(gzip);
    let mut folder_header = header(tar::EntryType::Directory, 0, 0o755, mtime);
    tar.append_data(&mut folder_header, format!("{folder}/"), std::io::empty())?;
    for (source, name, mode) in [
        (binary, super::executable(target), 0o755),
        (readme, "README.md", 0o644),
    ] {
        let bytes =
            std::fs::read(source).with_context(|| format!("cannot read {}", source.display()))?;
        let mut entry = header(tar::EntryType::Regular, bytes.len() as u64, mode, mtime);
        tar.append_data(&mut entry, format!("{folder}/{name}"), bytes.as_slice())?;
    }
    tar.into_inner()?.finish()?.flush()?;
    Ok(path)
}

/// A tar header of `kind`, owned by root, with the given size, mode and time.
fn header(kind: tar::EntryType, size: u64, mode: u32, mtime: u64) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.set_size(size);
    header.set_mode(mode);
    header.set_mtime(mtime);
    header.set_uid(0);
    header.set_gid(0);
    header
}

/// Writes `<archive>.sha256` beside `archive` in the form `sha256sum -c` reads (the digest, two
/// spaces, the file name). Returns its path.
pub fn write_checksum(archive: &Path) -> Result<PathBuf> {
    let mut file = File::open(archive)?;
    let mut hasher = sha2::Sha256::new();
    let mut buffer = vec![0; 1 << 16];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    let digest = hasher
        .finalize()
        .iter()
        .fold(String::with_capacity(64), |mut hex, byte| {
            // Writing to a `String` cannot fail.
            let _ = write!(hex, "{byte:02x}");
            hex
        });
    let name = archive
        .file_name()
        .context("the archive has no file name")?
        .to_string_lossy();
    let path = PathBuf::from(format!("{}.sha256", archive.display()));
    std::fs::write(&path, format!("{digest}  {name}\n"))?;
    Ok(path)
}
