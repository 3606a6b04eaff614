//! The emulator's path and summary as text for people: the path as built, one line per
//! direction, printed before a run starts (so that a unit read otherwise than meant, such as
//! `--rate 1gbps`, which is 8 Gb/s as tc reads it, shows before anything runs); and the table
//! of what each direction carried, dropped and delayed, with the warnings about what went wrong
//! besides the path, printed when a run stops (as the benchmark's report prints its own table,
//! `crate::bench`). The JSON summary is [`Summary`] itself. Rates print as every longhaul
//! report prints them (`longhaul_metrics::units::format_rate`).

use crate::config::{DirectionConfig, LinkConfig, RateConfig};
use crate::emulator::Summary;
use crate::model::loss::LossConfig;

impl LinkConfig {
    /// Both directions as built: `path a→b: …` and `path b→a: …`, one line each.
    pub fn describe(&self) -> String {
        format!(
            "path a→b: {}\npath b→a: {}\n",
            self.a_to_b.describe(),
            self.b_to_a.describe()
        )
    }
}

impl DirectionConfig {
    /// The direction in one line: rate, delay and jitter, queue limit, and the RED, framing
    /// overhead, loss and cross traffic it has, e.g. `100 Mb/s, delay 90 ms, queue 1000
    /// packets`.
    pub fn describe(&self) -> String {
        let rate = match &self.rate {
            RateConfig::Unlimited => "no rate limit".to_string(),
            RateConfig::Constant { bps } => longhaul_metrics::units::format_rate(*bps as f64),
            RateConfig::Trace { path, .. } => format!("trace {path}"),
        };
        let mut line = format!("{rate}, delay {} ms", self.delay.delay_ns as f64 / 1e6);
        if self.delay.jitter_ns > 0 {
            line += &format!(" ± {} ms", self.delay.jitter_ns as f64 / 1e6);
        }
        match (self.queue.packets, self.queue.bytes) {
            (Some(p), _) => line += &format!(", queue {p} packets"),
            (None, Some(b)) => line += &format!(", queue {b} bytes"),
            (None, None) => line += ", queue unlimited",
        }
        if let Some(red) = &self.red {
            line += &format!(", RED {}", red.describe_thresholds());
            if red.ecn {
                line += " marking ECN";
            }
        }
        if self.overhead_bytes > 0 {
            line += &format!(", {} B framing per packet", self.overhead_bytes);
        }
        if !matches!(self.loss, LossConfig::None) {
            line += &format!(", loss {:?}", self.loss);
        }
        if !self.cross.is_empty() {
            line += &format!(", {} cross-traffic source(s)", self.cross.len());
        }
        if let Some(m) = self.path_mtu {
            line += &format!(", path MTU {m} (larger packets dropped)");
        }
        line
    }
}

impl Summary {
    /// What went wrong besides the path: output files left incomplete, packets the hosts'
    /// TUN queues dropped (the emulator fell behind, or a host did); none of them path losses.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for o in self.event_log.iter().chain(&self.pcap) {
            if !o.complete {
                out.push(format!(
                    "{} is incomplete: {} of {} records were not written ({})",
                    o.path,
                    o.records_lost,
                    o.records,
                    o.error.as_deref().unwrap_or("write error")
                ));
            }
        }
        let (tx, rx) = (self.tun_tx_dropped, self.tun_rx_dropped);
        if tx.iter().any(|&x| x > 0) {
            out.push(format!(
                "the hosts' TUN queues dropped {} (a) and {} (b) packets before the emulator \
                 read them (emulator overloaded; these are not path losses)",
                tx[0], tx[1]
            ));
        }
        if rx.iter().any(|&x| x > 0) {
            out.push(format!(
                "the hosts' stacks refused {} (a) and {} (b) packets the emulator delivered \
                 (TUN rx_dropped: a host fell behind; these are not path losses)",
                rx[0], rx[1]
            ));
        }
        out
    }

    /// Per direction: packets arrived and delivered, throughput, drops by reason, RED's ECN
    /// marks and the release lateness percentiles.
    pub fn table(&self) -> String {
        let mut s = format!(
            "{:<4} {:>10} {:>10} {:>12} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9}\n",
            "dir",
            "arrived",
            "delivered",
            "Mb/s",
            "loss",
            "queue",
            "red",
            "ecn",
            "mem",
            "late p50",
            "late p99",
            "late max"
        );
        for d in &self.directions {
            let c = &d.counters;
            s += &format!(
                "{:<4} {:>10} {:>10} {:>12.3} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7.1}us {:>7.1}us {:>7.1}us\n",
                d.direction,
                c.arrived_packets,
                c.delivered_packets,
                d.throughput_bps / 1e6,
                c.dropped_random_loss,
                c.dropped_queue_full,
                c.dropped_red_early + c.dropped_red_forced,
                c.ecn_marks,
                d.io.dropped_memory,
                d.lateness.p50_ns as f64 / 1e3,
                d.lateness.p99_ns as f64 / 1e3,
                d.lateness.max_ns as f64 / 1e3
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_prints_each_direction_as_built() {
        let mut c = LinkConfig::default();
        c.a_to_b.rate = RateConfig::Constant { bps: 100_000_000 };
        c.a_to_b.delay.delay_ns = 90_000_000;
        c.a_to_b.delay.jitter_ns = 2_000_000;
        c.a_to_b.queue.packets = Some(1000);
        c.b_to_a.loss = LossConfig::Bernoulli { p: 0.01 };
        assert_eq!(
            c.describe(),
            "path a→b: 100 Mb/s, delay 90 ms ± 2 ms, queue 1000 packets\n\
             path b→a: no rate limit, delay 0 ms, queue unlimited, loss Bernoulli { p: 0.01 }\n"
        );
        c.a_to_b.red = Some(crate::model::red::RedConfig {
            unit: crate::model::red::RedUnit::Packets,
            ecn: true,
            ..crate::model::red::RedConfig::bytes(50, 150, 0.1, 0.002, true)
        });
        c.a_to_b.overhead_bytes = 38;
        assert_eq!(
            c.a_to_b.describe(),
            "100 Mb/s, delay 90 ms ± 2 ms, queue 1000 packets, RED min=50p max=150p marking ECN, \
             38 B framing per packet"
        );
    }
}
