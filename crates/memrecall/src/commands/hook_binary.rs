//! The binary a hook entry names, and the copy `install` makes of a binary that is somewhere
//! that goes away (the temporary directory, a downloads folder, npx's cache, a build's
//! intermediate output).
//!
//! The copy lives in `$MEMRECALL_HOME/bin/`: memrecall's own per-user directory, which the
//! user already chose (or let default to `~/.memrecall`), which exists on every platform, and
//! which `memrecall uninstall` removes with the rest. A shared directory such as `~/.local/bin`
//! holds other programs' files, is missing on Windows and on many macOS setups, and would leave
//! uninstall to guess which file there is memrecall's.

use std::path::{Path, PathBuf};

use agent_hooks::{Environment, files, paths};

use super::Failure;

/// The directory under memrecall's home that holds the copied binary.
pub(crate) const BIN_DIR: &str = "bin";

/// The binary a hook entry will name, and how it got there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HookProgram {
    /// The path the entry names.
    pub(crate) path: PathBuf,
    /// The binary `path` is a copy of, and why that one cannot be named (it is in a place that
    /// goes away); `None` when `path` is named as it is.
    pub(crate) copied_from: Option<(PathBuf, &'static str)>,
    /// Said to the user before the entry is written: a `--command` in a place that goes away.
    pub(crate) warning: Option<String>,
}

/// This process's binary, absolute and with its links resolved, as the user's shell writes it
/// (on Windows without the verbatim prefix, see [`agent_hooks::paths`]).
pub(crate) fn running_binary() -> std::io::Result<PathBuf> {
    paths::canonicalize(&std::env::current_exe()?)
}

/// Where a binary that goes away is copied: `$MEMRECALL_HOME/bin/memrecall` (`.exe` on
/// Windows).
pub(crate) fn stable_copy(env: &Environment) -> Option<PathBuf> {
    let name = format!("memrecall{}", std::env::consts::EXE_SUFFIX);
    env.memrecall_home()
        .map(|home| home.join(BIN_DIR).join(name))
}

/// Why `binary` is in a place that goes away (a build's intermediate output, the temporary
/// directory, the downloads folder, npx's cache); `None` when it is not.
pub(crate) fn temporary_place(binary: &Path, home: Option<&Path>) -> Option<&'static str> {
    let temp = std::env::temp_dir();
    let temp = paths::canonicalize(&temp).unwrap_or(temp);
    if binary.starts_with(&temp) {
        return Some("the temporary directory");
    }
    if let Some(home) = home {
        let home = paths::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
        if binary.starts_with(home.join("Downloads")) {
            return Some("the downloads folder");
        }
    }
    let names: Vec<_> = binary
        .parent()?
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if names.iter().any(|name| name == "_npx") {
        return Some("npx's cache");
    }
    names
        .windows(3)
        .any(|w| w[0] == "target" && matches!(w[2].as_str(), "deps" | "build"))
        .then_some("a build's intermediate output")
}

/// Why `path` cannot be the program a hook runs (it is missing, not a regular file, or not
/// executable); `None` when it can.
pub(crate) fn not_runnable(path: &Path) -> Option<String> {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Some("there is no such file".to_owned());
        }
        Err(e) => return Some(format!("it cannot be read ({e})")),
    };
    if !metadata.is_file() {
        return Some("it is not a regular file".to_owned());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        if metadata.permissions().mode() & 0o111 == 0 {
            return Some("it is not executable".to_owned());
        }
    }
    None
}

/// The binary the hook entry runs: `--command` as given (made absolute, refused when it is not
/// an executable file, with a warning when it is in a place that goes away), else this one, or,
/// when this one is in a place that goes away, its copy under memrecall's home (this one, with a
/// warning, when there is no home to copy it to).
pub(crate) fn hook_program(
    command: Option<&Path>,
    env: &Environment,
) -> Result<HookProgram, Failure> {
    let home = env.home();
    if let Some(given) = command {
        let absolute = std::path::absolute(given)
            .map(paths::simplified)
            .map_err(|e| Failure::from(anyhow::anyhow!("--command {}: {e}", given.display())))?;
        if let Some(why) = not_runnable(&absolute) {
            return Err(Failure::from(anyhow::anyhow!(
                "refusing --command {}: {why}; name the memrecall binary the agent should run",
                absolute.display()
            )));
        }
        let resolved = paths::canonicalize(&absolute).unwrap_or_else(|_| absolute.clone());
        let warning = temporary_place(&resolved, home.as_deref()).map(|place| {
            format!(
                "warning: --command {} is in {place}, which goes away: the hook stops running when it is gone",
                absolute.display()
            )
        });
        return Ok(HookProgram {
            path: absolute,
            copied_from: None,
            warning,
        });
    }
    let binary = running_binary().map_err(|e| {
        Failure::from(anyhow::anyhow!(
            "cannot tell where this binary is ({e}): name it with --command PATH"
        ))
    })?;
    let Some(place) = temporary_place(&binary, home.as_deref()) else {
        return Ok(HookProgram {
            path: binary,
            copied_from: None,
            warning: None,
        });
    };
    let Some(copy) = stable_copy(env) else {
        let warning = format!(
            "warning: {} is in {place}, which goes away, and there is no home to copy it to (set HOME or MEMRECALL_HOME, or name a binary with --command PATH)",
            binary.display()
        );
        return Ok(HookProgram {
            path: binary,
            copied_from: None,
            warning: Some(warning),
        });
    };
    if copy == binary {
        return Ok(HookProgram {
            path: binary,
            copied_from: None,
            warning: None,
        });
    }
    Ok(HookProgram {
        path: copy,
        copied_from: Some((binary, place)),
        warning: None,
    })
}

/// Copies `from` to `to` ([`files::copy_executable`]), creating `to`'s directory: a hook never
/// starts a half-written binary.
pub(crate) fn copy_binary(from: &Path, to: &Path) -> std::io::Result<()> {
    let dir = to
        .parent()
        .ok_or_else(|| std::io::Error::other("the copy's path has no directory"))?;
    std::fs::create_dir_all(dir)?;
    files::copy_executable(from, to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_that_is_missing_a_directory_or_not_executable_is_not_runnable() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("memrecall");
        assert_eq!(
            not_runnable(&missing).as_deref(),
            Some("there is no such file")
        );
        assert_eq!(
            not_runnable(dir.path()).as_deref(),
            Some("it is not a regular file")
        );
        std::fs::write(&missing, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            assert_eq!(
                not_runnable(&missing).as_deref(),
                Some("it is not executable")
            );
            std::fs::set_permissions(&missing, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        assert_eq!(not_runnable(&missing), None);
    }

    #[test]
    fn a_binary_among_a_builds_dependencies_is_in_a_temporary_place() {
        let deps = Path::new("/src/app/target/debug/deps/memrecall-0123abcd");
        assert!(temporary_place(deps, None).is_some());
        let built = Path::new("/src/app/target/debug/memrecall");
        assert_eq!(temporary_place(built, None), None);
        let installed = Path::new("/home/ana/.cargo/bin/memrecall");
        assert_eq!(temporary_place(installed, None), None);
    }

    #[test]
    fn a_binary_in_the_downloads_folder_or_npxs_cache_is_in_a_temporary_place() {
        let home = Path::new("/home/ana");
        let downloaded = Path::new("/home/ana/Downloads/memrecall-x64/memrecall");
        assert_eq!(
            temporary_place(downloaded, Some(home)),
            Some("the downloads folder")
        );
        let npx = Path::new("/home/ana/.npm/_npx/0a1b/node_modules/.bin/memrecall");
        assert_eq!(temporary_place(npx, Some(home)), Some("npx's cache"));
        let global = Path::new("/home/ana/.npm-global/bin/memrecall");
        assert_eq!(temporary_place(global, Some(home)), None);
    }
}
