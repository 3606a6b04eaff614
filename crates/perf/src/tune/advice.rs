//! The checks `longhaul tune` makes: each setting's current value, the value the path needs, whether
//! the host falls short, and the exact command that fixes it.
//!
//! What is checked and why (seed 004; ESnet's fasterdata host-tuning pages):
//! * `net.core.rmem_max`, `net.core.wmem_max`: the largest buffer an application may request with
//!   `SO_RCVBUF`/`SO_SNDBUF` (`iperf -w`, `longhaul perf -w`); the kernel grants twice the request.
//! * `net.ipv4.tcp_rmem`, `net.ipv4.tcp_wmem`: `min default max` of the autotuned buffers; the max
//!   bounds the window of every application that does not set its own buffer.
//! * `net.core.netdev_max_backlog`: packets queued between the NIC and the stack at 10G and above.
//! * `net.ipv4.tcp_congestion_control`: Reno takes [`bdp::reno_recovery_after_loss_s`] to recover
//!   from one loss; BBR (paced, loss-tolerant) where available, else CUBIC.
//! * `net.core.default_qdisc = fq`: pacing; fasterdata saw "2-4x" on 50–80 ms paths.
//! * `tcp_mtu_probing = 1`, and window scaling, SACK and timestamps on (windows above 64 KiB need
//!   scaling; "with big windows SACK becomes increasingly important", seed 004).
//! * Per interface: `txqueuelen` (seed 004: "we need a large txqueuelen on the end host";
//!   fasterdata: 10000 for 10G), and the MTU (jumbo frames: "one can recover 6 times as fast").
//!   The MTU is advice only: raising it helps only if every hop carries jumbo frames, and
//!   `--apply` never changes it.
//!
//! We never recommend lowering a value that is already larger.

use super::bdp::{self, PathSpec};
use super::host::{HostRoots, Interface};
use super::TuneError;
use std::fmt;

/// How a setting compares with what the path needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Already good enough.
    Ok,
    /// Falls short; `--apply` fixes it.
    Short,
    /// Would help, but needs a decision `--apply` does not make (MTU, qdisc).
    Advice,
    /// This kernel or interface does not have the setting.
    Missing,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Ok => "ok",
            Status::Short => "SHORT",
            Status::Advice => "advice",
            Status::Missing => "missing",
        })
    }
}

/// Where a setting lives.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// A sysctl, by its dotted name (`net.core.rmem_max`).
    Sysctl(String),
    /// An attribute file of `/sys/class/net/DEV` (`tx_queue_len`, `mtu`).
    Interface {
        /// The interface name.
        dev: String,
        /// The attribute file's name.
        attr: String,
    },
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Check {
    /// `net.core.rmem_max`, `eth0 txqueuelen`.
    pub name: String,
    /// Where the setting lives.
    pub target: Target,
    /// Its value now (`None`: the host does not have it).
    pub current: Option<String>,
    /// The value the path needs.
    pub recommended: String,
    /// How the current value compares with it.
    pub status: Status,
    /// The shell command that sets the recommended value.
    pub command: String,
    /// One line on why.
    pub why: String,
}

/// Everything `longhaul tune` says about one path on one host.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TuneReport {
    /// The path the host is sized for.
    pub path: PathSpec,
    /// `net.ipv4.tcp_available_congestion_control`.
    pub available_cc: Vec<String>,
    /// One check per setting, in report order.
    pub checks: Vec<Check>,
}

impl TuneReport {
    /// The checks `--apply` would change.
    pub fn short(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| c.status == Status::Short)
    }
}

/// Compare the host under `roots` with what `path` needs. `only_dev` limits the interface checks
/// to one device; otherwise every interface that is up, except loopback, is checked.
pub fn check_host(
    path: &PathSpec,
    roots: &HostRoots,
    only_dev: Option<&str>,
) -> Result<TuneReport, TuneError> {
    let buf = path.buffer_bytes();
    let mut checks = Vec::new();

    for key in ["net.core.rmem_max", "net.core.wmem_max"] {
        let current = roots.read_sysctl(key)?;
        checks.push(at_least(
            key,
            current,
            buf,
            "largest SO_RCVBUF/SO_SNDBUF an application may request (2 × BDP)",
        ));
    }
    for (key, min, default) in [
        ("net.ipv4.tcp_rmem", 4096u64, 131072u64),
        ("net.ipv4.tcp_wmem", 4096, 16384),
    ] {
        let current = roots.read_sysctl(key)?;
        checks.push(triple(key, current, min, default, buf));
    }
    let backlog = bdp::netdev_backlog_for(path.rate_bps, path.rtt);
    let key = "net.core.netdev_max_backlog";
    checks.push(at_least(
        key,
        roots.read_sysctl(key)?,
        backlog,
        "packets queued from the NIC to the stack",
    ));

    let available: Vec<String> = roots
        .read_sysctl("net.ipv4.tcp_available_congestion_control")?
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    checks.push(congestion_control(
        path,
        roots.read_sysctl("net.ipv4.tcp_congestion_control")?,
        &available,
    ));

    let key = "net.core.default_qdisc";
    let current = roots.read_sysctl(key)?;
    let status = match current.as_deref() {
        None => Status::Missing,
        Some("fq") => Status::Ok,
        Some(_) => Status::Advice,
    };
    checks.push(Check {
        name: key.into(),
        target: Target::Sysctl(key.into()),
        current,
        recommended: "fq".into(),
        status,
        command: format!("sysctl -w {key}=fq   # then: tc qdisc replace dev DEV root fq"),
        why: "fq paces each flow; new qdiscs only, replace existing ones with tc".into(),
    });

    for (key, want, why) in [
        (
            "net.ipv4.tcp_mtu_probing",
            1u64,
            "finds the path MTU when ICMP is filtered (2 can hurt)",
        ),
        (
            "net.ipv4.tcp_window_scaling",
            1,
            "windows above 64 KiB need window scaling",
        ),
        (
            "net.ipv4.tcp_sack",
            1,
            "with big windows, SACK avoids resending a window per loss",
        ),
        (
            "net.ipv4.tcp_timestamps",
            1,
            "RTT measurement and PAWS at high rates",
        ),
    ] {
        checks.push(at_least(key, roots.read_sysctl(key)?, want, why));
    }

    let interfaces: Vec<Interface> = roots
        .interfaces()?
        .into_iter()
        .filter(|i| match only_dev {
            Some(d) => i.name == d,
            None => i.up && !i.loopback,
        })
        .collect();
    if let Some(d) = only_dev {
        if interfaces.is_empty() {
            return Err(TuneError::InvalidPath(format!(
                "no interface `{d}` under {}",
                roots.sys_class_net.display()
            )));
        }
    }
    for i in &interfaces {
        checks.extend(interface_checks(path, i));
    }
    Ok(TuneReport {
        path: *path,
        available_cc: available,
        checks,
    })
}

fn at_least(key: &str, current: Option<String>, want: u64, why: &str) -> Check {
    let status = match current.as_deref().map(|c| c.trim().parse::<u64>()) {
        None => Status::Missing,
        Some(Ok(v)) if v >= want => Status::Ok,
        Some(_) => Status::Short,
    };
    Check {
        name: key.into(),
        target: Target::Sysctl(key.into()),
        recommended: want.to_string(),
        command: format!("sysctl -w {key}={want}"),
        current,
        status,
        why: why.into(),
    }
}

/// `tcp_rmem`/`tcp_wmem`: keep the current min and default (or the kernel's), raise the max.
fn triple(key: &str, current: Option<String>, min: u64, default: u64, max: u64) -> Check {
    let parsed: Option<Vec<u64>> = current.as_deref().map(|c| {
        c.split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect()
    });
    let (status, rec) = match &parsed {
        None => (Status::Missing, [min, default, max]),
        Some(v) if v.len() == 3 => {
            let rec = [v[0], v[1], v[2].max(max)];
            (
                if v[2] >= max {
                    Status::Ok
                } else {
                    Status::Short
                },
                rec,
            )
        }
        Some(_) => (Status::Short, [min, default, max]),
    };
    let recommended = format!("{} {} {}", rec[0], rec[1], rec[2]);
    Check {
        name: key.into(),
        target: Target::Sysctl(key.into()),
        command: format!("sysctl -w {key}='{recommended}'"),
        recommended,
        current,
        status,
        why: "autotuning min/default/max; the max bounds every window (2 × BDP)".into(),
    }
}

fn congestion_control(path: &PathSpec, current: Option<String>, available: &[String]) -> Check {
    let key = "net.ipv4.tcp_congestion_control";
    let has = |n: &str| available.iter().any(|a| a == n);
    let recommended = if has("bbr") { "bbr" } else { "cubic" };
    let reno_s = bdp::reno_recovery_after_loss_s(path, true);
    // Reno and Vegas grow one segment per RTT; whether that is "short" depends on the path: more
    // than a minute to recover from one loss is (at 1 Gb/s × 180 ms it is 45 minutes).
    let slow = matches!(current.as_deref(), Some("reno") | Some("vegas"));
    let status = match &current {
        None => Status::Missing,
        Some(_) if slow && reno_s > 60.0 => Status::Short,
        Some(_) => Status::Ok,
    };
    let mut why = format!(
        "Reno needs {} to regain full rate after one loss on this path",
        human_seconds(reno_s)
    );
    if !has("bbr") {
        why.push_str("; bbr: modprobe tcp_bbr");
    }
    Check {
        name: key.into(),
        target: Target::Sysctl(key.into()),
        current,
        recommended: recommended.into(),
        status,
        command: format!("sysctl -w {key}={recommended}"),
        why,
    }
}

fn interface_checks(path: &PathSpec, i: &Interface) -> Vec<Check> {
    let mut out = Vec::new();
    let want = bdp::txqueuelen_for(path.rate_bps);
    out.push(Check {
        name: format!("{} txqueuelen", i.name),
        target: Target::Interface {
            dev: i.name.clone(),
            attr: "tx_queue_len".into(),
        },
        current: Some(i.txqueuelen.to_string()),
        recommended: want.to_string(),
        status: if i.txqueuelen >= want {
            Status::Ok
        } else {
            Status::Short
        },
        command: format!("ip link set dev {} txqueuelen {want}", i.name),
        why: "packets the host may queue before the NIC".into(),
    });
    let at_mtu = bdp::reno_recovery_after_loss_s(
        &PathSpec {
            mtu: i.mtu,
            ..*path
        },
        true,
    );
    let at_jumbo = bdp::reno_recovery_after_loss_s(&PathSpec { mtu: 9000, ..*path }, true);
    out.push(Check {
        name: format!("{} mtu", i.name),
        target: Target::Interface {
            dev: i.name.clone(),
            attr: "mtu".into(),
        },
        current: Some(i.mtu.to_string()),
        recommended: "9000".into(),
        status: if i.mtu >= 9000 {
            Status::Ok
        } else {
            Status::Advice
        },
        command: format!(
            "ip link set dev {} mtu 9000   # only if every hop carries it: ping -M do -s 8972 HOST",
            i.name
        ),
        why: format!(
            "Reno recovers from a loss in {} at {} B, {} with jumbo frames",
            human_seconds(at_mtu),
            i.mtu,
            human_seconds(at_jumbo)
        ),
    });
    out
}

/// `4320 s (1.2 h)`, `720 s (12 min)`, `3.2 s`.
pub fn human_seconds(s: f64) -> String {
    if s >= 3600.0 {
        format!("{s:.0} s ({:.1} h)", s / 3600.0)
    } else if s >= 120.0 {
        format!("{s:.0} s ({:.1} min)", s / 60.0)
    } else {
        format!("{s:.1} s")
    }
}

/// Bytes for humans in both decimal and binary units: `22.5 MB (21.5 MiB)`.
pub fn human_bytes(b: u64) -> String {
    let x = b as f64;
    let (d, du) = if x >= 1e9 {
        (x / 1e9, "GB")
    } else if x >= 1e6 {
        (x / 1e6, "MB")
    } else {
        (x / 1e3, "kB")
    };
    let (m, mu) = if x >= (1u64 << 30) as f64 {
        (x / (1u64 << 30) as f64, "GiB")
    } else if x >= (1u64 << 20) as f64 {
        (x / (1u64 << 20) as f64, "MiB")
    } else {
        (x / 1024.0, "KiB")
    };
    format!("{d:.1} {du} ({m:.1} {mu})")
}

impl fmt::Display for TuneReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.path;
        writeln!(
            f,
            "Path: {} × {} ms, MTU {}",
            longhaul_metrics::units::format_rate(p.rate_bps),
            p.rtt.as_secs_f64() * 1e3,
            p.mtu
        )?;
        writeln!(
            f,
            "  bandwidth-delay product  {} bytes = {} = {} packets of {} B",
            group(p.bdp_bytes()),
            human_bytes(p.bdp_bytes()),
            group(p.bdp_packets()),
            p.mtu
        )?;
        writeln!(
            f,
            "  socket buffer per stream {} bytes = {} (2 × BDP, next power of two)",
            group(p.buffer_bytes()),
            human_bytes(p.buffer_bytes())
        )?;
        writeln!(
            f,
            "  Reno after one loss      {} to regain full rate at {} B, {} at 9000 B (seed 004: rate grows as MTU/RTT^2)",
            human_seconds(bdp::reno_recovery_after_loss_s(p, true)),
            p.mtu,
            human_seconds(bdp::reno_recovery_after_loss_s(&PathSpec { mtu: 9000, ..*p }, true))
        )?;
        if !self.available_cc.is_empty() {
            writeln!(
                f,
                "  congestion controls      {}",
                self.available_cc.join(" ")
            )?;
        }
        writeln!(f)?;
        let w = self
            .checks
            .iter()
            .map(|c| c.name.len())
            .max()
            .unwrap_or(0)
            .max(7);
        let cw = self
            .checks
            .iter()
            .map(|c| c.current.as_deref().unwrap_or("-").len())
            .max()
            .unwrap_or(0)
            .max(7);
        let rw = self
            .checks
            .iter()
            .map(|c| c.recommended.len())
            .max()
            .unwrap_or(0)
            .max(11);
        writeln!(
            f,
            "{:w$}  {:cw$}  {:rw$}  status",
            "setting", "current", "recommended"
        )?;
        for c in &self.checks {
            writeln!(
                f,
                "{:w$}  {:cw$}  {:rw$}  {:7} {}",
                c.name,
                c.current.as_deref().unwrap_or("-"),
                c.recommended,
                c.status.to_string(),
                c.why
            )?;
        }
        let short: Vec<&Check> = self.short().collect();
        writeln!(f)?;
        if short.is_empty() {
            writeln!(f, "Nothing falls short.")?;
        } else {
            writeln!(f, "To fix (as root, or rerun with --apply):")?;
            for c in &short {
                writeln!(f, "  {}", c.command)?;
            }
            let persist: Vec<String> = short
                .iter()
                .filter_map(|c| match &c.target {
                    Target::Sysctl(k) => Some(format!("{k} = {}", c.recommended)),
                    Target::Interface { .. } => None,
                })
                .collect();
            if !persist.is_empty() {
                writeln!(
                    f,
                    "To keep across reboots, put in /etc/sysctl.d/90-longhaul.conf:"
                )?;
                for l in persist {
                    writeln!(f, "  {l}")?;
                }
            }
        }
        let advice: Vec<&Check> = self
            .checks
            .iter()
            .filter(|c| c.status == Status::Advice)
            .collect();
        if !advice.is_empty() {
            writeln!(f, "Worth considering (not applied by --apply):")?;
            for c in advice {
                writeln!(f, "  {}", c.command)?;
            }
        }
        Ok(())
    }
}

fn group(n: u64) -> String {
    longhaul_metrics::units::group_thousands(n as f64, 0)
}
