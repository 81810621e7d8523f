//! The subcommands' arguments and runners, one module each.

pub(crate) mod doctor;
pub(crate) mod hook;
pub(crate) mod hook_binary;
pub(crate) mod install;
pub(crate) mod mcp;
pub(crate) mod rank;
pub(crate) mod recall;
pub(crate) mod roots;
pub(crate) mod scan;
pub(crate) mod server;
pub(crate) mod uninstall;

pub(crate) use crate::output::{Failure, emit};

/// The async runtime a command's recalls run on.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::from(anyhow::anyhow!("cannot start the async runtime: {e}")))
}

use std::path::Path;
use std::sync::{Arc, Mutex};

use recall_server::{ConfigError, Program, ServerConfig, Telemetry};

/// What the server (`memrecall serve`) and the hook (`memrecall hook`) take from this program:
/// `config.toml` read as every command reads it, the telemetry history `memrecall stats` reads,
/// and the `tracing` subscriber `MEMRECALL_LOG` filters.
#[derive(Debug)]
pub(crate) struct Memrecall;

/// This program, for the server and the hook.
pub(crate) static PROGRAM: Memrecall = Memrecall;

impl Program for Memrecall {
    /// What `config.toml` under `home` chooses for the server.
    fn server_config(&self, home: &Path) -> Result<ServerConfig, ConfigError> {
        let config = crate::config::Config::load(home).map_err(ConfigError::new)?;
        let idle_exit = config
            .serve
            .idle_exit
            .map(crate::config::IdleExit::duration);
        Ok(ServerConfig {
            options: config.into(),
            idle_exit,
        })
    }

    fn recall_options(
        &self,
        env: &agent_hooks::Environment,
    ) -> Result<recall_facade::RecallOptions, ConfigError> {
        crate::config::recall_options(env).map_err(ConfigError::new)
    }

    /// The history under `home` (unless `config.toml` turns it off) and `tracing`.
    fn telemetry(&self, home: Option<&Path>) -> Telemetry {
        let sinks = crate::stats::telemetry_sink(home, vec![Arc::new(recall_facade::TracingSink)]);
        Telemetry {
            sink: sinks.sink,
            history: sinks.history,
        }
    }

    fn trace_to(&self, log: &'static Mutex<recall_server::log::Log>) {
        crate::logging::to_file(log);
    }
}
