//! Parsing of the numbers users type: counts (`100_000`, `1M`), sizes (`64KiB`) and durations (`30s`).

use crate::error::{Error, Result};
use std::time::Duration;

/// The largest message size zmqperf accepts (1 GiB); larger runs would exhaust memory.
pub const MAX_MESSAGE_SIZE: usize = 1 << 30;

/// Whether the separators of a number's digits group them by three (`1,000`, `100_000`):
/// `1,0,0` is a typo, not 100.
fn grouped_by_three(s: &str) -> bool {
    let digits_end = s
        .trim()
        .find(|c: char| !(c.is_ascii_digit() || c == '_' || c == ','))
        .unwrap_or(s.trim().len());
    let body = &s.trim()[..digits_end];
    if !body.contains(['_', ',']) {
        return true;
    }
    let groups: Vec<&str> = body.split(['_', ',']).collect();
    groups[0].len() <= 3 && !groups[0].is_empty() && groups[1..].iter().all(|g| g.len() == 3)
}

fn split_number(s: &str) -> (String, String) {
    let cleaned: String = s
        .trim()
        .chars()
        .filter(|c| *c != '_' && *c != ',')
        .collect();
    let idx = cleaned
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(cleaned.len());
    let (num, suffix) = cleaned.split_at(idx);
    (num.to_string(), suffix.to_string())
}

/// What a count too large for any run is told.
const COUNT_LIMIT: &str = "too large; the largest count is 9,223,372,036,854,775,807 (2^63 - 1)";

/// Parses a message or round-trip count: digits with optional `_` or `,` separators
/// (`100_000`) and an optional decimal suffix `k`, `M` or `G`. Zero is refused.
pub fn parse_count(what: &str, s: &str) -> Result<u64> {
    let (num, suffix) = split_number(s);
    let hint = "write a whole number such as 1000, 100_000 or 1M";
    if s.trim().starts_with('-') {
        return Err(Error::invalid(
            what,
            s,
            format!("must be at least 1; {hint}"),
        ));
    }
    if num.is_empty() {
        return Err(Error::invalid(what, s, format!("not a number; {hint}")));
    }
    if !grouped_by_three(s) {
        return Err(Error::invalid(
            what,
            s,
            format!("separators must group the digits by three (1,000 or 100_000); {hint}"),
        ));
    }
    let mult: u64 = match suffix.as_str() {
        "" => 1,
        "k" | "K" => 1_000,
        "m" | "M" => 1_000_000,
        "g" | "G" => 1_000_000_000,
        _ => {
            return Err(Error::invalid(
                what,
                s,
                format!("unknown suffix '{suffix}'; {hint}"),
            ))
        }
    };
    let n = num
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| Error::invalid(what, s, COUNT_LIMIT))?;
    if n == 0 {
        return Err(Error::invalid(
            what,
            s,
            format!("must be at least 1; {hint}"),
        ));
    }
    if n > i64::MAX as u64 {
        return Err(Error::invalid(what, s, COUNT_LIMIT));
    }
    Ok(n)
}

/// Parses a message size in bytes: digits with optional separators and an optional binary
/// suffix `B`, `K`/`KiB`, `M`/`MiB`, `G`/`GiB` (powers of 1024). Must be 1 B .. 1 GiB.
pub fn parse_size(what: &str, s: &str) -> Result<usize> {
    let (mut num, mut suffix) = split_number(s);
    // A fraction of a unit (`1.5KiB`): the digits after the point join the number.
    let mut fraction = String::new();
    if let Some(rest) = suffix.strip_prefix('.') {
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        fraction = rest[..end].to_string();
        suffix = rest[end..].to_string();
        if fraction.is_empty() {
            num.clear();
        }
    }
    let hint = "write a size in bytes such as 64, 1024, 64KiB or 1MiB";
    if s.trim().starts_with('-') {
        return Err(Error::invalid(
            what,
            s,
            format!("a message must hold at least 1 byte; {hint}"),
        ));
    }
    if num.is_empty() {
        return Err(Error::invalid(what, s, format!("not a number; {hint}")));
    }
    let mult: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => {
            return Err(Error::invalid(
                what,
                s,
                format!("unknown unit '{suffix}'; {hint}"),
            ))
        }
    };
    let whole = num
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| Error::invalid(what, s, "too large; the limit is 1 GiB"))?;
    let n = if fraction.is_empty() {
        whole
    } else {
        // Exact: the fraction's digits over their power of ten, times the unit.
        let digits: u32 = fraction.len().min(18) as u32;
        let f: u128 = fraction[..digits as usize].parse().unwrap_or(0);
        let scaled = f * mult as u128;
        let ten = 10u128.pow(digits);
        if !scaled.is_multiple_of(ten) {
            num = format!("{num}.{fraction}");
            return Err(Error::invalid(
                what,
                s,
                format!("{num} {suffix} is not a whole number of bytes; {hint}"),
            ));
        }
        whole.saturating_add((scaled / ten) as u64)
    };
    if n == 0 {
        return Err(Error::invalid(
            what,
            s,
            format!("a message must hold at least 1 byte; {hint}"),
        ));
    }
    if n > MAX_MESSAGE_SIZE as u64 {
        return Err(Error::invalid(what, s, "too large; the limit is 1 GiB"));
    }
    Ok(n as usize)
}

/// Parses a high-water mark (`--hwm`): messages, 0 for no limit, at most what libzmq's
/// int option holds.
pub fn parse_hwm(s: &str) -> Result<i32> {
    let hint = "write a number of messages from 0 (no limit) to 2147483647";
    let t = s.trim().replace(['_', ','], "");
    match t.parse::<i64>() {
        Ok(n) if n < 0 => Err(Error::invalid("--hwm", s, format!("negative; {hint}"))),
        Ok(n) if n > i32::MAX as i64 => {
            Err(Error::invalid("--hwm", s, format!("too large; {hint}")))
        }
        Ok(n) if grouped_by_three(s) => Ok(n as i32),
        Ok(_) => Err(Error::invalid(
            "--hwm",
            s,
            format!("separators must group the digits by three; {hint}"),
        )),
        Err(_) if t.starts_with('-') || t.chars().all(|c| c.is_ascii_digit()) && !t.is_empty() => {
            Err(Error::invalid("--hwm", s, format!("out of range; {hint}")))
        }
        Err(_) => Err(Error::invalid("--hwm", s, format!("not a number; {hint}"))),
    }
}

/// Parses a duration: a number with unit `ms`, `s`, `m` or `h` (`250ms`, `30s`, `2m`,
/// `1h`); a bare number means seconds. 1 ms to a week.
pub fn parse_duration(what: &str, s: &str) -> Result<Duration> {
    let t = s.trim();
    let hint = "write a duration such as 500ms, 30s, 2m or 1h";
    let idx = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(idx);
    let v: f64 = num
        .parse()
        .map_err(|_| Error::invalid(what, s, format!("not a number; {hint}")))?;
    let secs = match unit.trim() {
        "" | "s" | "sec" => v,
        "ms" => v / 1000.0,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        other => {
            return Err(Error::invalid(
                what,
                s,
                format!("unknown unit '{other}'; {hint}"),
            ))
        }
    };
    if !secs.is_finite() || !(0.001..=86_400.0 * 7.0).contains(&secs) {
        return Err(Error::invalid(
            what,
            s,
            format!("must be at least 1 ms and at most a week (168h); {hint}"),
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Reads a file the user wrote (`what` names it in errors: "topology file", "hosts file"):
/// an unreadable file is an I/O error (exit 11), but text that is not UTF-8 is a mistake in
/// the file (exit 3, with the byte where it goes wrong), as any other.
pub fn read_text_file(what: &str, path: &str) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| Error::Io {
        op: format!("reading {what} {path}"),
        source: e,
    })?;
    String::from_utf8(bytes).map_err(|e| {
        Error::invalid(
            what,
            path,
            format!(
                "not UTF-8 text (byte {} of the file is not); save it as UTF-8",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn sizes_take_fractions_of_a_unit_that_are_whole_bytes() {
        assert_eq!(parse_size("s", "1.5KiB").unwrap(), 1536);
        assert_eq!(parse_size("s", "0.5MiB").unwrap(), 512 << 10);
        let e = parse_size("s", "1.3KiB").unwrap_err().to_string();
        assert!(e.contains("1.3 KiB is not a whole number of bytes"), "{e}");
        assert!(parse_size("s", "1.5").is_err());
        assert!(parse_size("s", "1.KiB").is_err());
    }

    #[test]
    fn durations_take_hours_and_refuse_less_than_a_millisecond() {
        assert_eq!(
            parse_duration("t", "2h").unwrap(),
            Duration::from_secs(7200)
        );
        let e = parse_duration("t", "0.001ms").unwrap_err().to_string();
        assert!(e.contains("at least 1 ms"), "{e}");
        assert_eq!(
            parse_duration("t", "1ms").unwrap(),
            Duration::from_millis(1)
        );
        assert!(parse_duration("t", "169h").is_err());
    }

    #[test]
    fn a_count_too_large_says_the_limit() {
        let e = parse_count("n", "100000000000000000000000")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the largest count is 9,223,372,036,854,775,807"),
            "{e}"
        );
    }

    #[test]
    fn a_file_that_is_not_utf8_is_a_mistake_in_the_file() {
        let dir = std::env::temp_dir().join(format!("zp-parse-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.toml");
        std::fs::write(&f, b"name = 1\n\xff\xfe").unwrap();
        let e = read_text_file("topology file", f.to_str().unwrap()).unwrap_err();
        assert_eq!(e.exit_code(), 3, "{e}");
        assert!(e.to_string().contains("byte 9"), "{e}");
        let missing = dir.join("none.toml");
        let e = read_text_file("topology file", missing.to_str().unwrap()).unwrap_err();
        assert_eq!(e.exit_code(), 11, "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn separators_group_by_three() {
        assert_eq!(parse_count("n", "1,000").unwrap(), 1000);
        assert_eq!(parse_count("n", "100_000").unwrap(), 100_000);
        assert_eq!(parse_count("n", "1_000_000").unwrap(), 1_000_000);
        for bad in ["1,0,0", "10_00", "1,00,000", "_100"] {
            let e = parse_count("n", bad).unwrap_err().to_string();
            assert!(e.contains("group the digits by three"), "{bad}: {e}");
        }
    }

    #[test]
    fn counts_accept_separators_and_suffixes() {
        assert_eq!(parse_count("count", "100_000").unwrap(), 100_000);
        assert_eq!(parse_count("count", "1,000").unwrap(), 1_000);
        assert_eq!(parse_count("count", "1M").unwrap(), 1_000_000);
        assert_eq!(parse_count("count", "10k").unwrap(), 10_000);
    }

    #[test]
    fn counts_refuse_zero_and_junk() {
        for bad in ["0", "", "abc", "-5", "1.5", "10x", "99999999999999999999"] {
            let e = parse_count("roundtrip-count", bad).unwrap_err();
            assert_eq!(e.exit_code(), 3, "{bad}");
            assert!(e.to_string().contains("roundtrip-count"), "{e}");
        }
    }

    #[test]
    fn sizes_accept_binary_units() {
        assert_eq!(parse_size("size", "1").unwrap(), 1);
        assert_eq!(parse_size("size", "64KiB").unwrap(), 65_536);
        assert_eq!(parse_size("size", "64MiB").unwrap(), 64 << 20);
        assert_eq!(parse_size("size", "1k").unwrap(), 1024);
        assert_eq!(parse_size("size", "1GiB").unwrap(), 1 << 30);
    }

    #[test]
    fn sizes_refuse_zero_too_large_and_junk() {
        for bad in ["0", "2GiB", "ten", "-1", "5 parsecs"] {
            assert!(parse_size("message-size", bad).is_err(), "{bad}");
        }
        let e = parse_size("message-size", "0").unwrap_err().to_string();
        assert!(e.contains("at least 1 byte"), "{e}");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("t", "30").unwrap(), Duration::from_secs(30));
        assert_eq!(
            parse_duration("t", "250ms").unwrap(),
            Duration::from_millis(250)
        );
        assert_eq!(parse_duration("t", "2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("t", "0").is_err());
        assert!(parse_duration("t", "soon").is_err());
    }
}
