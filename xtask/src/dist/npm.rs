//! The npm packages: `memrecall` (the launcher, one optional dependency per platform) and
//! `memrecall-<platform>-<arch>` (one platform's binary, installed by npm only where its `os` and
//! `cpu` match). Only the host's platform package is built; the others are declared.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, ensure};
use serde_json::{Value, json};

/// A platform with a prebuilt binary: its Rust target and Node's names for its OS and CPU
/// (`process.platform`, `process.arch`), which name its package. `launcher.js` lists the same.
pub struct Platform {
    pub target: &'static str,
    pub os: &'static str,
    pub cpu: &'static str,
}

impl Platform {
    /// The npm package holding this platform's binary.
    pub fn package(&self) -> String {
        format!("memrecall-{}-{}", self.os, self.cpu)
    }
}

/// Every platform the `memrecall` package declares.
pub const PLATFORMS: [Platform; 5] = [
    Platform {
        target: "x86_64-unknown-linux-gnu",
        os: "linux",
        cpu: "x64",
    },
    Platform {
        target: "aarch64-unknown-linux-gnu",
        os: "linux",
        cpu: "arm64",
    },
    Platform {
        target: "x86_64-apple-darwin",
        os: "darwin",
        cpu: "x64",
    },
    Platform {
        target: "aarch64-apple-darwin",
        os: "darwin",
        cpu: "arm64",
    },
    Platform {
        target: "x86_64-pc-windows-msvc",
        os: "win32",
        cpu: "x64",
    },
];

/// The launcher, `bin/memrecall.js` of the `memrecall` package.
const LAUNCHER: &str = include_str!("launcher.js");

/// The repository every package links to (the workspace's `repository`).
const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

/// The package folders written.
pub struct Packages {
    pub main: PathBuf,
    /// The host's platform package; `None` when the host is not one of [`PLATFORMS`].
    pub platform: Option<PathBuf>,
}

/// Whether an `npm` command can be started.
pub fn available() -> bool {
    Command::new(npm())
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// The npm command (a batch file on Windows, which `Command` does not find without its suffix).
pub fn npm() -> &'static str {
    if cfg!(windows) { "npm.cmd" } else { "npm" }
}

/// Writes the `memrecall` package and, when the host is a declared platform, its platform
/// package (holding `binary`) under `dir`.
pub fn write_packages(dir: &Path, target: &str, binary: &Path) -> Result<Packages> {
    let main = dir.join("memrecall");
    std::fs::create_dir_all(main.join("bin"))?;
    write_json(&main.join("package.json"), &main_manifest())?;
    std::fs::write(main.join("bin/memrecall.js"), LAUNCHER)?;
    set_mode(&main.join("bin/memrecall.js"), 0o755)?;
    std::fs::write(main.join("README.md"), main_readme())?;

    let Some(platform) = PLATFORMS.iter().find(|p| p.target == target) else {
        return Ok(Packages {
            main,
            platform: None,
        });
    };
    let package = dir.join(platform.package());
    std::fs::create_dir_all(package.join("bin"))?;
    write_json(&package.join("package.json"), &platform_manifest(platform))?;
    let installed = package.join("bin").join(super::executable(target));
    std::fs::copy(binary, &installed)
        .with_context(|| format!("cannot copy {}", binary.display()))?;
    set_mode(&installed, 0o755)?;
    std::fs::write(
        package.join("README.md"),
        format!(
            "# {}\n\nThe `memrecall` binary for {target}, installed by the `memrecall` package \
             ({REPOSITORY}); not meant to be installed on its own.\n",
            platform.package()
        ),
    )?;
    Ok(Packages {
        main,
        platform: Some(package),
    })
}

/// `package.json` of the `memrecall` package.
fn main_manifest() -> Value {
    let optional: serde_json::Map<String, Value> = PLATFORMS
        .iter()
        .map(|p| (p.package(), Value::from(super::VERSION)))
        .collect();
    json!({
        "name": "memrecall",
        "version": super::VERSION,
        "description": "Fast, reliable recall of an AI coding agent's Markdown memories",
        "license": "MIT OR Apache-2.0",
        "repository": { "type": "git", "url": format!("git+{REPOSITORY}.git") },
        "bin": { "memrecall": "bin/memrecall.js" },
        "files": ["bin/memrecall.js", "README.md"],
        "engines": { "node": ">=18" },
        "optionalDependencies": optional,
    })
}

/// `package.json` of a platform package: no command of its own, installed only where `os` and
/// `cpu` match.
fn platform_manifest(platform: &Platform) -> Value {
    json!({
        "name": platform.package(),
        "version": super::VERSION,
        "description": format!("The memrecall binary for {}", platform.target),
        "license": "MIT OR Apache-2.0",
        "repository": { "type": "git", "url": format!("git+{REPOSITORY}.git") },
        "os": [platform.os],
        "cpu": [platform.cpu],
        "files": ["bin/"],
        // Package managers that keep packages zipped must unpack this one: it holds a binary.
        "preferUnplugged": true,
    })
}

/// The README of the `memrecall` package.
fn main_readme() -> String {
    let platforms: Vec<String> = PLATFORMS
        .iter()
        .map(|p| format!("- `{}` ({})", p.package(), p.target))
        .collect();
    format!(
        "# memrecall\n\n\
         Fast, reliable recall of an AI coding agent's Markdown memories: see {REPOSITORY}.\n\n\
         ```sh\nnpm install -g memrecall\nmemrecall hook install --agent claude-code --write\n```\n\n\
         The `memrecall` command is a small Node launcher that runs the native binary of one of \
         these optional dependencies, whichever npm installed for this machine:\n\n{}\n",
        platforms.join("\n")
    )
}

/// Packs the package in `dir` with `npm pack` into `out`; returns the tarball's path.
pub fn pack(dir: &Path, out: &Path) -> Result<PathBuf> {
    let output = Command::new(npm())
        .args(["pack", "--json", "--loglevel=error", "--pack-destination"])
        .arg(out)
        .current_dir(dir)
        .output()
        .context("could not start npm")?;
    ensure!(
        output.status.success(),
        "npm pack {} failed with {}: {}",
        dir.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let packed: Value = serde_json::from_slice(&output.stdout)
        .context("npm pack --json printed something other than JSON")?;
    let name = packed[0]["filename"]
        .as_str()
        .context("npm pack --json named no file")?;
    Ok(out.join(name))
}

fn write_json(path: &Path, value: &Value) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot make {} executable", path.display()))
}

#[cfg(not(unix))]
#[allow(
    clippy::unnecessary_wraps,
    reason = "the signature the Unix version has"
)]
fn set_mode(_path: &Path, _mode: u32) -> Result<()> {
    Ok(())
}
