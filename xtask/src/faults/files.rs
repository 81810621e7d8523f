//! `fifos`: a FIFO in the place of each file memrecall opens of its own. Opening one blocks
//! until a writer or reader comes, so every open must be non-blocking and check for a regular
//! file.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context as _, Result, ensure};

use super::Outcome;
use super::world::World;

/// The most each command may take.
const BOUND: Duration = Duration::from_secs(2);

pub(crate) fn fifos(binary: &Path) -> Result<Vec<Outcome>> {
    let today = utc_day();
    let places = [
        "xdg/memrecall/serve.lock".to_owned(),
        "mr/logs/serve.log".to_owned(),
        "mr/logs/hook.log".to_owned(),
        "mr/config.toml".to_owned(),
        format!("mr/telemetry/{today}.0000.jsonl"),
    ];
    let mut outcomes = Vec::new();
    for place in &places {
        let world = World::with_deploy_runbook(binary)?;
        let fifo = world.path(place);
        let parent = fifo.parent().context("a place has a parent")?;
        std::fs::create_dir_all(parent)?;
        if place.starts_with("xdg/") {
            std::fs::set_permissions(parent, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
        }
        if fifo.exists() {
            std::fs::remove_file(&fifo)?;
        }
        let made = Command::new("mkfifo").arg(&fifo).status()?;
        ensure!(made.success(), "mkfifo {} failed", fifo.display());
        let mut said = Vec::new();
        let mut passed = true;
        let repo = world.path("repo");
        let hook = world.prompt("s", &repo, "how do we deploy?")?;
        passed &= hook.clean() && hook.elapsed <= BOUND;
        said.push(format!(
            "hook {:.0} ms exit {:?}",
            hook.millis(),
            hook.status.and_then(|s| s.code())
        ));
        for command in ["status", "stats", "doctor"] {
            let ended = world.run(&[command], "")?;
            passed &= !ended.hung() && ended.signal().is_none() && ended.elapsed <= BOUND;
            said.push(format!(
                "{command} {:.0} ms exit {:?}",
                ended.millis(),
                ended.status.and_then(|s| s.code())
            ));
        }
        let _ = world.run(&["stop"], "");
        outcomes.push(Outcome::new(
            "fifos",
            4,
            format!("FIFO at {place}: {}", said.join(", ")),
            passed,
        ));
    }
    Ok(outcomes)
}

/// Today in UTC, `YYYY-MM-DD` (the telemetry files' day).
fn utc_day() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days.cast_signed() + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
