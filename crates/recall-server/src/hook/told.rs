//! Which selector failure kinds (and walk limits met) hooks recalling in their own process have
//! logged for the current `config.toml`, so that each is said once per configuration, as the
//! server says it.
//!
//! `$MEMRECALL_HOME/state/selector-failures`, private to the user: the configuration's stamp
//! (modification time and size) on the first line, one failure kind per line after it. Best
//! effort: a file that cannot be read or written means the failure is logged again.

use std::io::Write as _;
use std::path::Path;
use std::time::UNIX_EPOCH;

use agent_hooks::Environment;
use agent_hooks::files::{open_private, private_dir};

/// Whether `kind` is new for the current configuration; it is remembered as told.
pub(super) fn first_time(env: &Environment, kind: &str) -> bool {
    let Some(home) = env.memrecall_home() else {
        return true;
    };
    let stamp = config_stamp(&home);
    let dir = home.join("state");
    let file = dir.join("selector-failures");
    let text = memory_scan::foreign::read_to_string(
        &file,
        memory_scan::foreign::ByteLimit::STATE,
        memory_scan::foreign::Links::Refuse,
    )
    .unwrap_or_default();
    let mut lines = text.lines();
    let mut kinds: Vec<&str> = if lines.next() == Some(stamp.as_str()) {
        lines.collect()
    } else {
        Vec::new()
    };
    if kinds.contains(&kind) {
        return false;
    }
    kinds.push(kind);
    let _ = private_dir(&dir).and_then(|()| {
        open_private(
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true),
            &file,
        )?
        .write_all(format!("{stamp}\n{}\n", kinds.join("\n")).as_bytes())
    });
    true
}

/// `config.toml`'s modification time and size, or `none` when there is none.
fn config_stamp(home: &Path) -> String {
    std::fs::metadata(home.join(crate::CONFIG_FILE_NAME)).map_or_else(
        |_| "none".to_owned(),
        |meta| {
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .unwrap_or_default();
            format!(
                "{}.{:09} {}",
                modified.as_secs(),
                modified.subsec_nanos(),
                meta.len()
            )
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home() -> (tempfile::TempDir, Environment) {
        let dir = tempfile::tempdir().unwrap();
        let env = Environment::from_pairs([("MEMRECALL_HOME", dir.path().as_os_str().to_owned())]);
        (dir, env)
    }

    #[test]
    fn a_failure_kind_is_told_once_per_configuration() {
        let (dir, env) = home();
        std::fs::write(dir.path().join("config.toml"), "[selector]\n").unwrap();
        assert!(first_time(&env, "http_401"));
        assert!(!first_time(&env, "http_401"));
        assert!(first_time(&env, "timeout"));
        std::fs::write(
            dir.path().join("config.toml"),
            "[selector]\nkind = \"http\"\n",
        )
        .unwrap();
        assert!(first_time(&env, "http_401"));
    }
}
