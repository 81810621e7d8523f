//! The hook's log, `$MEMRECALL_HOME/logs/hook.log`.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::Program;
use crate::log::Log;
use agent_hooks::{Agent, Environment};

pub(super) fn log(env: &Environment, agent: Agent, message: &str) {
    write_log_line(
        env,
        &format!("{}: {}", agent.as_str(), message.replace('\n', " ")),
    );
}

/// Appends one timestamped line to `$MEMRECALL_HOME/logs/hook.log`. Failing to log is silent:
/// there is nowhere else to say it.
pub(super) fn write_log_line(env: &Environment, line: &str) {
    let Some(home) = env.memrecall_home() else {
        return;
    };
    let _ = Log::new(hook_log_path(&home)).append(line);
}

/// Sends the libraries' `tracing` events of this hook process to `hook.log` (through the
/// program's subscriber, [`Program::trace_to`]); nowhere without a memrecall home.
pub(super) fn trace_to_hook_log(env: &Environment, program: &dyn Program) {
    static TRACE_LOG: OnceLock<Mutex<Log>> = OnceLock::new();
    if let Some(home) = env.memrecall_home() {
        program.trace_to(TRACE_LOG.get_or_init(|| Mutex::new(Log::new(hook_log_path(&home)))));
    }
}

/// `$MEMRECALL_HOME/logs/hook.log`.
pub(crate) fn hook_log_path(home: &Path) -> PathBuf {
    home.join("logs").join("hook.log")
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_log_is_private_to_the_user() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let env = Environment::from_pairs([("MEMRECALL_HOME", dir.path().as_os_str().to_owned())]);
        write_log_line(&env, "a line");
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir.path().join("logs")), 0o700);
        assert_eq!(mode(&dir.path().join("logs/hook.log")), 0o600);
    }
}
