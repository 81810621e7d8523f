//! What `doctor` looks at besides the agents and the selector, one function each: the memory
//! roots, the server and the hook's log.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Problem;
use agent_hooks::{Environment, Layout, layout};

/// One memory root.
#[derive(Debug, Serialize)]
pub(super) struct RootReport {
    pub(super) layout: Layout,
    pub(super) scope: &'static str,
    pub(super) path: PathBuf,
    pub(super) exists: bool,
    pub(super) topics: Option<usize>,
    /// What the walk's limits left out of the root, in words.
    pub(super) limits: Vec<String>,
}

/// The memory roots each layout gives `cwd`, with their topic counts; a walk limit a root meets
/// is a problem.
pub(super) fn roots(
    layouts: &[Layout],
    cwd: &Path,
    env: &Environment,
    problems: &mut Vec<Problem>,
) -> Vec<RootReport> {
    let mut reports: Vec<RootReport> = Vec::new();
    for &layout in layouts {
        let Ok(resolved) = layout::resolve(layout, cwd, env) else {
            continue;
        };
        for (scope, choice) in [("project", &resolved.project), ("user", &resolved.user)] {
            let Some(path) = choice.path.clone() else {
                continue;
            };
            if reports.iter().any(|r| r.path == path) {
                continue;
            }
            let exists = path.is_dir();
            let (topics, limits) = match exists.then(|| scan(&path)).flatten() {
                Some((topics, limits)) => (Some(topics), limits),
                None => (None, Vec::new()),
            };
            for limit in &limits {
                problems.push(Problem::new(
                    format!("{}: {limit}", path.display()),
                    format!(
                        "move what recall need not read (an archive, a copy of a repository) out of {}",
                        path.display()
                    ),
                ));
            }
            reports.push(RootReport {
                layout,
                scope,
                path,
                exists,
                topics,
                limits,
            });
        }
    }
    reports
}

/// The topics of `root`, and what the walk's limits left out of it (`path: what`).
pub(super) fn scan(root: &Path) -> Option<(usize, Vec<String>)> {
    let roots = memory_scan::MemoryRoots {
        project: Some(root.to_path_buf()),
        user: None,
    };
    let scan = memory_scan::DocumentCache::new().scan_recall(&roots).ok()?;
    let limits = scan
        .report
        .skipped
        .iter()
        .filter_map(|skip| {
            let limit = skip.reason.limit_text()?;
            Some(format!("{}: {limit}", skip.path.display()))
        })
        .collect();
    Some((scan.documents.len(), limits))
}

/// The user's server.
#[derive(Debug, Default, Serialize)]
pub(super) struct ServerReport {
    pub(super) running: bool,
    pub(super) pid: Option<u32>,
    pub(super) version: Option<String>,
    pub(super) sessions: Option<usize>,
    /// The last selector failure the server saw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) last_selector_error: Option<recall_server::protocol::SelectorFailure>,
    /// The variable `api_key_env` names, when the server's selector sends no key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) selector_key_unset: Option<String>,
}

pub(super) fn server(env: &Environment, problems: &mut Vec<Problem>) -> ServerReport {
    use recall_server::client::{self, Autostart, ClientError};
    use recall_server::protocol::{Request, Response};
    let Some(paths) = recall_server::ServerPaths::from_env(env) else {
        return ServerReport::default();
    };
    match client::exchange(
        &paths,
        Request::Status,
        Autostart::No,
        crate::commands::server::control_budget(),
    ) {
        Ok(Response::Status(status)) => ServerReport {
            running: true,
            pid: Some(status.pid),
            version: Some(status.version),
            sessions: Some(status.sessions),
            last_selector_error: status.last_selector_error,
            selector_key_unset: status.selector_key_unset,
        },
        Ok(_) | Err(ClientError::NotRunning) => ServerReport::default(),
        Err(error) => {
            problems.push(Problem::new(
                format!("the server cannot be used: {error}"),
                format!(
                    "memrecall stop; {} (the next hook starts a new server)",
                    recall_server::remove_dir_command(&paths.dir)
                ),
            ));
            ServerReport::default()
        }
    }
}

/// The most of the hook's log read: it is moved aside past `MAX_LOG_BYTES`, so this is twice
/// the most it holds.
const MAX_HOOK_LOG_BYTES: u64 = 2 * recall_server::log::MAX_LOG_BYTES;

/// The last `count` lines of the hook's log; a log that cannot be read (not a regular file, say)
/// is a problem, read without waiting.
pub(super) fn hook_log(
    env: &Environment,
    count: usize,
    problems: &mut Vec<Problem>,
) -> Vec<String> {
    use memory_scan::foreign::{self, ByteLimit, Links};
    let Some(home) = env.memrecall_home() else {
        return Vec::new();
    };
    let path = home.join("logs").join("hook.log");
    let text = match foreign::read(&path, ByteLimit::bytes(MAX_HOOK_LOG_BYTES), Links::Refuse) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(error) if error.is_not_found() => return Vec::new(),
        Err(error) => {
            problems.push(Problem::new(
                crate::output::one_line(&error.to_string()),
                format!("rm {} (the next hook starts a new log)", path.display()),
            ));
            return Vec::new();
        }
    };
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(count)..]
        .iter()
        .map(|l| crate::output::one_line(l))
        .collect()
}
