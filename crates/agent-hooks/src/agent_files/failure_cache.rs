//! A plugin's MCP server the agent keeps off after it failed to start
//! (`Conventions::mcp_failure_cache`: Claude Code's
//! [`MCP_FAILURE_CACHE`](crate::claude_code::MCP_FAILURE_CACHE)): once memrecall's plugin server
//! failed (the binary was not on `PATH`), the agent leaves it off for a while even after
//! memrecall is installed.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{agent_dir, json_file};
use crate::claude_code::{MCP_FAILURE_KEPT, MEMRECALL_PLUGIN_SERVER};
use crate::{Agent, Environment};

/// memrecall's entry in the agent's failure cache, as found.
#[derive(Debug, PartialEq, Eq)]
pub struct FailedServer {
    /// The cache file.
    pub file: PathBuf,
    /// The entry's key (`plugin:memrecall:memrecall`).
    pub entry: &'static str,
    /// How long the agent will still leave the server off; `None` when the entry does not say
    /// when it was made.
    pub left: Option<Duration>,
    /// Whether memrecall's is the file's only entry.
    pub only_entry: bool,
}

/// memrecall's entry in the agent's failure cache, when the agent keeps one and it still keeps
/// the server off at `now`.
pub fn failed_mcp_server(agent: Agent, env: &Environment, now: SystemTime) -> Option<FailedServer> {
    let name = agent.conventions().mcp_failure_cache?;
    failed_server(&agent_dir(agent, env)?.join(name), now)
}

/// memrecall's entry in the failure cache `file` that still keeps the server off at `now`.
fn failed_server(file: &Path, now: SystemTime) -> Option<FailedServer> {
    let value = json_file(file)?;
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
        file: file.to_path_buf(),
        entry: MEMRECALL_PLUGIN_SERVER,
        left,
        only_entry: entries.len() == 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claude_code::MCP_FAILURE_CACHE;

    const NOW_MS: u64 = 1_796_616_346_594;

    fn now() -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(NOW_MS)
    }

    fn cache(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(MCP_FAILURE_CACHE);
        std::fs::write(&file, text).unwrap();
        (dir, file)
    }

    #[test]
    fn an_entry_of_a_minute_ago_keeps_the_server_off_for_fourteen_more() {
        let made = NOW_MS - 60_000;
        let (_dir, file) = cache(&format!(
            r#"{{"plugin:memrecall:memrecall":{{"timestamp":{made},"id":"b659a5ff6af3dddd"}}}}"#
        ));
        let failed = failed_server(&file, now()).unwrap();
        assert_eq!(failed.left, Some(Duration::from_mins(14)));
        assert!(failed.only_entry);
        assert_eq!(failed.file, file);
    }

    #[test]
    fn an_entry_older_than_fifteen_minutes_is_retried_by_claude_code_itself() {
        let made = NOW_MS - 16 * 60_000;
        let (_dir, file) = cache(&format!(
            r#"{{"plugin:memrecall:memrecall":{{"timestamp":{made}}}}}"#
        ));
        assert_eq!(failed_server(&file, now()), None);
    }

    #[test]
    fn an_entry_with_its_own_ttl_is_kept_that_long() {
        let made = NOW_MS - 16 * 60_000;
        let (_dir, file) = cache(&format!(
            r#"{{"plugin:memrecall:memrecall":{{"timestamp":{made},"ttlMs":3600000}}}}"#
        ));
        let failed = failed_server(&file, now()).unwrap();
        assert_eq!(failed.left, Some(Duration::from_mins(44)));
    }

    #[test]
    fn other_servers_entries_are_counted() {
        let (_dir, file) = cache(&format!(
            r#"{{"other":{{"timestamp":{NOW_MS}}},"plugin:memrecall:memrecall":{{"timestamp":{NOW_MS}}}}}"#
        ));
        let failed = failed_server(&file, now()).unwrap();
        assert!(!failed.only_entry);
    }

    #[test]
    fn no_file_another_servers_entry_or_a_damaged_file_is_no_problem() {
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(
            failed_server(&empty.path().join(MCP_FAILURE_CACHE), now()),
            None
        );
        let (_other, file) = cache(&format!(r#"{{"plugin:x:y":{{"timestamp":{NOW_MS}}}}}"#));
        assert_eq!(failed_server(&file, now()), None);
        let (_damaged, file) = cache("{\"plugin:memrecall:memrecall\": {");
        assert_eq!(failed_server(&file, now()), None);
    }

    #[test]
    fn only_an_agent_that_keeps_a_failure_cache_has_a_failed_server() {
        let home = tempfile::tempdir().unwrap();
        let env = Environment::from_pairs([("HOME", home.path().as_os_str())]);
        let claude = home.path().join(".claude");
        std::fs::create_dir_all(&claude).unwrap();
        std::fs::write(
            claude.join(MCP_FAILURE_CACHE),
            format!(r#"{{"plugin:memrecall:memrecall":{{"timestamp":{NOW_MS}}}}}"#),
        )
        .unwrap();
        assert!(failed_mcp_server(Agent::ClaudeCode, &env, now()).is_some());
        assert_eq!(failed_mcp_server(Agent::QwenCode, &env, now()), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_cache_that_is_a_fifo_is_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join(MCP_FAILURE_CACHE);
        crate::test_support::make_fifo(&fifo);
        assert_eq!(failed_server(&fifo, now()), None);
    }
}
