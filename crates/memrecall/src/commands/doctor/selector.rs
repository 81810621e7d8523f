//! The selector `config.toml` chooses, as `doctor` checks it: a connection to its host, then one
//! real request (a manifest of one made-up memory, asked as every recall asks), whose refusal
//! (401, 403, 404, …) is a problem with the server's own message; and the failures the agents'
//! recalls met since `config.toml` last changed, from the server's `status` and the hook's log;
//! and a server whose selector sends no key while this environment has one.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;

use super::Problem;
use super::setup::ServerReport;
use crate::config::{CONFIG_FILE_NAME, Config, ConfigSelectorKind};
use ::selector::{CancellationToken, Candidate, SelectionRequest, SelectorError};
use agent_hooks::Environment;
use recall_facade::{HttpSelectorConfig, RecallOptions, SelectorChoice};

/// How long the connection to the selector's host may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the selector may take to answer the one request.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// The selector `config.toml` chooses, and how the request to it went.
#[derive(Debug, Serialize)]
pub(super) struct SelectorReport {
    pub(super) kind: &'static str,
    pub(super) url: Option<String>,
    pub(super) model: Option<String>,
    /// How the request went: `answered in …`, or why not.
    pub(super) probe: Option<String>,
}

impl SelectorReport {
    fn none() -> Self {
        Self {
            kind: "none",
            url: None,
            model: None,
            probe: None,
        }
    }
}

/// What `config.toml` says about the selector, for the checks after the request.
pub(super) struct Chosen {
    config: Option<HttpSelectorConfig>,
    path: std::path::PathBuf,
}

pub(super) fn selector(env: &Environment, problems: &mut Vec<Problem>) -> (SelectorReport, Chosen) {
    let Some(home) = env.memrecall_home() else {
        return (SelectorReport::none(), Chosen::nothing());
    };
    let path = home.join(CONFIG_FILE_NAME);
    let config = match Config::load(&home) {
        Ok(config) => config,
        Err(error) => {
            problems.push(Problem::new(
                crate::output::one_line(&error.to_string()),
                format!("edit {}", path.display()),
            ));
            return (SelectorReport::none(), Chosen { config: None, path });
        }
    };
    if config.selector.kind == ConfigSelectorKind::None {
        return (SelectorReport::none(), Chosen { config: None, path });
    }
    let SelectorChoice::Http(http) = RecallOptions::from(config).selector else {
        return (SelectorReport::none(), Chosen { config: None, path });
    };
    let url = http.base_url.clone();
    let probe = match connect(&url) {
        Err(why) => {
            problems.push(Problem::new(
                format!("the selector at {url} is unreachable: {why}"),
                format!(
                    "start the model server at {url}, or set kind = \"none\" under [selector] in {}",
                    path.display()
                ),
            ));
            format!("unreachable: {why}")
        }
        Ok(()) => ask(&http, &path, problems),
    };
    let report = SelectorReport {
        kind: "http",
        url: Some(url),
        model: Some(http.model.clone()),
        probe: Some(probe),
    };
    (
        report,
        Chosen {
            config: Some(http),
            path,
        },
    )
}

impl Chosen {
    fn nothing() -> Self {
        Self {
            config: None,
            path: std::path::PathBuf::new(),
        }
    }
}

/// Sends the one request; what became of it, in words, and a problem when it failed.
fn ask(http: &HttpSelectorConfig, config_path: &Path, problems: &mut Vec<Problem>) -> String {
    let mut config = http.clone();
    config.ceiling = ANSWER_TIMEOUT;
    let selector = match SelectorChoice::Http(config).build() {
        Ok(Some(selector)) => selector,
        Ok(None) => return "not asked".to_owned(),
        Err(error) => {
            problems.push(Problem::new(
                format!("the selector cannot be used: {error}"),
                format!("edit [selector] in {}", config_path.display()),
            ));
            return format!("not asked: {error}");
        }
    };
    let candidates = [Candidate {
        id: "/memrecall-doctor/release-checklist.md".to_owned(),
        memory_type: "project".to_owned(),
        mtime: SystemTime::now(),
        description: "the steps of a release".to_owned(),
        keywords: Vec::new(),
    }];
    let started = Instant::now();
    let answered = match super::super::runtime() {
        Ok(runtime) => runtime.block_on(selector.select(
            SelectionRequest::new("how do we release?", &candidates, 1),
            CancellationToken::new(),
        )),
        Err(failure) => return format!("not asked: {}", failure.message),
    };
    let took = started.elapsed();
    match answered {
        Ok(_) => format!("answered in {} ms", took.as_millis()),
        // A slow model still helps at the tool-result point; said, not a problem.
        Err(SelectorError::Timeout(limit)) => format!(
            "no answer within {} s: its picks can reach only the tool-result point",
            limit.as_secs()
        ),
        Err(error) => {
            let kind = error.kind();
            let what = recall_facade::printable(&error.to_string(), recall_facade::Lines::Escaped)
                .into_owned();
            problems.push(Problem::new(
                format!(
                    "the selector at {} refused a request: {what}",
                    http.base_url
                ),
                fix(&kind, http, config_path),
            ));
            format!("failed: {what}")
        }
    }
}

/// What fixes a selector failure of `kind`.
fn fix(kind: &str, http: &HttpSelectorConfig, config_path: &Path) -> String {
    let variable = &http.api_key_env;
    match kind {
        "http_401" | "http_403" => format!(
            "export {variable}=<a key valid for {}> in the shell the agent starts from (its next prompt hands the key to the server), or set api_key_env under [selector] in {} to the variable that holds it",
            http.base_url,
            config_path.display()
        ),
        "http_404" => format!(
            "set url (the server's root, without /chat/completions) and model under [selector] in {} to an endpoint and a model the server has",
            config_path.display()
        ),
        "transport" => format!(
            "start the model server at {}, or set kind = \"none\" under [selector] in {}",
            http.base_url,
            config_path.display()
        ),
        "invalid_answer" => format!(
            "choose a model that answers in JSON (response_format json_schema) in {}, or set kind = \"none\" under [selector]",
            config_path.display()
        ),
        _ => format!(
            "check the model server at {}, or set kind = \"none\" under [selector] in {}",
            http.base_url,
            config_path.display()
        ),
    }
}

/// The failures the agents' recalls met since `config.toml` last changed: the server's last one
/// and the hook's log's; and a server whose selector sends no key while this environment has the
/// variable set. Each is a problem.
pub(super) fn recorded(
    chosen: &Chosen,
    server: &ServerReport,
    hook_log: &[String],
    problems: &mut Vec<Problem>,
) {
    let Some(http) = &chosen.config else {
        return;
    };
    // The logs' times are whole seconds.
    let since = std::fs::metadata(&chosen.path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(SystemTime::UNIX_EPOCH, |d| {
            SystemTime::UNIX_EPOCH + Duration::from_secs(d.as_secs())
        });
    let mut said: Vec<String> = Vec::new();
    let from_server = server.last_selector_error.as_ref().and_then(|failure| {
        let at = humantime::parse_rfc3339(&failure.at).ok()?;
        (at >= since).then(|| {
            (
                failure.at.clone(),
                failure.kind.clone(),
                failure.message.clone(),
            )
        })
    });
    let from_log = hook_log.iter().filter_map(|line| {
        let (at, rest) = line.split_once(' ')?;
        let at_time = humantime::parse_rfc3339(at).ok()?;
        let (_, failed) = rest.split_once("the selector failed (")?;
        let (kind, message) = failed.split_once("): ")?;
        let message = message
            .split_once("; the lexical result")
            .map_or(message, |(m, _)| m);
        (at_time >= since).then(|| (at.to_owned(), kind.to_owned(), message.to_owned()))
    });
    for (at, kind, message) in from_server.into_iter().chain(from_log) {
        if said.contains(&kind) {
            continue;
        }
        said.push(kind.clone());
        problems.push(Problem::new(
            format!("an agent's recall met a selector failure at {at} ({kind}): {message}"),
            fix(&kind, http, &chosen.path),
        ));
    }
    let here = std::env::var_os(&http.api_key_env).is_some_and(|v| !v.is_empty());
    if let Some(variable) = &server.selector_key_unset
        && here
    {
        problems.push(Problem::new(
            format!(
                "the server's selector sends no API key: {variable} is set here, but neither the server nor any prompt's hook had it (the agent was started without it)"
            ),
            format!(
                "start the agent again from a shell where {variable} is exported: its next prompt hands the key to the server"
            ),
        ));
    }
}

/// Connects to the host and port of `url` within [`CONNECT_TIMEOUT`].
fn connect(url: &str) -> Result<(), String> {
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
    std::net::TcpStream::connect_timeout(&address, CONNECT_TIMEOUT)
        .map(drop)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_port_is_unreachable_and_a_non_http_url_is_refused() {
        assert!(connect("http://127.0.0.1:1/v1").is_err());
        assert!(connect("ftp://127.0.0.1").unwrap_err().contains("ftp"));
    }

    #[test]
    fn a_refused_key_is_fixed_by_exporting_the_configured_variable() {
        let mut http = HttpSelectorConfig::new("https://api.example.com", "m");
        http.api_key_env = "MY_KEY".to_owned();
        let fix = fix("http_401", &http, Path::new("/h/config.toml"));
        assert!(
            fix.starts_with("export MY_KEY=<a key valid for https://api.example.com>"),
            "{fix}"
        );
    }

    #[test]
    fn a_failure_in_the_hook_log_before_the_configuration_changed_is_not_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "").unwrap();
        let chosen = Chosen {
            config: Some(HttpSelectorConfig::new("http://127.0.0.1:9", "m")),
            path,
        };
        let old = "2001-01-01T00:00:00Z claude-code: server: the selector failed (http_401): selector answered HTTP 401: no; the lexical result stands in";
        let new = humantime::format_rfc3339_seconds(SystemTime::now() + Duration::from_secs(5))
            .to_string()
            + " claude-code: server: the selector failed (http_403): selector answered HTTP 403: forbidden; the lexical result stands in";
        let mut problems = Vec::new();
        recorded(
            &chosen,
            &ServerReport::default(),
            &[old.to_owned(), new],
            &mut problems,
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0]
                .problem
                .ends_with("(http_403): selector answered HTTP 403: forbidden"),
            "{problems:?}"
        );
    }
}
