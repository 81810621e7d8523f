//! Paths as the user and the agents write them.
//!
//! On Windows `std::fs::canonicalize` returns a verbatim path (`\\?\C:\Users\ana\shop`,
//! `\\?\UNC\server\share\shop`), which no agent writes: a folder named after it, a command that
//! runs it or a line that prints it would differ from the agent's by the prefix. [`canonicalize`]
//! is the one canonicalisation memrecall uses for a path it names a folder after, installs or
//! shows; it gives the path without the prefix whenever the path means the same without it
//! ([`plain_form`]), and the verbatim path otherwise. Elsewhere it is `std::fs::canonicalize`.
//!
//! How a program's path is written in a hook command is here too ([`command_path`]): Windows
//! shells all read `C:/Users/ana/memrecall.exe` as the same program, where Git Bash would take
//! the backslashes of `C:\Users\ana\memrecall.exe` for escapes.

use std::path::{Path, PathBuf};

/// `path` made absolute with every link resolved, without a verbatim prefix the path does not
/// need.
pub fn canonicalize(path: &Path) -> std::io::Result<PathBuf> {
    std::fs::canonicalize(path).map(simplified)
}

/// `path` without a verbatim prefix it does not need (Windows; elsewhere `path` as it is).
pub fn simplified(path: PathBuf) -> PathBuf {
    platform::simplified(path)
}

/// The text a hook command names `program` by: on Windows with `/` for `\`.
pub fn command_path(program: &Path) -> String {
    platform::command_path(program)
}

/// The longest path, in UTF-16 units, Windows programs that do not opt into long paths accept
/// (`MAX_PATH`, the terminating NUL included).
const MAX_PATH: usize = 260;

/// The form of the verbatim path `verbatim` without its prefix, when that form names the same
/// file: `\\?\C:\a\b` gives `C:\a\b` and `\\?\UNC\server\share\a` gives `\\server\share\a`,
/// provided the result is shorter than `MAX_PATH` and no component would be read differently
/// without the prefix (`.` or `..`, a name ending in a dot or a space, a character Windows
/// names cannot hold, or a device name such as `CON` or `nul.txt`). `None` for any other path,
/// or one that needs its prefix.
pub fn plain_form(verbatim: &str) -> Option<String> {
    let plain = if let Some(rest) = verbatim.strip_prefix(r"\\?\UNC\") {
        let mut parts = rest.splitn(3, '\\');
        let (server, share) = (parts.next()?, parts.next()?);
        if !valid_name(server) || !valid_name(share) {
            return None;
        }
        let tail = parts.next().unwrap_or("");
        all_valid(tail)?;
        format!(r"\\{rest}")
    } else {
        let rest = verbatim.strip_prefix(r"\\?\")?;
        let mut chars = rest.chars();
        let (drive, colon, separator) = (chars.next()?, chars.next()?, chars.next());
        if !drive.is_ascii_alphabetic() || colon != ':' || !matches!(separator, None | Some('\\')) {
            return None;
        }
        all_valid(rest.get(3..).unwrap_or(""))?;
        if separator.is_none() {
            format!(r"{rest}\")
        } else {
            rest.to_owned()
        }
    };
    (plain.encode_utf16().count() < MAX_PATH).then_some(plain)
}

/// `Some(())` when every `\`-separated component of `tail` is a valid name (an empty `tail`, or
/// one ending in `\`, is a directory's path).
fn all_valid(tail: &str) -> Option<()> {
    let tail = tail.strip_suffix('\\').unwrap_or(tail);
    if tail.is_empty() {
        return Some(());
    }
    tail.split('\\').all(valid_name).then_some(())
}

/// Whether `name` is read as itself in a path without the verbatim prefix.
fn valid_name(name: &str) -> bool {
    const RESERVED: [&str; 4] = ["CON", "PRN", "AUX", "NUL"];
    if name.is_empty() || name == "." || name == ".." || name.ends_with(['.', ' ']) {
        return false;
    }
    if name
        .chars()
        .any(|c| c < ' ' || matches!(c, '<' | '>' | ':' | '"' | '/' | '|' | '?' | '*'))
    {
        return false;
    }
    let stem = name.split('.').next().unwrap_or(name).trim_end();
    let numbered = |prefix: &str| {
        stem.len() == 4
            && stem[..3].eq_ignore_ascii_case(prefix)
            && stem.as_bytes()[3].is_ascii_digit()
            && stem.as_bytes()[3] != b'0'
    };
    !(RESERVED.iter().any(|r| stem.eq_ignore_ascii_case(r)) || numbered("COM") || numbered("LPT"))
}

#[cfg(windows)]
mod platform {
    use std::path::{Path, PathBuf};

    pub(super) fn simplified(path: PathBuf) -> PathBuf {
        match path.to_str().and_then(super::plain_form) {
            Some(plain) => PathBuf::from(plain),
            None => path,
        }
    }

    pub(super) fn command_path(program: &Path) -> String {
        program.to_string_lossy().replace('\\', "/")
    }
}

#[cfg(not(windows))]
mod platform {
    use std::path::{Path, PathBuf};

    pub(super) fn simplified(path: PathBuf) -> PathBuf {
        path
    }

    pub(super) fn command_path(program: &Path) -> String {
        program.to_string_lossy().into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verbatim_drive_path_loses_its_prefix() {
        assert_eq!(
            plain_form(r"\\?\Z:\work\shop").as_deref(),
            Some(r"Z:\work\shop")
        );
        assert_eq!(plain_form(r"\\?\C:\").as_deref(), Some(r"C:\"));
        assert_eq!(plain_form(r"\\?\C:").as_deref(), Some(r"C:\"));
    }

    #[test]
    fn a_verbatim_unc_path_becomes_a_plain_unc_path() {
        assert_eq!(
            plain_form(r"\\?\UNC\server\share\shop").as_deref(),
            Some(r"\\server\share\shop")
        );
        assert_eq!(
            plain_form(r"\\?\UNC\server\share").as_deref(),
            Some(r"\\server\share")
        );
        assert_eq!(plain_form(r"\\?\UNC\server"), None);
    }

    #[test]
    fn a_path_that_means_something_else_without_its_prefix_keeps_it() {
        for path in [
            r"\\?\C:\a\con",
            r"\\?\C:\a\NUL.txt",
            r"\\?\C:\a\com1",
            r"\\?\C:\a\lpt9.log",
            r"\\?\C:\a\trailing.",
            r"\\?\C:\a\trailing ",
            r"\\?\C:\a\..\b",
            r"\\?\C:\a\.\b",
            r"\\?\C:\a\b|c",
            r"\\?\C:\a\\b",
            r"\\?\Volume{0b1c}\a",
            r"\\?\GLOBALROOT\Device\HarddiskVolume1\a",
        ] {
            assert_eq!(plain_form(path), None, "{path}");
        }
    }

    #[test]
    fn names_that_only_look_like_devices_lose_the_prefix() {
        for name in ["console", "com0", "comx", "lpt10", "nul_", "aux-notes"] {
            let path = format!(r"\\?\C:\a\{name}");
            assert_eq!(plain_form(&path), Some(format!(r"C:\a\{name}")), "{name}");
        }
    }

    #[test]
    fn a_path_too_long_for_programs_without_long_paths_keeps_its_prefix() {
        let long = format!(r"\\?\C:\{}", "x".repeat(MAX_PATH));
        assert_eq!(plain_form(&long), None);
        let fits = format!(r"\\?\C:\{}", "x".repeat(MAX_PATH - 4));
        assert!(plain_form(&fits).is_some());
    }

    #[test]
    fn a_path_without_the_prefix_has_no_plain_form_to_give() {
        assert_eq!(plain_form(r"C:\a"), None);
        assert_eq!(plain_form("/home/ana"), None);
    }

    #[test]
    fn canonicalize_resolves_a_real_directory_to_the_form_the_agents_see() {
        let dir = tempfile::tempdir().unwrap();
        let shop = dir.path().join("shop");
        std::fs::create_dir(&shop).unwrap();
        let canonical = canonicalize(&shop.join(".")).unwrap();
        assert!(canonical.is_absolute(), "{}", canonical.display());
        assert!(
            !canonical.to_string_lossy().starts_with(r"\\?\"),
            "{}",
            canonical.display()
        );
        assert_eq!(canonical.file_name(), Some(std::ffi::OsStr::new("shop")));
        assert_eq!(
            std::fs::canonicalize(&canonical).unwrap(),
            std::fs::canonicalize(&shop).unwrap()
        );
    }

    #[cfg(windows)]
    #[test]
    fn on_windows_std_canonicalize_is_verbatim_and_ours_is_the_drive_path() {
        let dir = tempfile::tempdir().unwrap();
        let std_form = std::fs::canonicalize(dir.path()).unwrap();
        assert!(
            std_form.to_string_lossy().starts_with(r"\\?\"),
            "{std_form:?}"
        );
        let ours = canonicalize(dir.path()).unwrap();
        assert_eq!(
            ours.to_string_lossy(),
            std_form.to_string_lossy().trim_start_matches(r"\\?\")
        );
    }

    #[cfg(windows)]
    #[test]
    fn on_windows_a_command_names_a_program_with_forward_slashes() {
        assert_eq!(
            command_path(Path::new(r"C:\Users\ana\.memrecall\bin\memrecall.exe")),
            "C:/Users/ana/.memrecall/bin/memrecall.exe"
        );
    }

    #[cfg(not(windows))]
    #[test]
    fn elsewhere_a_command_names_a_program_as_it_is() {
        assert_eq!(
            command_path(Path::new(r"/opt/a\b/memrecall")),
            r"/opt/a\b/memrecall"
        );
    }
}
