//! The units users type on the command line: rates (`1gbit`, `100mbit`, `2.5Gb/s`), durations
//! (`180ms`, `1.5s`), sizes (`32M`, `64KiB`). The grammar is the scenario file's
//! (`longhaul_sim::units`: tc's bit-based decimal rate prefixes, iperf's 1024-based sizes), so a
//! value means the same on the command line and in a scenario; this module only adapts the
//! results to the CLI's types and error type.

use anyhow::{anyhow, Result};
use longhaul_sim::units;
use std::time::Duration;

/// A rate in bits per second from `1gbit`, `100mbit`, `2.5Gb/s`, `125mbps` (tc: bytes/s). A
/// flag needs a unit: `--rate 1000` is refused rather than read as 1000 bit/s.
pub fn parse_rate_bps(s: &str) -> Result<f64> {
    require_unit(s, units::RATE_UNITS)?;
    parse_rate_bps_in_file(s)
}

/// A rate as a file writes it, where a bare number is bit/s (`[link] rate = 1e9`).
pub fn parse_rate_bps_in_file(s: &str) -> Result<f64> {
    units::parse_rate(s).map(|r| r.0).map_err(|e| anyhow!(e))
}

/// A duration from `180ms`, `1.5s`, `250us`, `2m`, `1h`. A flag needs a unit: `--rtt 180`
/// is refused rather than read as 180 s.
pub fn parse_duration(s: &str) -> Result<Duration> {
    require_unit(s, "ns, us, ms, s, min, h (e.g. 180ms, 1.5s)")?;
    parse_duration_in_file(s)
}

/// A duration in nanoseconds, as the emulator's options take it (saturating past 584 years).
pub fn nanos(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

/// A duration as a file writes it, where a bare number is seconds.
pub fn parse_duration_in_file(s: &str) -> Result<Duration> {
    units::parse_duration(s)
        .map(|n| Duration::from_nanos(n.0))
        .map_err(|e| anyhow!(e))
}

/// A bare number on the command line is refused: its unit is too easy to get wrong. Zero is
/// zero in every unit (`--coalesce 0`).
fn require_unit(s: &str, units: &str) -> Result<()> {
    if s.trim().parse::<f64>().is_ok_and(|x| x != 0.0) {
        return Err(anyhow!(
            "`{s}` needs a unit on the command line; use {units}"
        ));
    }
    Ok(())
}

/// A size in bytes from `1500`, `64k`, `32M`, `1GiB` (k/M/G are powers of 1024, as iperf).
pub fn parse_size(s: &str) -> Result<u64> {
    units::parse_size(s).map(|b| b.0).map_err(|e| anyhow!(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_durations_sizes() {
        assert_eq!(parse_rate_bps("1gbit").unwrap(), 1e9);
        assert_eq!(parse_rate_bps("100mbit").unwrap(), 1e8);
        assert_eq!(parse_rate_bps("2.5Gb/s").unwrap(), 2.5e9);
        // tc's byte rates: 1gbps is a gigabyte per second.
        assert_eq!(parse_rate_bps("1gbps").unwrap(), 8e9);
        assert_eq!(parse_rate_bps("1GB/s").unwrap(), 8e9);
        assert!(parse_rate_bps("fast").is_err());
        assert!(parse_rate_bps("0bit").is_err());
        assert_eq!(parse_duration("180ms").unwrap(), Duration::from_millis(180));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert!(parse_duration("3 fortnights").is_err());
        assert_eq!(parse_size("32M").unwrap(), 32 << 20);
        assert_eq!(parse_size("1500").unwrap(), 1500);
        assert!(parse_size("-1").is_err());
    }

    /// Flags need units (`--rate 1000` was 1000 bit/s, `--rtt 180` 180 s); files keep their
    /// documented base units.
    #[test]
    fn flags_need_units_files_keep_base_units() {
        let e = parse_rate_bps("1000").unwrap_err().to_string();
        assert!(e.contains("needs a unit") && e.contains("mbit"), "{e}");
        let e = parse_duration("180").unwrap_err().to_string();
        assert!(e.contains("needs a unit") && e.contains("ms"), "{e}");
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_rate_bps_in_file("1000").unwrap(), 1000.0);
        assert_eq!(
            parse_duration_in_file("1.5").unwrap(),
            Duration::from_millis(1500)
        );
    }

    #[test]
    fn errors_say_what_is_allowed() {
        let e = parse_rate_bps("1 furlong").unwrap_err().to_string();
        assert!(e.contains("gbit"), "{e}");
        let e = parse_duration("soon").unwrap_err().to_string();
        assert!(e.contains("180ms"), "{e}");
    }
}
