//! Parsing the units users type: rates (`1gbit`, `100mbit`, `10G`), durations (`180ms`, `1.5s`),
//! sizes (`32M`, `64KiB`). Rates follow tc's conventions (bit-based, decimal prefixes).

use anyhow::{bail, Context, Result};
use std::time::Duration;

/// A rate in bits per second from `1gbit`, `100mbit`, `2.5Gbps`, `800m`, `1e9` (plain = bit/s).
pub fn parse_rate_bps(s: &str) -> Result<f64> {
    let t = s.trim().to_ascii_lowercase();
    let (num, unit) = split_number(&t);
    let x: f64 = num
        .parse()
        .with_context(|| format!("`{s}` is not a rate (try 1gbit, 100mbit)"))?;
    let mult = match unit {
        "" | "bit" | "bps" | "b/s" => 1.0,
        "k" | "kbit" | "kbps" | "kb/s" => 1e3,
        "m" | "mbit" | "mbps" | "mb/s" => 1e6,
        "g" | "gbit" | "gbps" | "gb/s" => 1e9,
        "t" | "tbit" | "tbps" | "tb/s" => 1e12,
        _ => bail!("unknown rate unit in `{s}` (use bit, kbit, mbit, gbit, tbit)"),
    };
    if !(x > 0.0 && x.is_finite()) {
        bail!("rate `{s}` must be positive");
    }
    Ok(x * mult)
}

/// A duration from `180ms`, `1.5s`, `250us`, `2m`, `1h`; a plain number means seconds.
pub fn parse_duration(s: &str) -> Result<Duration> {
    let t = s.trim().to_ascii_lowercase();
    let (num, unit) = split_number(&t);
    let x: f64 = num
        .parse()
        .with_context(|| format!("`{s}` is not a duration (try 180ms, 1.5s)"))?;
    let secs = match unit {
        "" | "s" | "sec" => x,
        "ms" => x * 1e-3,
        "us" | "µs" => x * 1e-6,
        "ns" => x * 1e-9,
        "m" | "min" => x * 60.0,
        "h" => x * 3600.0,
        _ => bail!("unknown time unit in `{s}` (use ns, us, ms, s, m, h)"),
    };
    if secs.is_nan() || secs < 0.0 {
        bail!("duration `{s}` must be non-negative");
    }
    Duration::try_from_secs_f64(secs).map_err(|_| anyhow::anyhow!("duration `{s}` is too long"))
}

/// A size in bytes from `1500`, `64k`, `32M`, `1GiB` (k/M/G are powers of 1024, as iperf).
pub fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim().to_ascii_lowercase();
    let (num, unit) = split_number(&t);
    let x: f64 = num
        .parse()
        .with_context(|| format!("`{s}` is not a size (try 1500, 32M)"))?;
    let mult = match unit {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => bail!("unknown size unit in `{s}` (use k, M, G)"),
    };
    if !(x >= 0.0 && x.is_finite()) {
        bail!("size `{s}` must be non-negative");
    }
    Ok((x * mult) as u64)
}

fn split_number(t: &str) -> (&str, &str) {
    let end = t
        .char_indices()
        .find(|(i, c)| {
            !(c.is_ascii_digit() || *c == '.' || ((*c == 'e') && *i > 0) || (*c == '-' && *i == 0))
        })
        .map(|(i, _)| i)
        .unwrap_or(t.len());
    (t[..end].trim(), t[end..].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_durations_sizes() {
        assert_eq!(parse_rate_bps("1gbit").unwrap(), 1e9);
        assert_eq!(parse_rate_bps("100mbit").unwrap(), 1e8);
        assert_eq!(parse_rate_bps("2.5G").unwrap(), 2.5e9);
        assert!(parse_rate_bps("fast").is_err());
        assert!(parse_rate_bps("0").is_err());
        assert_eq!(parse_duration("180ms").unwrap(), Duration::from_millis(180));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("3 fortnights").is_err());
        assert_eq!(parse_size("32M").unwrap(), 32 << 20);
        assert_eq!(parse_size("1500").unwrap(), 1500);
    }
}
