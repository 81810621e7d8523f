//! An agent's note of a plugin MCP server that failed to start
//! ([`agent_files::failed_mcp_server`]: Claude Code's `mcp-needs-auth-cache.json`): once
//! memrecall's plugin server failed (the binary was not on `PATH`), the agent leaves it off for a
//! while even after memrecall is installed. `doctor` names that entry, when memrecall is now
//! there to start, with the command or edit that removes it.

use std::path::Path;
use std::time::SystemTime;

use agent_hooks::agent_files::{self, FailedServer};
use agent_hooks::{Agent, Environment};

use super::Problem;

/// The problem to report when `agent` keeps memrecall's plugin server off and `memrecall` is on
/// `PATH` now (the plugin runs the one found there).
pub(super) fn check(agent: Agent, env: &Environment, problems: &mut Vec<Problem>) {
    let Some(failed) = agent_files::failed_mcp_server(agent, env, SystemTime::now()) else {
        return;
    };
    if super::checks::locate(Path::new("memrecall")).is_none() {
        return;
    }
    problems.push(problem(agent, &failed));
}

fn problem(agent: Agent, failed: &FailedServer) -> Problem {
    let file = failed.file.display();
    let entry = failed.entry;
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
        format!("remove the \"{entry}\" entry from {file} (leave the others)")
    };
    Problem::new(
        format!(
            "{}: memrecall's plugin MCP server failed to start once and the agent will not start it again {when} (entry \"{entry}\" in {file}), although memrecall is now on PATH",
            agent.as_str()
        ),
        fix,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::time::Duration;

    fn failed(left: Option<Duration>, only_entry: bool) -> FailedServer {
        FailedServer {
            file: PathBuf::from("/h/.claude/mcp-needs-auth-cache.json"),
            entry: "plugin:memrecall:memrecall",
            left,
            only_entry,
        }
    }

    #[test]
    fn a_files_only_entry_is_removed_with_the_file() {
        let agent = Agent::ALL[0];
        let problem = problem(agent, &failed(Some(Duration::from_mins(14)), true));
        assert_eq!(problem.fix, "rm '/h/.claude/mcp-needs-auth-cache.json'");
        assert!(problem.problem.contains("for another 14 minute(s)"));
        assert!(
            problem
                .problem
                .starts_with(&format!("{}: ", agent.as_str()))
        );
    }

    #[test]
    fn other_servers_entries_are_left_and_named_in_the_fix() {
        let problem = problem(Agent::ALL[0], &failed(None, false));
        assert!(
            problem
                .fix
                .starts_with("remove the \"plugin:memrecall:memrecall\" entry from "),
        );
        assert!(problem.problem.contains("until the entry is removed"));
    }
}
