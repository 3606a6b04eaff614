//! The value forms of the emulator's settings beyond the scenario file's units: probabilities
//! (`1%`, `0.01`), cross-traffic specs and comma-separated lists.

use super::SettingsError;
use crate::model::cross::{CrossConfig, CrossProcess};
use longhaul_path::cross::{DEFAULT_WEB_MEAN_BYTES, DEFAULT_WEB_SHAPE};
use longhaul_path::units;

/// The result of parsing one setting.
pub type Result<T> = std::result::Result<T, SettingsError>;

/// A probability from `1%`, `0.01`.
pub fn parse_probability(s: &str) -> Result<f64> {
    let t = s.trim();
    let p = if let Some(pct) = t.strip_suffix('%') {
        pct.trim()
            .parse::<f64>()
            .map_err(|_| SettingsError(format!("`{s}` is not a percentage")))?
            / 100.0
    } else {
        t.parse::<f64>()
            .map_err(|_| SettingsError(format!("`{s}` is not a probability (try 0.01 or 1%)")))?
    };
    if !(0.0..=1.0).contains(&p) {
        return Err(SettingsError(format!(
            "probability `{s}` must be within 0..1 (0%..100%)"
        )));
    }
    Ok(p)
}

/// Cross traffic: `KIND,rate=R[,size=B][,on=D,off=D][,mean=B][,shape=A][,dir=ab|ba|both]`,
/// KIND cbr, poisson, onoff (`on`, `off`: mean periods) or web (`mean`: mean transfer size,
/// default 100 KiB; `shape`: their Pareto shape, default 1.2); R is the average load for every
/// kind. `dir` is read by whoever splits the specs per direction and only checked here.
pub fn parse_cross(spec: &str) -> Result<CrossConfig> {
    let bad = |m: String| SettingsError(format!("cross `{spec}`: {m}"));
    let mut parts = spec.split(',').map(str::trim);
    let kind = parts.next().unwrap_or_default();
    let (mut rate, mut size, mut on, mut off) = (None, 1500u32, None, None);
    let (mut mean, mut shape) = (None, None);
    for kv in parts {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| bad(format!("`{kv}` is not key=value")))?;
        match k {
            "rate" => rate = Some(units::parse_rate(v).map_err(bad)?.0),
            "size" => size = units::parse_size(v).map_err(bad)?.0 as u32,
            "on" => on = Some(units::parse_duration(v).map_err(bad)?.0),
            "off" => off = Some(units::parse_duration(v).map_err(bad)?.0),
            "mean" => mean = Some(units::parse_size(v).map_err(bad)?.0),
            "shape" => {
                shape = Some(
                    v.parse::<f64>()
                        .map_err(|_| bad(format!("shape `{v}` is not a number")))?,
                )
            }
            "dir" => {
                if !matches!(v, "ab" | "ba" | "both") {
                    return Err(bad("dir must be ab, ba or both".into()));
                }
            }
            _ => {
                return Err(bad(format!(
                    "unknown key `{k}` (rate, size, on, off, mean, shape, dir)"
                )))
            }
        }
    }
    let rate_bps = rate.ok_or_else(|| bad("needs rate=R".into()))?;
    if kind != "onoff" && (on.is_some() || off.is_some()) {
        return Err(bad("on and off are onoff's".into()));
    }
    if kind != "web" && (mean.is_some() || shape.is_some()) {
        return Err(bad("mean and shape are web's".into()));
    }
    let kind = match kind {
        "cbr" => CrossProcess::Cbr,
        "poisson" => CrossProcess::Poisson,
        "onoff" => CrossProcess::OnOff {
            mean_on_ns: on.ok_or_else(|| bad("onoff needs on=DURATION".into()))?,
            mean_off_ns: off.ok_or_else(|| bad("onoff needs off=DURATION".into()))?,
        },
        "web" => CrossProcess::Web {
            mean_bytes: mean.unwrap_or(DEFAULT_WEB_MEAN_BYTES),
            shape: shape.unwrap_or(DEFAULT_WEB_SHAPE),
        },
        k => {
            return Err(bad(format!(
                "unknown kind `{k}` (cbr, poisson, onoff, web)"
            )))
        }
    };
    Ok(CrossConfig::new(kind, rate_bps, size))
}

/// `s` split at commas into `min..=max` trimmed values; `what` names the setting in errors.
pub fn floats(s: &str, what: &str, min: usize, max: usize) -> Result<Vec<String>> {
    let v: Vec<String> = s.split(',').map(|x| x.trim().to_string()).collect();
    if v.len() < min || v.len() > max {
        return Err(SettingsError(format!(
            "{what} `{s}` needs {min} to {max} comma-separated values"
        )));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_specs() {
        let c = parse_cross("onoff,rate=200mbit,on=10ms,off=40ms").unwrap();
        assert_eq!(
            c.kind,
            CrossProcess::OnOff {
                mean_on_ns: 10_000_000,
                mean_off_ns: 40_000_000
            }
        );
        assert_eq!(c.rate_bps, 200e6);
        assert_eq!(c.packet_bytes, 1500);
        let e = parse_cross("bursty,rate=1mbit").unwrap_err().to_string();
        assert!(e.contains("unknown kind"), "{e}");
        let e = parse_cross("cbr").unwrap_err().to_string();
        assert!(e.contains("needs rate=R"), "{e}");
        let c = parse_cross("web,rate=50mbit,mean=1MiB,shape=1.5").unwrap();
        assert_eq!(
            c.kind,
            CrossProcess::Web {
                mean_bytes: 1 << 20,
                shape: 1.5
            }
        );
        let c = parse_cross("web,rate=50mbit").unwrap();
        assert_eq!(
            c.kind,
            CrossProcess::Web {
                mean_bytes: 100 * 1024,
                shape: 1.2
            }
        );
        let e = parse_cross("cbr,rate=1mbit,shape=2")
            .unwrap_err()
            .to_string();
        assert!(e.contains("web's"), "{e}");
    }

    #[test]
    fn probabilities() {
        assert_eq!(parse_probability("1%").unwrap(), 0.01);
        assert_eq!(parse_probability("0.25").unwrap(), 0.25);
        let e = parse_probability("150%").unwrap_err().to_string();
        assert!(e.contains("within 0..1"), "{e}");
        assert!(parse_probability("often").is_err());
    }
}
