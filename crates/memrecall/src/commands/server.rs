//! `memrecall serve`, `stop` and `status`: running the per-user server and controlling it.

use std::time::{Duration, Instant};

use clap::Args;

use super::Failure;

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Exit after this long without a request [default: `serve.idle_exit` in config.toml, else
    /// 30m].
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    idle_exit: Option<std::time::Duration>,
    /// Serve at most this many connections at once; one over the bound is closed at once.
    #[arg(long, value_name = "N", default_value_t = recall_server::server::MAX_CONNECTIONS)]
    max_connections: usize,
    /// Drop a client that has not sent its whole request this long after connecting [default:
    /// 5s].
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    request_deadline: Option<std::time::Duration>,
}

#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    /// Print the server's status as one JSON object.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run_serve(args: &ServeArgs) -> Result<(), Failure> {
    let options = recall_server::server::ServeOptions {
        idle_exit: args.idle_exit,
        max_connections: Some(args.max_connections),
        request_deadline: args.request_deadline,
    };
    match recall_server::server::run(
        options,
        &agent_hooks::Environment::from_process(),
        &super::PROGRAM,
    ) {
        // Two hooks racing to start a server start two; the one without the lock leaves quietly.
        Err(recall_server::server::ServeError::AlreadyRunning) => Ok(()),
        other => other.map_err(|e| Failure::from(anyhow::Error::new(e))),
    }
}

/// How long `status`, `stop` and `doctor` wait to connect to the server: a stopped server with
/// a full backlog costs this much.
const CONNECT_WITHIN: Duration = Duration::from_millis(400);
/// How long they wait for its answer once connected: a server that accepts and stays silent
/// costs this much. With [`CONNECT_WITHIN`], under 2 s in all.
const ANSWER_WITHIN: Duration = Duration::from_millis(1200);
/// How long `stop` waits for a server that said it was stopping to exit: the server writes its
/// catalogs for up to 2 s before it does.
const EXIT_WITHIN: Duration = Duration::from_secs(3);

/// The time `status`, `stop` and `doctor` give the server, from now.
pub(crate) fn control_budget() -> recall_server::client::Budget {
    recall_server::client::Budget {
        connect_by: Instant::now() + CONNECT_WITHIN,
        answer_within: ANSWER_WITHIN,
    }
}

fn server_paths() -> Result<recall_server::ServerPaths, Failure> {
    let env = agent_hooks::Environment::from_process();
    recall_server::ServerPaths::from_env(&env).ok_or_else(|| {
        Failure::from(anyhow::anyhow!(
            "cannot find a run directory: set XDG_RUNTIME_DIR, MEMRECALL_HOME or HOME"
        ))
    })
}

fn control(
    request: recall_server::protocol::Request,
) -> Result<Option<recall_server::protocol::Response>, Failure> {
    let paths = server_paths()?;
    match recall_server::client::exchange(
        &paths,
        request,
        recall_server::client::Autostart::No,
        control_budget(),
    ) {
        Ok(response) => Ok(Some(response)),
        Err(recall_server::client::ClientError::NotRunning) => Ok(None),
        Err(error) => Err(Failure::from(anyhow::Error::new(error))),
    }
}

/// Stops the server, and says so only once the process that answered is confirmed to be
/// memrecall's server and has exited (see [`recall_server::client::stop`]).
pub(crate) fn run_stop() -> Result<(), Failure> {
    use recall_server::client::{Stopped, stop};
    let paths = server_paths()?;
    let answer_by = Instant::now() + CONNECT_WITHIN + ANSWER_WITHIN;
    match stop(&paths, answer_by, answer_by + EXIT_WITHIN) {
        Ok(Stopped::NotRunning) => println!("no server is running"),
        Ok(Stopped::Exited { pid }) => println!("stopped the server (pid {pid})"),
        Err(error) => return Err(Failure::from(anyhow::Error::new(error))),
    }
    Ok(())
}

pub(crate) fn run_status(args: &StatusArgs) -> Result<(), Failure> {
    let Some(response) = control(recall_server::protocol::Request::Status)? else {
        if args.json {
            println!("null");
        } else {
            println!("no server is running");
        }
        return Ok(());
    };
    let recall_server::protocol::Response::Status(status) = response else {
        return Err(Failure::from(anyhow::anyhow!(
            "unexpected answer to status: {response:?}"
        )));
    };
    if args.json {
        let text = serde_json::to_string(&status).map_err(anyhow::Error::new)?;
        println!("{text}");
        return Ok(());
    }
    let kib = |v: Option<u64>| {
        v.map_or_else(
            || "unknown".to_owned(),
            |k| format!("{:.1} MiB", k as f64 / 1024.0),
        )
    };
    println!("server: pid {} · version {}", status.pid, status.version);
    println!(
        "uptime: {} · exits after {} idle",
        humantime::format_duration(whole_seconds(status.uptime_s)),
        humantime::format_duration(whole_seconds(status.idle_exit_s))
    );
    println!(
        "sessions: {} ({} with a recall pending)",
        status.sessions, status.pending_recalls
    );
    println!(
        "recalls: {} served, {} ended",
        status.recalls_served, status.recalls_ended
    );
    println!(
        "memory: {} resident, {} peak",
        kib(status.rss_kib),
        kib(status.peak_rss_kib)
    );
    println!("cached: {}", footprint(&status.footprint));
    println!("watch: {}", crate::output::one_line(&status.watch));
    match &status.last_selector_error {
        None => println!("selector: no failure since the server started"),
        Some(failure) => println!(
            "selector: last failed at {} ({}): {}",
            failure.at,
            crate::output::one_line(&failure.kind),
            crate::output::one_line(&failure.message)
        ),
    }
    if status.roots.is_empty() {
        println!("roots: none yet");
    }
    for root in &status.roots {
        println!("root: {}", crate::output::escaped_path(root));
    }
    Ok(())
}

/// `seconds` rounded down to whole seconds (zero when not a duration).
fn whole_seconds(seconds: f64) -> std::time::Duration {
    std::time::Duration::from_secs(
        std::time::Duration::try_from_secs_f64(seconds)
            .unwrap_or_default()
            .as_secs(),
    )
}

/// The caches' footprint as `server status` shows it: topics, then MiB in all and by part.
fn footprint(footprint: &memory_scan::CacheFootprint) -> String {
    let mib = |bytes: usize| format!("{:.1}", bytes as f64 / 1_048_576.0);
    format!(
        "{} topics in {} MiB (text {}, normalised text {}, term indexes {}, paths {}, listings {}, records {})",
        footprint.topics,
        mib(footprint.total()),
        mib(footprint.document_text),
        mib(footprint.prepared_text),
        mib(footprint.term_index),
        mib(footprint.paths),
        mib(footprint.listings),
        mib(footprint.records),
    )
}
