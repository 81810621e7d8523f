//! One line of a telemetry file: an event and the time it was recorded, in RFC 3339.

use std::time::SystemTime;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::RotatingSinkError;
use crate::event::TelemetryEvent;

/// The last second RFC 3339 can write: 9999-12-31T23:59:59Z.
pub(super) const LAST_WRITABLE_SECOND: u64 = 253_402_300_799;

/// `time`, unless RFC 3339 cannot write it.
pub(super) fn writable(time: SystemTime) -> Result<SystemTime, RotatingSinkError> {
    match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(since) if since.as_secs() <= LAST_WRITABLE_SECOND => Ok(time),
        Ok(since) => Err(RotatingSinkError::TimeOutOfRange {
            seconds_since_epoch: i128::from(since.as_secs()),
        }),
        Err(before) => Err(RotatingSinkError::TimeOutOfRange {
            seconds_since_epoch: -i128::from(before.duration().as_secs()),
        }),
    }
}

/// One line of a telemetry file: when the event was recorded, and the event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimedEvent {
    /// When the sink wrote the event (RFC 3339 in JSON).
    #[serde(serialize_with = "write_time", deserialize_with = "read_time")]
    pub time: SystemTime,
    /// The event, its fields beside `time`.
    #[serde(flatten)]
    pub event: TelemetryEvent,
}

#[allow(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's serialize_with passes a reference; SystemTime is 8 bytes on Windows"
)]
fn write_time<S: Serializer>(time: &SystemTime, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(&humantime::format_rfc3339_millis(*time))
}

fn read_time<'de, D: Deserializer<'de>>(deserializer: D) -> Result<SystemTime, D::Error> {
    let text = String::deserialize(deserializer)?;
    humantime::parse_rfc3339_weak(&text).map_err(serde::de::Error::custom)
}

impl TimedEvent {
    /// Parses one line of a telemetry file.
    pub fn from_line(line: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(line)
    }
}

/// [`TimedEvent`] borrowing its event, for writing.
#[derive(Serialize)]
pub(super) struct TimedEventRef<'a> {
    #[serde(serialize_with = "write_time")]
    pub(super) time: SystemTime,
    #[serde(flatten)]
    pub(super) event: &'a TelemetryEvent,
}
