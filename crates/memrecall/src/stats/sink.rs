//! The telemetry history every recall of this process records into, fanned out with the
//! command's own sinks.

use std::path::Path;
use std::sync::Arc;

use delivery_telemetry::{FanOutSink, RotatingSink, RotationPolicy, TelemetrySink};

use super::TELEMETRY_DIR;
use crate::config::Config;

/// A recall's telemetry: the sinks it emits to, and the history among them (if recorded), whose
/// dropped events its owner reports before exiting.
#[derive(Debug, Clone)]
pub(crate) struct TelemetrySinks {
    /// Everything, fanned out.
    pub sink: Arc<dyn TelemetrySink>,
    /// The history under `$MEMRECALL_HOME/telemetry`, unless turned off or there is no home.
    pub history: Option<Arc<RotatingSink>>,
}

/// The telemetry of the recalls this process runs: the history under `home` (unless
/// `[telemetry] record = false` in its `config.toml`) and every sink of `also`. Never fails: a
/// history that cannot be written counts its dropped events.
pub(crate) fn telemetry_sink(
    home: Option<&Path>,
    also: Vec<Arc<dyn TelemetrySink>>,
) -> TelemetrySinks {
    // A configuration that cannot be read is reported by whoever reads it for the selector;
    // the history goes on as by default.
    let history = home
        .filter(|home| Config::load(home).map_or(true, |c| c.telemetry.record))
        .map(|home| {
            Arc::new(RotatingSink::new(
                home.join(TELEMETRY_DIR),
                RotationPolicy::default(),
            ))
        });
    let mut sinks = also;
    if let Some(history) = &history {
        sinks.push(Arc::clone(history) as Arc<dyn TelemetrySink>);
    }
    TelemetrySinks {
        sink: Arc::new(FanOutSink(sinks)),
        history,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_home_config_the_history_is_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let sinks = telemetry_sink(Some(dir.path()), Vec::new());
        assert_eq!(
            sinks.history.as_ref().map(|h| h.dir().to_path_buf()),
            Some(dir.path().join(TELEMETRY_DIR))
        );
    }

    #[test]
    fn the_config_can_turn_the_history_off() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.toml"),
            "[telemetry]\nrecord = false\n",
        )
        .unwrap();
        assert!(
            telemetry_sink(Some(dir.path()), Vec::new())
                .history
                .is_none()
        );
    }
}
