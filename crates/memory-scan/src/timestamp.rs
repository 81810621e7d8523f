//! ISO-8601 timestamps as the `modified` frontmatter field holds them, read and written without a
//! date library: the proleptic Gregorian calendar, UTC unless the text names an offset.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

const SECONDS_PER_DAY: i64 = 86_400;

/// Reads `YYYY-MM-DD`, optionally followed by `T` (or one space) and `HH:MM[:SS[.fraction]]`, then
/// optionally `Z` or an offset `±HH:MM`, `±HHMM` or `±HH`. A time without an offset is UTC; a date
/// alone is midnight UTC. `None` for anything else (the field then counts as absent).
pub(crate) fn parse_iso8601(text: &str) -> Option<SystemTime> {
    let text = text.trim();
    let (date, rest) = text.split_at_checked(10)?;
    let days = parse_date(date)?;
    let mut seconds = days.checked_mul(SECONDS_PER_DAY)?;
    let mut nanos = 0u32;
    if !rest.is_empty() {
        let rest = rest
            .strip_prefix(['T', 't', ' '])
            .filter(|r| !r.is_empty())?;
        let zone_at = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
        let (clock, zone) = rest.split_at(zone_at);
        let (clock_seconds, clock_nanos) = parse_clock(clock)?;
        seconds += clock_seconds;
        nanos = clock_nanos;
        seconds -= parse_offset(zone)?;
    }
    Some(from_epoch(seconds, nanos))
}

/// Writes `YYYY-MM-DDTHH:MM:SSZ`, with nine fraction digits when the time has any, which
/// [`parse_iso8601`] reads back to the same instant.
pub(crate) fn format_iso8601(time: SystemTime) -> String {
    let (seconds, nanos) = match time.duration_since(UNIX_EPOCH) {
        Ok(after) => (
            i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
            after.subsec_nanos(),
        ),
        Err(before) => {
            let before = before.duration();
            let whole = i64::try_from(before.as_secs()).unwrap_or(i64::MAX);
            if before.subsec_nanos() == 0 {
                (-whole, 0)
            } else {
                (-whole - 1, 1_000_000_000 - before.subsec_nanos())
            }
        }
    };
    let days = seconds.div_euclid(SECONDS_PER_DAY);
    let of_day = seconds.rem_euclid(SECONDS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    let clock = format!(
        "{:02}:{:02}:{:02}",
        of_day / 3_600,
        of_day % 3_600 / 60,
        of_day % 60
    );
    if nanos == 0 {
        format!("{year:04}-{month:02}-{day:02}T{clock}Z")
    } else {
        format!("{year:04}-{month:02}-{day:02}T{clock}.{nanos:09}Z")
    }
}

fn digits(text: &str) -> Option<i64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Days since 1970-01-01 of a `YYYY-MM-DD` date, checking the day exists.
fn parse_date(date: &str) -> Option<i64> {
    let bytes = date.as_bytes();
    if bytes.get(4) != Some(&b'-') || bytes.get(7) != Some(&b'-') {
        return None;
    }
    let year = digits(date.get(..4)?)?;
    let month = digits(date.get(5..7)?)?;
    let day = digits(date.get(8..10)?)?;
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    (1..=month_days)
        .contains(&day)
        .then(|| days_from_civil(year, month, day))
}

/// Seconds into the day and nanoseconds of `HH:MM[:SS[.fraction]]`.
fn parse_clock(clock: &str) -> Option<(i64, u32)> {
    let (whole, fraction) = match clock.split_once(['.', ',']) {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (clock, None),
    };
    let mut parts = whole.split(':');
    let hours = digits(parts.next()?).filter(|h| *h < 24)?;
    let minutes = digits(parts.next()?).filter(|m| *m < 60)?;
    // A leap second (`:60`) is read as the last second of its minute.
    let seconds = parts
        .next()
        .map_or(Some(0), |s| digits(s).map(|s| s.min(59)))?;
    if parts.next().is_some() || seconds > 59 {
        return None;
    }
    let nanos = match fraction {
        None => 0,
        Some(fraction) => {
            digits(fraction)?;
            let kept = fraction.get(..fraction.len().min(9))?;
            let scale = 10u32.pow(u32::try_from(9 - kept.len()).ok()?);
            kept.parse::<u32>().ok()? * scale
        }
    };
    Some((hours * 3_600 + minutes * 60 + seconds, nanos))
}

/// Seconds east of UTC of `Z`, `±HH:MM`, `±HHMM`, `±HH` or nothing (UTC).
fn parse_offset(zone: &str) -> Option<i64> {
    if zone.is_empty() || zone.eq_ignore_ascii_case("z") {
        return Some(0);
    }
    let (sign, rest) = match zone.split_at_checked(1)? {
        ("+", rest) => (1, rest),
        ("-", rest) => (-1, rest),
        _ => return None,
    };
    let rest = rest.replace(':', "");
    let (hours, minutes) = match rest.len() {
        2 => (digits(&rest)?, 0),
        4 => (digits(rest.get(..2)?)?, digits(rest.get(2..)?)?),
        _ => return None,
    };
    (hours < 24 && minutes < 60).then_some(sign * (hours * 3_600 + minutes * 60))
}

fn from_epoch(seconds: i64, nanos: u32) -> SystemTime {
    let magnitude = Duration::from_secs(seconds.unsigned_abs());
    let base = if seconds >= 0 {
        UNIX_EPOCH.checked_add(magnitude)
    } else {
        UNIX_EPOCH.checked_sub(magnitude)
    };
    base.and_then(|t| t.checked_add(Duration::from_nanos(u64::from(nanos))))
        .unwrap_or(UNIX_EPOCH)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date of a day count since 1970-01-01 (the inverse of [`days_from_civil`]).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(seconds)
    }

    #[test]
    fn a_utc_timestamp_with_milliseconds_reads_as_that_instant() {
        assert_eq!(
            parse_iso8601("2026-11-30T12:00:00.250Z"),
            Some(at(1_796_040_000) + Duration::from_millis(250))
        );
    }

    #[test]
    fn an_offset_is_subtracted_to_give_utc() {
        assert_eq!(
            parse_iso8601("2026-11-30T14:00:00+02:00"),
            parse_iso8601("2026-11-30T12:00:00Z")
        );
        assert_eq!(
            parse_iso8601("2026-11-30T07:30-0430"),
            parse_iso8601("2026-11-30T12:00Z")
        );
    }

    #[test]
    fn a_date_alone_or_a_time_without_offset_is_utc() {
        assert_eq!(parse_iso8601("1970-01-02"), Some(at(86_400)));
        assert_eq!(parse_iso8601("1970-01-01 00:01:05"), Some(at(65)));
    }

    #[test]
    fn impossible_or_malformed_timestamps_are_rejected() {
        for text in [
            "",
            "yesterday",
            "2026-02-30",
            "2026-13-01",
            "2026-1-01",
            "2026-11-30T25:00Z",
            "2026-11-30T12:00:00+2",
            "2026-11-30T",
            "2026-11-30X12:00",
            "２０２６-11-30",
        ] {
            assert_eq!(parse_iso8601(text), None, "{text:?}");
        }
    }

    #[test]
    fn formatting_then_parsing_gives_the_same_instant_before_and_after_1970() {
        for time in [
            at(0),
            at(1_796_040_000) + Duration::from_nanos(123_456_789),
            UNIX_EPOCH - Duration::from_secs(86_400 * 365 * 300 + 7),
            UNIX_EPOCH - Duration::from_nanos(1),
        ] {
            assert_eq!(parse_iso8601(&format_iso8601(time)), Some(time), "{time:?}");
        }
        assert_eq!(format_iso8601(at(1_796_040_000)), "2026-11-30T12:00:00Z");
    }
}
