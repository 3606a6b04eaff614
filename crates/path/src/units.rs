//! The units a scenario file is written in: rates (`"1gbit"`, `"100mbit"`, or a number of bit/s),
//! durations (`"180ms"`, `"1.5s"`, `"1h"`, or a number of seconds) and sizes (`"1500"`, `"64k"`,
//! `"32M"`, powers of 1024 as iperf counts them). Rates use tc's decimal, bit-based prefixes.
//! Event rates (how often something happens) are a count per duration: `"4/s"`, `"1/250ms"`.
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

/// How often something happens, in events per second.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default)]
pub struct EventRate(pub f64);

/// A size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub u64);

/// The forms a rate may take, for error messages.
pub const RATE_FORMS: &str =
    "a rate such as \"1gbit\", \"100mbit\", \"2.5Gb/s\" or a number of bit/s";
/// The forms a duration may take, for error messages.
pub const DURATION_FORMS: &str =
    "a duration such as \"180ms\", \"1.5s\", \"250us\", \"1h\" or a number of seconds";
/// The forms an event rate may take, for error messages.
pub const EVENT_RATE_FORMS: &str =
    "an event rate such as \"4/s\", \"1/250ms\", \"30/min\" or a number per second";
/// The forms a size may take, for error messages.
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

/// Every rate form, for error messages.
pub const RATE_UNITS: &str = "bit rates: bit, kbit, mbit, gbit, tbit (10^3 steps), kibit, mibit, \
gibit, tibit (2^10 steps), b/s, kb/s, Mb/s, Gb/s, Tb/s; byte rates (× 8): bps, kbps, mbps, gbps, \
tbps (tc's spelling: bps is BYTES per second), B/s, kB/s, MB/s, GB/s, TB/s; a bare number is \
bit/s in a scenario file";

/// Parse a rate in tc's units exactly (`tc(8)`: `kbit` is 1000 bit/s, `kbps` is 1000 BYTES/s,
/// `kibit` 1024 bit/s), without regard to case as tc compares them (`1Gbps` = `1gbps` = 8 Gb/s:
/// tc's `bps` is BYTES per second, whatever most readers take `Mbps` for), and the SI forms,
/// where the case of `b`/`B` says bits or bytes (`Mb/s`, `MB/s`). A bare prefix (`1G`, `800m`)
/// is refused with the list of accepted forms. A plain number is bit/s.
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let t = s.trim();
    let (num, unit) = split_number(t);
    let x: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not {RATE_FORMS} ({RATE_UNITS})"))?;
    // SI forms: the case of `b`/`B` says bits or bytes.
    let si = |u: &str| -> Option<f64> {
        let (prefix, rest) = match u.char_indices().nth(1) {
            Some((i, _)) if u.ends_with("/s") && u.len() > 3 => (&u[..i], &u[i..]),
            _ => ("", u),
        };
        let bits = match rest {
            "b/s" => 1.0,
            "B/s" => 8.0,
            _ => return None,
        };
        let m = match prefix {
            "" => 1.0,
            "k" | "K" => 1e3,
            "M" => 1e6,
            "G" => 1e9,
            "T" => 1e12,
            _ => return None,
        };
        Some(bits * m)
    };
    // tc compares its units without regard to case (`1Gbit` = `1gbit`, `1Gbps` = `1gbps`).
    let tc_unit = unit.to_ascii_lowercase();
    let unit = if tc_unit.ends_with("bit") || tc_unit.ends_with("bps") {
        tc_unit.as_str()
    } else {
        unit
    };
    let mult = match unit {
        "" => 1.0,
        "bit" => 1.0,
        "kbit" => 1e3,
        "mbit" => 1e6,
        "gbit" => 1e9,
        "tbit" => 1e12,
        "kibit" => 1024.0,
        "mibit" => 1024.0 * 1024.0,
        "gibit" => 1024.0 * 1024.0 * 1024.0,
        "tibit" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        "bps" => 8.0,
        "kbps" => 8e3,
        "mbps" => 8e6,
        "gbps" => 8e9,
        "tbps" => 8e12,
        u => match si(u) {
            Some(m) => m,
            None => {
                return Err(format!(
                    "`{s}`: `{u}` is not a rate unit, or is ambiguous (bits or bytes?); use \
                     {RATE_UNITS}"
                ))
            }
        },
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

/// Parse an event rate: a count per duration (`4/s`, `1/250ms`, `30/min`; the duration in
/// `parse_duration`'s units, its number optional), or a plain number per second.
pub fn parse_event_rate(s: &str) -> Result<EventRate, String> {
    let (count, per) = s.split_once('/').unwrap_or((s, "s"));
    let count: f64 = count
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not {EVENT_RATE_FORMS}"))?;
    let per = per.trim();
    // "4/s" means 4 per one second: the duration's number may be left out.
    let per = if per.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        parse_duration(per)
    } else {
        parse_duration(&format!("1{per}"))
    }
    .map_err(|e| format!("`{s}`: {e}"))?;
    if per.0 == 0 {
        return Err(format!("`{s}`: the duration after `/` must be positive"));
    }
    let rate = count * 1e9 / per.0 as f64;
    if !(rate >= 0.0 && rate.is_finite()) {
        return Err(format!(
            "event rate `{s}` must be a non-negative number per duration"
        ));
    }
    Ok(EventRate(rate))
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

impl<'de> Deserialize<'de> for EventRate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor {
            forms: EVENT_RATE_FORMS,
            parse: parse_event_rate,
            from_num: |x| (x >= 0.0 && x.is_finite()).then_some(EventRate(x)),
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

impl Serialize for EventRate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl Nanos {
    /// The duration in seconds.
    pub fn secs(self) -> f64 {
        self.0 as f64 * 1e-9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tc's units exactly: `bps` and its prefixes are BYTES per second; SI forms say bits or
    /// bytes by the case of `b`; forms read both ways are refused with every accepted form.
    #[test]
    fn rates_follow_tc_and_refuse_ambiguous_forms() {
        for (text, bps) in [
            ("1gbit", 1e9),
            ("1Gbit", 1e9),
            ("1kibit", 1024.0),
            ("1gbps", 8e9),
            ("1Gbps", 8e9),
            ("10Mbps", 8e7),
            ("1GBPS", 8e9),
            ("125mbps", 1e9),
            ("1bps", 8.0),
            ("1Gb/s", 1e9),
            ("1GB/s", 8e9),
            ("100Mb/s", 1e8),
            ("2kB/s", 16e3),
            ("1000", 1000.0),
        ] {
            assert_eq!(parse_rate(text).unwrap(), Rate(bps), "{text}");
        }
        for ambiguous in ["1G", "800m", "1gb/s", "1mb/s", "1 furlong"] {
            let e = parse_rate(ambiguous).unwrap_err();
            assert!(
                e.contains("ambiguous") && e.contains("kbps") && e.contains("MB/s"),
                "{ambiguous}: {e}"
            );
        }
    }

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

    #[test]
    fn event_rates_are_a_count_per_duration() {
        for (text, per_s) in [
            ("4/s", 4.0),
            ("10 / s", 10.0),
            ("1/250ms", 4.0),
            ("3/2s", 1.5),
            ("30/min", 0.5),
            ("0/s", 0.0),
            ("2.5", 2.5),
        ] {
            assert_eq!(parse_event_rate(text).unwrap(), EventRate(per_s), "{text}");
        }
        for (bad, says) in [
            ("often", "is not an event rate"),
            ("4/fortnight", "unknown time unit"),
            ("4/0s", "must be positive"),
            ("-4/s", "non-negative"),
        ] {
            let e = parse_event_rate(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
