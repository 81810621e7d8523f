//! Files and directories private to the user: what memrecall keeps under its home is about the
//! user's prompts and memory.

use std::path::Path;

/// Creates `dir` and its missing parents, each private to this user (0700 on Unix): what
/// memrecall keeps under its home.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// `options` creating a file private to this user (0600 on Unix) and refusing a symlink in its
/// place (`O_NOFOLLOW`: the open fails rather than write through a link to another file).
pub fn private_file(options: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        let no_follow = rustix::fs::OFlags::NOFOLLOW.bits();
        options
            .mode(0o600)
            .custom_flags(i32::try_from(no_follow).unwrap_or(0));
    }
    options
}
