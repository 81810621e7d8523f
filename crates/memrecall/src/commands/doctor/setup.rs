//! What `doctor` looks at besides the agents, one function each: the memory roots, the server,
//! the selector and the hook's log.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::Problem;
use crate::config::{CONFIG_FILE_NAME, Config, ConfigSelectorKind};
use agent_hooks::{Environment, Layout, layout};

/// How long the selector probe may take (the server's status takes the time `status` takes).
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

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

/// The selector `config.toml` chooses, and one probe of it.
#[derive(Debug, Serialize)]
pub(super) struct SelectorReport {
    pub(super) kind: &'static str,
    pub(super) url: Option<String>,
    pub(super) model: Option<String>,
    /// How the probe went: `reachable`, or why not.
    pub(super) probe: Option<String>,
}

pub(super) fn selector(env: &Environment, problems: &mut Vec<Problem>) -> SelectorReport {
    let none = SelectorReport {
        kind: "none",
        url: None,
        model: None,
        probe: None,
    };
    let Some(home) = env.memrecall_home() else {
        return none;
    };
    let config_path = home.join(CONFIG_FILE_NAME);
    let config = match Config::load(&home) {
        Ok(config) => config,
        Err(error) => {
            problems.push(Problem::new(
                crate::output::one_line(&error.to_string()),
                format!("edit {}", config_path.display()),
            ));
            return none;
        }
    };
    if config.selector.kind == ConfigSelectorKind::None {
        return none;
    }
    let url = config.selector.url.unwrap_or_default();
    let probe = match probe(&url) {
        Ok(()) => "reachable".to_owned(),
        Err(why) => {
            problems.push(Problem::new(
                format!("the selector at {url} is unreachable: {why}"),
                format!(
                    "start the model server at {url}, or set kind = \"none\" under [selector] in {}",
                    config_path.display()
                ),
            ));
            format!("unreachable: {why}")
        }
    };
    SelectorReport {
        kind: "http",
        url: Some(url),
        model: config.selector.model,
        probe: Some(probe),
    }
}

/// Connects to the host and port of `url` within [`PROBE_TIMEOUT`].
fn probe(url: &str) -> Result<(), String> {
    use std::net::ToSocketAddrs as _;
    let (scheme, rest) = url.split_once("://").ok_or("not an http(s) URL")?;
    let default_port = match scheme {
        "http" => 80,
        "https" => 443,
        _ => return Err(format!("not an http(s) URL ({scheme})")),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let with_port = if authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        authority.to_owned()
    } else {
        format!("{authority}:{default_port}")
    };
    let address = with_port
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {authority}: {e}"))?
        .next()
        .ok_or_else(|| format!("{authority} has no address"))?;
    std::net::TcpStream::connect_timeout(&address, PROBE_TIMEOUT)
        .map(drop)
        .map_err(|e| e.to_string())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_port_is_unreachable_and_a_non_http_url_is_refused() {
        assert!(probe("http://127.0.0.1:1/v1").is_err());
        assert!(probe("ftp://127.0.0.1").unwrap_err().contains("ftp"));
    }
}
