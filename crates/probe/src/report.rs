//! What `longhaul probe` found: the `-J` report and its lines for people.

use crate::burst::Stop;
use crate::estimate::Estimate;
use crate::loss;
use crate::train::Train;
use serde::Serialize;
use std::net::SocketAddr;
use std::time::Duration;

/// A probe's results. An estimate the probe could not make is `null`, with a note saying why.
/// In JSON an interval's open end (`high` of a lower bound) is `null`.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The server probed.
    pub peer: String,
    /// How long the measurement took, seconds.
    pub duration_s: f64,
    /// Bytes of probe datagrams sent (IP packets).
    pub bytes_sent: u64,
    /// A probe datagram's UDP payload, bytes.
    pub datagram: usize,
    /// The path MTU (bytes of IP packet), by RFC 8899's probing; `null` when not searched or
    /// no probe arrived.
    pub path_mtu: Option<Estimate>,
    /// Base round-trip time, s.
    pub rtt: Option<Estimate>,
    /// Round-trip jitter, s.
    pub jitter: Option<Estimate>,
    /// Bottleneck capacity by train dispersion, bit/s.
    pub capacity: Option<Estimate>,
    /// Bottleneck capacity by the mode of packet-pair samples, bit/s.
    pub capacity_pairs: Option<Estimate>,
    /// Available bandwidth by SLoPS, bit/s.
    pub available: Option<Estimate>,
    /// The bottleneck's effective queue, bytes.
    pub queue: Option<Estimate>,
    /// The maximum burst size at the rate this host sends bursts, bytes.
    pub mbs: Option<Estimate>,
    /// Why the burst search stopped.
    pub burst_stop: Option<Stop>,
    /// Random loss rate (fraction).
    pub loss: Option<Estimate>,
    /// Packets that arrived before one sent ahead of them, over all trains.
    pub reordered: usize,
    /// Train packets sent and received.
    pub packets_sent: usize,
    /// Train packets received.
    pub packets_received: usize,
    /// What could not be measured, and why.
    pub notes: Vec<String>,
    /// `--simulate`: every controller on the measured path, and the one to use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prediction: Option<crate::predict::Prediction>,
}

impl Report {
    /// An empty report for `peer`.
    pub fn new(peer: SocketAddr, datagram: usize) -> Report {
        Report {
            peer: peer.to_string(),
            duration_s: 0.0,
            bytes_sent: 0,
            datagram,
            path_mtu: None,
            rtt: None,
            jitter: None,
            capacity: None,
            capacity_pairs: None,
            available: None,
            queue: None,
            mbs: None,
            burst_stop: None,
            loss: None,
            reordered: 0,
            packets_sent: 0,
            packets_received: 0,
            notes: Vec::new(),
            prediction: None,
        }
    }

    /// The path's MTU as the report knows it: the measured path MTU, or else the IP packet the
    /// probe datagrams made (what `--scenario` and `--simulate` use).
    pub fn mtu(&self) -> u32 {
        self.path_mtu.as_ref().map_or(
            (self.datagram + longhaul_proto::IP_UDP_OVERHEAD) as u32,
            |m| m.value as u32,
        )
    }

    /// Completes the report with the totals over `trains`.
    pub fn finish(&mut self, bytes: u64, took: Duration, notes: Vec<String>, trains: &[Train]) {
        self.bytes_sent = bytes;
        self.duration_s = took.as_secs_f64();
        self.notes = notes;
        self.reordered = trains.iter().map(loss::reordered).sum();
        self.packets_sent = trains.iter().map(|t| t.packets.len()).sum();
        self.packets_received = trains.iter().map(Train::received).sum();
    }

    /// The report for people: one line per estimate, with its interval and method; then the
    /// prediction's table and `longhaul tune`'s settings, when there is one.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "probe of {}: {:.1} s, {} sent in {}-byte datagrams",
            self.peer,
            self.duration_s,
            bytes(self.bytes_sent as f64),
            self.datagram
        )];
        let rows: [(&str, &Option<Estimate>); 9] = [
            ("path MTU", &self.path_mtu),
            ("base RTT", &self.rtt),
            ("RTT jitter", &self.jitter),
            ("capacity", &self.capacity),
            ("capacity (pairs)", &self.capacity_pairs),
            ("available", &self.available),
            ("queue", &self.queue),
            ("max burst", &self.mbs),
            ("random loss", &self.loss),
        ];
        for (name, e) in rows {
            // An MTU is given to the byte.
            let unit = |e: &Estimate| if name == "path MTU" { "B" } else { e.unit };
            match e {
                Some(e) => out.push(format!(
                    "  {name:<17} {}  [{} .. {}: {}]  {}",
                    value(e.value, unit(e)),
                    value(e.low, unit(e)),
                    value(e.high, unit(e)),
                    e.interval,
                    e.method
                )),
                None => out.push(format!("  {name:<17} not measured")),
            }
        }
        out.push(format!(
            "  {:<17} {} of {} train packets",
            "reordered", self.reordered, self.packets_received
        ));
        out.extend(self.notes.iter().map(|n| format!("  note: {n}")));
        if let Some(p) = &self.prediction {
            out.push(String::new());
            out.extend(p.lines());
            if let Some(t) = &p.tune {
                out.push(String::new());
                out.extend(t.to_string().lines().map(str::to_string));
            }
        }
        out
    }
}

pub(crate) fn bytes(b: f64) -> String {
    if b >= 1e6 {
        format!("{:.2} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{b:.0} B")
    }
}

/// `x` in `unit`, for people.
fn value(x: f64, unit: &str) -> String {
    if x.is_infinite() {
        return "∞".into();
    }
    match unit {
        "s" => format!("{:.3} ms", x * 1e3),
        "bit/s" => format!("{:.2} Mb/s", x / 1e6),
        "bytes" => bytes(x),
        "1" => format!("{:.3} %", x * 100.0),
        "B" => format!("{x:.0} B"),
        _ => format!("{x} {unit}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_give_each_estimate_its_interval_and_method() {
        let mut r = Report::new("192.0.2.1:5301".parse().unwrap(), 1472);
        r.capacity = Some(Estimate {
            value: 50e6,
            low: 49e6,
            high: 51e6,
            unit: "bit/s",
            interval: "iqr".into(),
            method: "trains",
            samples: 12,
        });
        r.path_mtu = Some(Estimate {
            value: 1400.0,
            low: 1400.0,
            high: 1407.0,
            unit: "bytes",
            interval: "between".into(),
            method: "PLPMTUD",
            samples: 30,
        });
        let lines = r.lines();
        assert!(
            lines[1].contains("path MTU          1400 B  [1400 B .. 1407 B: between]  PLPMTUD"),
            "{lines:?}"
        );
        assert!(
            lines[4].contains("50.00 Mb/s  [49.00 Mb/s .. 51.00 Mb/s: iqr]  trains"),
            "{lines:?}"
        );
        assert!(lines[2].ends_with("not measured"), "{lines:?}");
    }
}
