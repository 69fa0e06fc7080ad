//! A Debian `Release`'s `Valid-Until:` field (its first paragraph),
//! which apt refuses to trust past: a signed `InRelease` out of date is
//! refused here as apt refuses it.

use super::ssh::days_from_civil;
use super::{Refusal, RefusalKind};

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `Err` when `release`'s `Valid-Until` is before `now` (seconds since
/// the epoch), cannot be read or is given twice; `Ok(None)` without one.
/// Field names are matched as apt matches them: case-insensitively
/// (`valid-until:` is the same field).
pub fn check_valid_until(release: &[u8], now: u64) -> Result<Option<String>, Refusal> {
    let text = String::from_utf8_lossy(release);
    let mut values = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| field_value(l, "Valid-Until"))
        .map(str::trim);
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(Refusal::malformed(
            "two Valid-Until fields (apt refuses such a Release too)".to_owned(),
        ));
    }
    let until = parse_date(value)
        .ok_or_else(|| Refusal::malformed(format!("Valid-Until {value:?} is not a date")))?;
    if now > until {
        return Err(Refusal::new(
            RefusalKind::Expired,
            format!("out of date: Valid-Until {value} has passed (apt refuses it too)"),
        ));
    }
    Ok(Some(value.to_owned()))
}

/// The value of a deb822 field line `Name: value` whose name is `name`,
/// in any case.
fn field_value<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let (field, value) = line.split_once(':')?;
    // White space before the colon read past too (stricter than a
    // reader that would miss `Valid-Until :`).
    field.trim_end().eq_ignore_ascii_case(name).then_some(value)
}

/// `Sat, 02 Dec 2026 22:33:12 UTC` (RFC 2822, as the archive writes it;
/// `UTC`, `GMT`, `Z` or `+0000`) as seconds since the epoch.
fn parse_date(value: &str) -> Option<u64> {
    let value = value.split_once(',').map_or(value, |(_, rest)| rest).trim();
    let mut words = value.split_whitespace();
    let day: u64 = words.next()?.parse().ok()?;
    let month = words.next()?;
    let month = MONTHS.iter().position(|m| *m == month)? as u64 + 1;
    let year: u64 = words.next()?.parse().ok()?;
    let mut clock = words.next()?.split(':').map(|n| n.parse::<u64>().ok());
    let (h, m, s) = (clock.next()??, clock.next()??, clock.next().flatten().unwrap_or(0));
    if !matches!(words.next(), Some("UTC" | "GMT" | "Z" | "+0000") | None)
        || !(1..=31).contains(&day)
        || year < 1970
        || h > 23
        || m > 59
        || s > 60
    {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_as_date_does() {
        // date -u -d 'Wed, 02 Dec 2026 22:33:12 UTC' +%s
        assert_eq!(parse_date("Wed, 02 Dec 2026 22:33:12 UTC"), Some(1_796_250_792));
        assert_eq!(parse_date("Thu, 01 Jan 1970 00:00:00 UTC"), Some(0));
        assert_eq!(parse_date("Wed, 02 Foo 2026 22:33:12 UTC"), None);
    }

    #[test]
    fn past_valid_until_is_refused() {
        let release = b"Origin: Debian\nValid-Until: Wed, 02 Dec 2026 22:33:12 UTC\n\nx\n";
        assert!(check_valid_until(release, 1_796_250_792).is_ok());
        let refused = check_valid_until(release, 1_796_250_793).unwrap_err();
        assert_eq!(refused.kind, RefusalKind::Expired);
        assert_eq!(check_valid_until(b"Origin: Debian\n", 0), Ok(None));
    }

    #[test]
    fn field_names_in_any_case_and_never_twice() {
        let lower = b"Origin: Debian\nvalid-until: Wed, 02 Dec 2026 22:33:12 UTC\n";
        let refused = check_valid_until(lower, 1_796_250_793).unwrap_err();
        assert_eq!(refused.kind, RefusalKind::Expired);
        let upper = b"VALID-UNTIL: Wed, 02 Dec 2026 22:33:12 UTC\n";
        assert_eq!(check_valid_until(upper, 1_796_250_793).unwrap_err().kind, RefusalKind::Expired);
        // A second one, later or earlier, is refused whichever it is.
        let twice = b"Valid-Until: Wed, 02 Dec 2036 22:33:12 UTC\nValid-Until: Wed, 02 Dec 2026 22:33:12 UTC\n";
        let refused = check_valid_until(twice, 0).unwrap_err();
        assert!(refused.to_string().contains("two Valid-Until"), "{refused}");
        // A later paragraph's field is not the Release's.
        let later = b"Origin: Debian\n\nValid-Until: Thu, 01 Jan 1970 00:00:00 UTC\n";
        assert_eq!(check_valid_until(later, 10), Ok(None));
    }
}
