//! Claude Code's note of a plugin MCP server that failed to start
//! ([`MCP_FAILURE_CACHE`]): once memrecall's plugin server failed (the binary was not on
//! `PATH`), Claude Code leaves it off for a while even after memrecall is installed. `doctor`
//! names that entry, when memrecall is now there to start, with the command or edit that removes
//! it.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agent_hooks::claude_code::{MCP_FAILURE_CACHE, MCP_FAILURE_KEPT, MEMRECALL_PLUGIN_SERVER};
use agent_hooks::settings;
use agent_hooks::{Agent, Environment};
use memory_scan::foreign::{self, ByteLimit, Links};
use serde_json::Value;

use super::Problem;

/// memrecall's entry in Claude Code's failure cache, as found.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct FailedServer {
    /// The cache file.
    pub(super) file: PathBuf,
    /// How long Claude Code will still leave the server off; `None` when the entry does not say
    /// when it was made.
    pub(super) left: Option<Duration>,
    /// Whether memrecall's is the file's only entry.
    pub(super) only_entry: bool,
}

/// memrecall's entry in the failure cache in Claude Code's configuration directory `dir`, when
/// there is one that still keeps the server off at `now`. The file is read without blocking and
/// within a size limit; one that cannot be read or parsed has no entry.
pub(super) fn failed_server(dir: &Path, now: SystemTime) -> Option<FailedServer> {
    let file = dir.join(MCP_FAILURE_CACHE);
    let text = foreign::read_to_string(&file, ByteLimit::SETTINGS, Links::Follow).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    let entries = value.as_object()?;
    let entry = entries.get(MEMRECALL_PLUGIN_SERVER)?;
    let kept = entry["ttlMs"]
        .as_u64()
        .map_or(MCP_FAILURE_KEPT, Duration::from_millis);
    let left = match entry["timestamp"].as_u64() {
        Some(ms) => {
            let until = UNIX_EPOCH + Duration::from_millis(ms) + kept;
            // An entry whose time is past is tried again at the next start: nothing to fix.
            Some(until.duration_since(now).ok()?)
        }
        None => None,
    };
    Some(FailedServer {
        file,
        left,
        only_entry: entries.len() == 1,
    })
}

/// The problem to report when Claude Code keeps memrecall's plugin server off and `memrecall`
/// is on `PATH` now (the plugin runs the one found there).
pub(super) fn check(env: &Environment, problems: &mut Vec<Problem>) {
    let Some(dir) = settings::settings_path(Agent::ClaudeCode, None, env)
        .ok()
        .and_then(|path| path.parent().map(Path::to_path_buf))
    else {
        return;
    };
    let Some(failed) = failed_server(&dir, SystemTime::now()) else {
        return;
    };
    if super::checks::locate(Path::new("memrecall")).is_none() {
        return;
    }
    problems.push(problem(&failed));
}

fn problem(failed: &FailedServer) -> Problem {
    let file = failed.file.display();
    let when = failed.left.map_or_else(
        || "until the entry is removed".to_owned(),
        |left| {
            format!(
                "for another {} minute(s)",
                left.as_secs().div_ceil(60).max(1)
            )
        },
    );
    let fix = if failed.only_entry {
        format!("rm '{}'", failed.file.display())
    } else {
        format!("remove the \"{MEMRECALL_PLUGIN_SERVER}\" entry from {file} (leave the others)")
    };
    Problem::new(
        format!(
            "claude-code: memrecall's plugin MCP server failed to start once and Claude Code will not start it again {when} (entry \"{MEMRECALL_PLUGIN_SERVER}\" in {file}), although memrecall is now on PATH"
        ),
        fix,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW_MS: u64 = 1_796_616_346_594;

    fn now() -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(NOW_MS)
    }

    fn cache(text: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(MCP_FAILURE_CACHE), text).unwrap();
        dir
    }

    #[test]
    fn an_entry_of_a_minute_ago_keeps_the_server_off_for_fourteen_more() {
        let made = NOW_MS - 60_000;
        let dir = cache(&format!(
            r#"{{"plugin:memrecall:memrecall":{{"timestamp":{made},"id":"b659a5ff6af3dddd"}}}}"#
        ));
        let failed = failed_server(dir.path(), now()).unwrap();
        assert_eq!(failed.left, Some(Duration::from_mins(14)));
        assert!(failed.only_entry);
        let problem = problem(&failed);
        assert_eq!(
            problem.fix,
            format!("rm '{}'", dir.path().join(MCP_FAILURE_CACHE).display())
        );
        assert!(problem.problem.contains("for another 14 minute(s)"));
    }

    #[test]
    fn an_entry_older_than_fifteen_minutes_is_retried_by_claude_code_itself() {
        let made = NOW_MS - 16 * 60_000;
        let dir = cache(&format!(
            r#"{{"plugin:memrecall:memrecall":{{"timestamp":{made}}}}}"#
        ));
        assert_eq!(failed_server(dir.path(), now()), None);
    }

    #[test]
    fn an_entry_with_its_own_ttl_is_kept_that_long() {
        let made = NOW_MS - 16 * 60_000;
        let dir = cache(&format!(
            r#"{{"plugin:memrecall:memrecall":{{"timestamp":{made},"ttlMs":3600000}}}}"#
        ));
        let failed = failed_server(dir.path(), now()).unwrap();
        assert_eq!(failed.left, Some(Duration::from_mins(44)));
    }

    #[test]
    fn other_servers_entries_are_left_and_named_in_the_fix() {
        let dir = cache(&format!(
            r#"{{"other":{{"timestamp":{NOW_MS}}},"plugin:memrecall:memrecall":{{"timestamp":{NOW_MS}}}}}"#
        ));
        let failed = failed_server(dir.path(), now()).unwrap();
        assert!(!failed.only_entry);
        assert!(
            problem(&failed)
                .fix
                .starts_with("remove the \"plugin:memrecall:memrecall\" entry from "),
        );
    }

    #[test]
    fn no_file_another_servers_entry_or_a_damaged_file_is_no_problem() {
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(failed_server(empty.path(), now()), None);
        let other = cache(&format!(r#"{{"plugin:x:y":{{"timestamp":{NOW_MS}}}}}"#));
        assert_eq!(failed_server(other.path(), now()), None);
        let damaged = cache("{\"plugin:memrecall:memrecall\": {");
        assert_eq!(failed_server(damaged.path(), now()), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_cache_that_is_a_fifo_is_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join(MCP_FAILURE_CACHE);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()));
        assert_eq!(failed_server(dir.path(), now()), None);
    }
}
