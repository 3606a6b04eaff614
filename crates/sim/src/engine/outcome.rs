//! The outcome of a run: the result summary (links, flows, the aggregate; docs/measurements.md)
//! with the cross-traffic summaries, port reports, drop log and counters.

use super::*;

impl Engine<'_> {
    /// Everything the run measured; the engine's series move into the outcome.
    /// Keep every packet's events from now on (`crate::run_traced`): arrivals and deliveries
    /// per scenario flow, and the raw samples of each scenario sender's RTTs and each link's
    /// queue.
    pub fn keep_trace(&mut self) {
        let n = self.checked.flows.len();
        self.trace = Some(Box::new(crate::trace::Trace {
            arrivals: vec![Vec::new(); n],
            deliveries: vec![Vec::new(); n],
            ..Default::default()
        }));
        for i in 0..n {
            if let Some(s) = self.flows[i].sender.as_mut() {
                s.rtt_mut().keep_samples();
            }
        }
        for &(f, r) in &self.link_ports {
            self.ports[f as usize].stats.queue_delay.keep_samples();
            self.ports[r as usize].stats.queue_delay.keep_samples();
        }
    }

    /// The trace kept since `keep_trace`, with the senders' and links' raw samples.
    fn take_trace(&mut self) -> Option<crate::trace::Trace> {
        let mut t = *self.trace.take()?;
        let samples = |d: &longhaul_metrics::online::DelayAccumulator| {
            d.samples().map(<[u64]>::to_vec).unwrap_or_default()
        };
        t.rtt_ns = (0..self.checked.flows.len())
            .map(|i| {
                self.flows[i]
                    .sender
                    .as_ref()
                    .map(|s| samples(s.rtt()))
                    .unwrap_or_default()
            })
            .collect();
        t.link_sojourn_ns = self
            .link_ports
            .iter()
            .map(|&(f, r)| {
                [
                    samples(&self.ports[f as usize].stats.queue_delay),
                    samples(&self.ports[r as usize].stats.queue_delay),
                ]
            })
            .collect();
        Some(t)
    }

    pub(super) fn finish(mut self) -> Outcome {
        let sc = &self.checked.scenario;
        let run_s = self.end as f64 / 1e9;
        let (mut links, ports) = self.link_reports(run_s);
        links.extend(self.access_reports(run_s));
        let limits = self.flow_limits();
        let flows = self.flow_summaries(&limits);
        let bottlenecks = self.bottlenecks(&limits);
        // Responsive transfers still running at the end count what they delivered so far.
        for f in &self.flows {
            if let (Some(s), Some(_)) = (f.cross, &f.receiver) {
                self.cross[s].delivered += f.delivered();
            }
        }
        let cross = self
            .checked
            .cross
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let st = &self.cross[i];
                let active = (c.stop - c.start) as f64 / 1e9;
                let responsive = c.cc.is_some();
                let bytes = if responsive {
                    st.delivered
                } else {
                    st.src.bytes
                };
                CrossSummary {
                    kind: st.src.kind.name(),
                    link: sc.links[c.link].name.clone(),
                    responsive,
                    rate_bps: bytes as f64 * 8.0 / active,
                    packets: st.src.packets,
                    transfers: st.src.transfers,
                }
            })
            .collect();
        let responsive_cross = self
            .checked
            .cross
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let cc = c.cc.as_ref()?;
                let st = &self.cross[i];
                Some(ResponsiveCross {
                    index: i as u32,
                    kind: st.src.kind.name().to_string(),
                    link: sc.links[c.link].name.clone(),
                    cc: cc.algorithm.to_string(),
                    transfers: st.src.transfers,
                    completed: st.completed,
                    bytes_delivered: st.delivered,
                    rate_bps: st.delivered as f64 * 8.0 / ((c.stop - c.start) as f64 / 1e9),
                })
            })
            .collect();
        let mut meta = BTreeMap::new();
        meta.insert(
            "simulator".into(),
            format!("longhaul-sim {}", env!("CARGO_PKG_VERSION")),
        );
        meta.insert("events".into(), self.event_count.to_string());
        meta.insert(
            "transport".into(),
            match sc.transport {
                TransportKind::Proto => "proto".into(),
                TransportKind::Model => "model".into(),
                TransportKind::ProtoSecure => "proto_secure".into(),
            },
        );
        let host_stalls = self.stall_reports();
        for r in &host_stalls {
            meta.insert(
                format!("host_stalls.flow{}.{}", r.flow, r.host),
                format!("{} stalls, {:.3} ms stalled", r.stalls, r.stalled_s * 1e3),
            );
        }
        let aggregate = aggregate(
            &flows,
            AggregateCounts {
                bytes_delivered: self.total_delivered(),
                span_s: run_s,
                interval_bps: self.per_second.iter().map(|&b| b as f64 * 8.0).collect(),
                bottlenecks,
                distance: Distance::PerFlow,
                series: Some(std::mem::take(&mut self.aggregate_series)),
            },
        );
        let summary = Summary {
            scenario: self.checked.name.clone(),
            mode: Mode::Sim,
            duration_s: run_s,
            seed: sc.seed,
            links,
            flows,
            aggregate,
            responsive_cross,
            claims: Vec::new(),
            meta,
            provenance: None,
        };
        Outcome {
            summary,
            cross_traffic: cross,
            ports,
            drops: std::mem::take(&mut self.drops),
            drops_unlogged: self.drops_unlogged,
            host_stalls,
            events: self.event_count,
            packet_hops: self.packet_count,
            threads: 1,
            trace: self.take_trace(),
        }
    }
}
