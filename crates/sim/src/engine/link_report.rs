//! The links of the outcome: both directions of every scenario link and each rated access
//! (host) queue, as summary links (`longhaul_metrics::summary::LinkSummary`: utilization of the
//! payload each transmitted, drops by reason, queueing delay, series) and, for scenario links,
//! the port reports with counters beyond the summary's.

use super::*;

impl Engine<'_> {
    /// Both directions of every scenario link: its summary entries and port reports.
    pub(super) fn link_reports(&mut self, run_s: f64) -> (Vec<LinkSummary>, Vec<PortReport>) {
        let sc = &self.checked.scenario;
        let mut links = Vec::new();
        let mut ports = Vec::new();
        for (i, l) in sc.links.iter().enumerate() {
            let (fp, rp) = self.link_ports[i];
            for (port, reverse) in [(fp, false), (rp, true)] {
                let p = &mut self.ports[port as usize];
                let (unsent_n, _) = p.unsent(self.end);
                let unfinished = p.unfinished_payload(self.end);
                let cap = if reverse {
                    l.reverse_rate.unwrap_or(l.rate).0
                } else {
                    l.rate.0
                };
                let st = &p.stats;
                // What the link finished sending: the packet on the wire at the end is not all
                // carried, and counting it would put a short run's utilization above 1.
                let payload_bps = (st.payload_out - unfinished) as f64 * 8.0 / run_s;
                let mut by_reason = BTreeMap::new();
                for (reason, n) in [
                    (REASON_QUEUE_FULL, st.drops_queue),
                    (REASON_AQM, st.drops_red),
                    (REASON_RANDOM, st.drops_loss),
                ] {
                    if n > 0 {
                        by_reason.insert(reason.to_string(), n);
                    }
                }
                let q = &st.queue_delay;
                let limits = p.limits().describe();
                let queue = match p.red() {
                    None => format!("droptail {limits}"),
                    Some(r) => format!(
                        "red {limits} min_th={} max_th={}{}",
                        r.params.min_th,
                        r.params.max_th,
                        if r.params.ecn { " ecn" } else { "" }
                    ),
                };
                ports.push(PortReport {
                    link: l.name.clone(),
                    direction: if reverse { "reverse" } else { "forward" },
                    packets: st.packets_out - unsent_n,
                    drops_queue_full: st.drops_queue,
                    drops_red: st.drops_red,
                    drops_random: st.drops_loss,
                    ecn_marks: st.ecn_marks,
                    duplicates: st.duplicates,
                    max_queue_packets: st.max_backlog_packets.saturating_sub(1),
                    queue_at_end_packets: unsent_n,
                });
                links.push(LinkSummary {
                    name: if reverse {
                        format!("{} (reverse)", l.name)
                    } else {
                        l.name.clone()
                    },
                    capacity_bps: cap,
                    utilization: throughput::utilization(payload_bps, cap, l.mtu),
                    drops: st.drops(),
                    queue_delay_ms: sojourn_ms(q),
                    mtu: Some(l.mtu),
                    delay_ms: Some(l.delay.0 as f64 / 1e6),
                    distance_km: Some(l.distance_km),
                    queue: Some(queue),
                    drops_by_reason: by_reason,
                    packets_forwarded: Some(st.packets_out - unsent_n),
                    series: self.port_series[port as usize].take().map(|s| s.0),
                });
            }
        }
        (links, ports)
    }

    /// Rated access (host) queues, named as in the drop log: `access:ID`. In seed 000's
    /// runs each 1 Gb/s host link is slower than the path, so a window-based sender's
    /// backlog waits here rather than at the shared bottleneck.
    pub(super) fn access_reports(&mut self, run_s: f64) -> Vec<LinkSummary> {
        let sc = &self.checked.scenario;
        let mut links = Vec::new();
        for (i, cf) in self.checked.flows.iter().enumerate() {
            let Some((ap, _, _)) = self.flows[i].access else {
                continue;
            };
            let p = &mut self.ports[ap as usize];
            let Some(rate) = p.rate_bps else { continue };
            let (unsent_n, _) = p.unsent(self.end);
            let unfinished = p.unfinished_payload(self.end);
            let st = &p.stats;
            let payload_bps = (st.payload_out - unfinished) as f64 * 8.0 / run_s;
            let mut by_reason = BTreeMap::new();
            let host_drops: u64 = self.flows[i]
                .ledger
                .rows()
                .iter()
                .filter(|r| r.reason == REASON_HOST_QUEUE_FULL)
                .map(|r| r.packets)
                .sum();
            if host_drops > 0 {
                by_reason.insert(REASON_HOST_QUEUE_FULL.to_string(), host_drops);
            }
            let q = &st.queue_delay;
            let mtu = path_mtu(sc, &cf.path);
            let limit = format!("host {}", p.limits().describe());
            links.push(LinkSummary {
                name: format!("access:{}", cf.id),
                capacity_bps: rate,
                utilization: throughput::utilization(payload_bps, rate, mtu),
                drops: st.drops() + host_drops,
                queue_delay_ms: sojourn_ms(q),
                mtu: Some(mtu),
                delay_ms: Some(p.delay_ns as f64 / 1e6),
                distance_km: None,
                queue: Some(limit),
                drops_by_reason: by_reason,
                packets_forwarded: Some(st.packets_out - unsent_n),
                series: self.port_series[ap as usize].take().map(|s| s.0),
            });
        }
        links
    }
}

/// A queue's sojourn-time statistics in milliseconds (its minimum is zero, not the smallest
/// sample); a queue that never held a packet reads 0 throughout.
fn sojourn_ms(
    q: &longhaul_metrics::online::DelayAccumulator,
) -> longhaul_metrics::summary::LinkDelay {
    q.rtt_stats_ms()
        .unwrap_or(longhaul_metrics::delay::DelayStats {
            count: 0,
            mean: 0.0,
            p50: 0.0,
            p95: 0.0,
            p99: 0.0,
            max: 0.0,
        })
        .into()
}
