//! The units a scenario file is written in: rates (`"1gbit"`, `"100mbit"`, or a number of bit/s),
//! durations (`"180ms"`, `"1.5s"`, `"1h"`, or a number of seconds) and sizes (`"1500"`, `"64k"`,
//! `"32M"`, powers of 1024 as iperf counts them). Rates use tc's decimal, bit-based prefixes.
//!
//! Each unit is a newtype that deserializes from either a string or a number, so a scenario can
//! say `rate = "1gbit"` or `rate = 1e9`, and a bad value's error says which forms are allowed.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Rate(pub f64);

/// A duration in integer nanoseconds (the simulator's time unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Nanos(pub u64);

/// A size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub u64);

pub const RATE_FORMS: &str = "a rate such as \"1gbit\", \"100mbit\", \"2.5G\" or a number of bit/s";
pub const DURATION_FORMS: &str =
    "a duration such as \"180ms\", \"1.5s\", \"250us\", \"1h\" or a number of seconds";
pub const SIZE_FORMS: &str = "a size such as 1500, \"64k\", \"32M\" (k/M/G = 1024-based)";

fn split_number(t: &str) -> (&str, &str) {
    let end = t
        .char_indices()
        .find(|(i, c)| {
            !(c.is_ascii_digit()
                || *c == '.'
                || (*c == 'e' && *i > 0 && t[i + 1..].starts_with(|d: char| d.is_ascii_digit()))
                || (*c == '-' && *i == 0))
        })
        .map(|(i, _)| i)
        .unwrap_or(t.len());
    (t[..end].trim(), t[end..].trim())
}

/// Parse a rate: `1gbit`, `100mbit`, `2.5Gbps`, `800m`, `1e9` (plain numbers are bit/s).
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let t = s.trim().to_ascii_lowercase();
    let (num, unit) = split_number(&t);
    let x: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not {RATE_FORMS}"))?;
    let mult = match unit {
        "" | "bit" | "bps" | "b/s" => 1.0,
        "k" | "kbit" | "kbps" | "kb/s" => 1e3,
        "m" | "mbit" | "mbps" | "mb/s" => 1e6,
        "g" | "gbit" | "gbps" | "gb/s" => 1e9,
        "t" | "tbit" | "tbps" | "tb/s" => 1e12,
        _ => {
            return Err(format!(
                "unknown rate unit in `{s}`: use bit, kbit, mbit, gbit, tbit"
            ))
        }
    };
    let r = x * mult;
    if !(r > 0.0 && r.is_finite()) {
        return Err(format!("rate `{s}` must be positive"));
    }
    Ok(Rate(r))
}

/// Parse a duration: `180ms`, `1.5s`, `250us`, `2m`, `1h`; a plain number means seconds.
pub fn parse_duration(s: &str) -> Result<Nanos, String> {
    let t = s.trim().to_ascii_lowercase();
    let (num, unit) = split_number(&t);
    let x: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not {DURATION_FORMS}"))?;
    let ns_per = match unit {
        "" | "s" | "sec" => 1e9,
        "ms" => 1e6,
        "us" | "µs" => 1e3,
        "ns" => 1.0,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        _ => {
            return Err(format!(
                "unknown time unit in `{s}`: use ns, us, ms, s, min, h"
            ))
        }
    };
    let secs = x * ns_per / 1e9;
    if secs.is_nan() || secs < 0.0 {
        return Err(format!("duration `{s}` must be non-negative"));
    }
    secs_to_nanos(secs).ok_or_else(|| {
        format!(
            "duration `{s}` is too long: at most {MAX_SECS:.0} s (about 570 years; \
             virtual time counts nanoseconds in 64 bits)"
        )
    })
}

/// The longest duration a 64-bit nanosecond clock holds, rounded down.
const MAX_SECS: f64 = 1.8e10;

fn secs_to_nanos(secs: f64) -> Option<Nanos> {
    (secs >= 0.0 && secs.is_finite() && secs < MAX_SECS).then(|| Nanos((secs * 1e9).round() as u64))
}

/// Parse a size: `1500`, `64k`, `32M`, `1GiB`.
pub fn parse_size(s: &str) -> Result<Bytes, String> {
    let t = s.trim().to_ascii_lowercase();
    let (num, unit) = split_number(&t);
    let x: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not {SIZE_FORMS}"))?;
    let mult = match unit {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("unknown size unit in `{s}`: use k, M, G")),
    };
    if !(x >= 0.0 && x.is_finite()) {
        return Err(format!("size `{s}` must be non-negative"));
    }
    Ok(Bytes((x * mult).round() as u64))
}

/// Accepts a string (parsed by `parse`) or a number (converted by `from_num`).
struct UnitVisitor<T> {
    forms: &'static str,
    parse: fn(&str) -> Result<T, String>,
    from_num: fn(f64) -> Option<T>,
}

impl<'de, T> de::Visitor<'de> for UnitVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.forms)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse)(v).map_err(E::custom)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        (self.from_num)(v).ok_or_else(|| E::custom(format!("{v} is out of range: {}", self.forms)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        self.visit_f64(v as f64)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        self.visit_f64(v as f64)
    }
}

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor {
            forms: RATE_FORMS,
            parse: parse_rate,
            from_num: |x| (x > 0.0 && x.is_finite()).then_some(Rate(x)),
        })
    }
}

impl<'de> Deserialize<'de> for Nanos {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor {
            forms: DURATION_FORMS,
            parse: parse_duration,
            from_num: secs_to_nanos,
        })
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor {
            forms: SIZE_FORMS,
            parse: parse_size,
            from_num: |x| (x >= 0.0 && x.is_finite()).then_some(Bytes(x.round() as u64)),
        })
    }
}

impl Serialize for Rate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

impl Serialize for Nanos {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0 as f64 * 1e-9)
    }
}

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl Nanos {
    pub fn secs(self) -> f64 {
        self.0 as f64 * 1e-9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_rate("1gbit").unwrap(), Rate(1e9));
        assert_eq!(parse_rate("100mbit").unwrap(), Rate(1e8));
        assert_eq!(parse_rate("1e9").unwrap(), Rate(1e9));
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("0").is_err());
        assert_eq!(parse_duration("180ms").unwrap(), Nanos(180_000_000));
        assert_eq!(parse_duration("1h").unwrap(), Nanos(3_600_000_000_000));
        assert_eq!(parse_duration("250us").unwrap(), Nanos(250_000));
        assert!(parse_duration("3 weeks").is_err());
        let long = parse_duration("1e30s").unwrap_err();
        assert!(long.contains("too long"), "{long}");
        let negative = parse_duration("-1s").unwrap_err();
        assert!(negative.contains("non-negative"), "{negative}");
        assert_eq!(parse_size("64k").unwrap(), Bytes(65536));
        assert_eq!(parse_size("1500").unwrap(), Bytes(1500));
    }
}
