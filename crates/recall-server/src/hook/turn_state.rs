//! What a hook remembers between calls about a turn it recalled in its own process: the query
//! (as a fingerprint) of the session's open turn, so that Qwen Code's continuation, which may
//! repeat the prompt, is taken as the tool-result point and never starts a recall that would
//! deliver the same documents again. The turn's end forgets it.
//!
//! One file per agent session, `$MEMRECALL_HOME/state/<agent>/<hash of the session id>`, private
//! to the user, holding the query's hash only (never the prompt's text).

use std::io::Write as _;
use std::path::PathBuf;

use agent_hooks::files::{open_private, private_dir};
use agent_hooks::{Agent, Environment};

/// The state file of `session`; `None` without a session or a home.
fn state_file(env: &Environment, agent: Agent, session: Option<&str>) -> Option<PathBuf> {
    let (Some(session), Some(home)) = (session, env.memrecall_home()) else {
        return None;
    };
    Some(home.join("state").join(agent.as_str()).join(format!(
        "{:016x}",
        twox_hash::XxHash3_64::oneshot(session.as_bytes())
    )))
}

fn fingerprint(query: &str) -> String {
    format!("{:016x}", twox_hash::XxHash3_64::oneshot(query.as_bytes()))
}

/// Whether `query` is the query of the session's open turn, as a hook last recalled it in its
/// own process.
pub(super) fn is_open_turn(
    env: &Environment,
    agent: Agent,
    session: Option<&str>,
    query: &str,
) -> bool {
    let Some(file) = state_file(env, agent, session) else {
        return false;
    };
    memory_scan::foreign::read_to_string(
        &file,
        memory_scan::foreign::ByteLimit::STATE,
        memory_scan::foreign::Links::Refuse,
    )
    .is_ok_and(|last| last.trim() == fingerprint(query))
}

/// Remembers `query` as the session's open turn. Best effort: without the state, a continuation
/// that repeats the prompt is recalled like a prompt.
pub(super) fn open_turn(env: &Environment, agent: Agent, session: Option<&str>, query: &str) {
    let Some(file) = state_file(env, agent, session) else {
        return;
    };
    let Some(dir) = file.parent() else {
        return;
    };
    let _ = private_dir(dir).and_then(|()| {
        open_private(
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true),
            &file,
        )?
        .write_all(fingerprint(query).as_bytes())
    });
}

/// Forgets the session's open turn (its stop or session-end event).
pub(super) fn end_turn(env: &Environment, agent: Agent, session: Option<&str>) {
    if let Some(file) = state_file(env, agent, session) {
        let _ = std::fs::remove_file(file);
    }
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
    fn the_open_turns_query_is_known_in_its_session_only() {
        let (_dir, env) = home();
        assert!(!is_open_turn(&env, Agent::QwenCode, Some("s1"), "first"));
        open_turn(&env, Agent::QwenCode, Some("s1"), "first");
        assert!(is_open_turn(&env, Agent::QwenCode, Some("s1"), "first"));
        assert!(!is_open_turn(&env, Agent::QwenCode, Some("s2"), "first"));
        assert!(!is_open_turn(&env, Agent::QwenCode, Some("s1"), "second"));
        assert!(!is_open_turn(&env, Agent::QwenCode, None, "first"));
    }

    #[test]
    fn the_turns_end_forgets_its_query() {
        let (_dir, env) = home();
        open_turn(&env, Agent::QwenCode, Some("s1"), "first");
        end_turn(&env, Agent::QwenCode, Some("s1"));
        assert!(!is_open_turn(&env, Agent::QwenCode, Some("s1"), "first"));
    }

    #[cfg(unix)]
    #[test]
    fn the_state_is_private_to_the_user() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, env) = home();
        open_turn(&env, Agent::QwenCode, Some("s1"), "first");
        let mode =
            |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let state = dir.path().join("state/qwen-code");
        assert_eq!(mode(&state), 0o700);
        let file = std::fs::read_dir(&state)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        assert_eq!(mode(&file), 0o600);
    }
}
