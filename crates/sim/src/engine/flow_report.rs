//! The flows of the outcome: each scenario flow's counts for `longhaul_metrics::assemble`
//! (what limits it, its delivered bytes, RTTs, losses and series), and the bottlenecks its
//! aggregate utilization is judged against.

use super::*;
use longhaul_metrics::summary::FlowSummary;

impl Engine<'_> {
    /// What limits each flow: the slowest link of its path, or its own access link (the
    /// host's card) when that is slower — seed 000's Table 1 flows are limited by their
    /// 1 Gb/s cards, not by the 2.5 Gb/s circuit they share.
    pub(super) fn flow_limits(&self) -> Vec<FlowLimit> {
        let sc = &self.checked.scenario;
        let slowest = |path: &[usize]| {
            path.iter()
                .copied()
                .min_by(|&a, &b| {
                    let pa = throughput::payload_capacity_bps(sc.links[a].rate.0, sc.links[a].mtu);
                    let pb = throughput::payload_capacity_bps(sc.links[b].rate.0, sc.links[b].mtu);
                    pa.total_cmp(&pb)
                })
                .expect("paths are not empty")
        };
        self.checked
            .flows
            .iter()
            .map(|cf| {
                let b = &sc.links[slowest(&cf.path)];
                let link = Capacity {
                    rate_bps: b.rate.0,
                    mtu: b.mtu,
                };
                match sc.flows[cf.spec].access.rate {
                    Some(r) if r.0 < b.rate.0 => FlowLimit {
                        capacity: Capacity {
                            rate_bps: r.0,
                            ..link
                        },
                        access: true,
                    },
                    _ => FlowLimit {
                        capacity: link,
                        access: false,
                    },
                }
            })
            .collect()
    }

    /// Each scenario flow's summary entry (its series are moved out of the engine).
    pub(super) fn flow_summaries(&mut self, limits: &[FlowLimit]) -> Vec<FlowSummary> {
        let sc = &self.checked.scenario;
        let mut flows = Vec::new();
        for (i, cf) in self.checked.flows.iter().enumerate() {
            let f = &self.flows[i];
            let s = f.sender.as_ref().expect("scenario flows keep their state");
            let snap = s.snapshot();
            // A flow whose application stopped early is active until its last byte arrived
            // (the send buffer drains after its last write); one that writes to the end, to
            // the end.
            let last = if cf.stop < self.end {
                cf.stop.max(f.last_delivery).min(self.end)
            } else {
                self.end
            };
            let h = s.rtt();
            let min_rtt = h.min_ns().unwrap_or(0) as f64;
            flows.push(flow_summary(FlowCounts {
                id: cf.id,
                cc: cf.cc.algorithm.to_string(),
                params: Some(cf.cc.to_string()),
                bytes_delivered: f.delivered(),
                active_s: (last - cf.start) as f64 / 1e9,
                start_s: Some(cf.start as f64 / 1e9),
                stop_s: Some(last as f64 / 1e9),
                capacity: Some(limits[i].capacity),
                distance_km: Some(cf.path.iter().map(|&l| sc.links[l].distance_km).sum()),
                min_rtt_ms: min_rtt / 1e6,
                queueing_delay_ms: h.queueing_stats_ms(),
                packets_sent: Some(snap.packets_sent),
                packets_lost: Some(f.dropped),
                retransmits: snap.retransmits,
                loss_basis: LossBasis::Drops,
                interval_bps: per_second(&self.flow_series[i], sc.output.interval.0),
                drops: f.ledger.rows(),
                series: Some(std::mem::take(&mut self.flow_series[i])),
            }));
        }
        flows
    }

    /// Aggregate utilization is that of the most loaded bottleneck: for each link of the
    /// chain, the payload of the scenario's flows that cross it ÷ the capacity they can use
    /// there, net of headers, and the largest of these. That capacity is the link's, or the
    /// sum of the flows' own limits (their access links) when that is smaller, so a flow
    /// held to its 1 Gb/s card is not judged against a 2.5 Gb/s link. On a dumbbell every
    /// flow crosses the shared path, so this is the flows' total ÷ the slowest shared link
    /// (docs/measurements.md's definition). On a parking lot a long flow counts once on
    /// every link it crosses, so the sum of all flows is never divided by one link's
    /// capacity (it would read above 100 %).
    pub(super) fn bottlenecks(&self, limits: &[FlowLimit]) -> Vec<Bottleneck> {
        let sc = &self.checked.scenario;
        // The links aggregate utilization is judged against: the path every flow of a dumbbell
        // shares, or a parking lot's chain of bottlenecks.
        let chain: Vec<usize> = match sc.topology.kind {
            TopologyKind::Dumbbell => self.checked.flows[0].path.clone(),
            TopologyKind::ParkingLot => {
                let names = sc.topology.chain.clone().unwrap_or_default();
                names
                    .iter()
                    .filter_map(|n| sc.links.iter().position(|l| &l.name == n))
                    .collect()
            }
        };
        chain
            .iter()
            .map(|&l| {
                let crossing: Vec<usize> = (0..self.checked.flows.len())
                    .filter(|&i| self.checked.flows[i].path.contains(&l))
                    .collect();
                let bytes: u64 = crossing.iter().map(|&i| self.flows[i].delivered()).sum();
                let link = &sc.links[l];
                let own: f64 = crossing
                    .iter()
                    .map(|&i| limits[i].capacity.payload_bps())
                    .sum();
                let link_payload = throughput::payload_capacity_bps(link.rate.0, link.mtu);
                if own < link_payload && crossing.iter().all(|&i| limits[i].access) {
                    let ids: Vec<String> = crossing
                        .iter()
                        .map(|&i| self.checked.flows[i].id.to_string())
                        .collect();
                    let by = match ids.as_slice() {
                        [one] => format!("the access link of flow {one}"),
                        _ => format!("the access links of flows {}", ids.join(", ")),
                    };
                    Bottleneck {
                        name: Some(by),
                        capacity_bps: crossing.iter().map(|&i| limits[i].capacity.rate_bps).sum(),
                        payload_bps: own,
                        bytes,
                    }
                } else {
                    Bottleneck {
                        name: Some(link.name.clone()),
                        capacity_bps: link.rate.0,
                        payload_bps: link_payload,
                        bytes,
                    }
                }
            })
            .collect()
    }
}

/// A flow's throughput over whole 1-s intervals, from its sampled series (when the sampling
/// interval divides a second; otherwise no per-flow CoV is reported).
fn per_second(series: &FlowSeries, interval_ns: u64) -> Vec<f64> {
    if interval_ns == 0 || 1_000_000_000 % interval_ns != 0 {
        return Vec::new();
    }
    let k = (1_000_000_000 / interval_ns) as usize;
    series
        .throughput_bps
        .chunks_exact(k)
        // Only the seconds the flow was active throughout (a gap is a NaN).
        .filter(|c| c.iter().all(|x| x.is_finite()))
        .map(|c| c.iter().sum::<f64>() / k as f64)
        .collect()
}

/// The capacity that limits one flow: the slowest link of its path, or its access link.
#[derive(Clone, Copy)]
pub(super) struct FlowLimit {
    capacity: Capacity,
    /// The flow's own access link (its host's card), not a link of the path.
    access: bool,
}
