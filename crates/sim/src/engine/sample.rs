//! The time series: every `output.interval`, each flow's throughput, window, RTT, in-flight,
//! losses and retransmissions, each recorded port's queue and throughput, and the aggregate;
//! every second, the aggregate's delivered bytes (for its CoV).

use super::*;

impl Engine<'_> {
    pub(super) fn on_sample(&mut self) {
        let now = self.now;
        let dt = self.checked.scenario.output.interval.0;
        // Split run: the far part's receivers and port, as they were at this instant.
        let far = self.far_snapshot();
        if now > 0 {
            // Each sample closes the interval (now − dt, now]; it is stamped with its start.
            let t = (now - dt) as f64 / 1e9;
            let per_s = 8e9 / dt as f64;
            for (i, f) in self.flows.iter_mut().enumerate() {
                if f.id.is_none() {
                    continue;
                }
                let d = far
                    .as_ref()
                    .map_or_else(|| f.delivered(), |s| s.delivered[i]);
                let arrived = far.as_ref().map_or(f.arrived, |s| s.arrived[i]);
                let s = &mut self.flow_series[i];
                let cf = &self.checked.flows[i];
                let drained = cf.stop <= now - dt && f.last_delivery <= now - dt;
                if cf.start >= now || drained {
                    // Not started by the interval's end, or its application had stopped and
                    // nothing was delivered in it: nothing was measured (a gap, JSON `null`),
                    // not a flow sending at zero.
                    s.t.push(t);
                    for v in [
                        &mut s.throughput_bps,
                        &mut s.goodput_bps,
                        &mut s.cwnd_pkts,
                        &mut s.rtt_ms,
                        &mut s.inflight_pkts,
                        &mut s.lost_pkts,
                        &mut s.retransmits,
                    ] {
                        v.push(f64::NAN);
                    }
                    f.delivered_at_sample = d;
                    f.arrived_at_sample = arrived;
                    continue;
                }
                let snap = f.sender.as_ref().map(|s| s.snapshot()).unwrap_or_default();
                s.t.push(t);
                // What the path carried in the interval; in-order delivery separately, since
                // the bytes a recovery releases at once would put a bin above the capacity.
                s.throughput_bps
                    .push((arrived - f.arrived_at_sample) as f64 * per_s);
                s.goodput_bps
                    .push((d - f.delivered_at_sample) as f64 * per_s);
                f.arrived_at_sample = arrived;
                f.delivered_at_sample = d;
                s.cwnd_pkts.push(snap.cwnd);
                // No RTT sample yet is a gap (NaN, JSON `null`), not a zero-millisecond RTT.
                s.rtt_ms.push(if snap.srtt_ns > 0 {
                    snap.srtt_ns as f64 / 1e6
                } else {
                    f64::NAN
                });
                s.inflight_pkts
                    .push(snap.bytes_in_flight as f64 / snap.mss.max(1) as f64);
                // Counts in the interval; a finished flow's released sender counts none.
                s.lost_pkts
                    .push(snap.packets_lost.saturating_sub(f.lost_at_sample) as f64);
                s.retransmits
                    .push(snap.retransmits.saturating_sub(f.retransmits_at_sample) as f64);
                f.lost_at_sample = f.lost_at_sample.max(snap.packets_lost);
                f.retransmits_at_sample = f.retransmits_at_sample.max(snap.retransmits);
            }
            for (p, series) in self.ports.iter_mut().zip(&mut self.port_series) {
                let Some((q, at_sample)) = series else {
                    continue;
                };
                let (sent, waiting_packets, waiting_bytes) = match &far {
                    Some(s) if s.port == p.index as u32 => {
                        (s.sent_payload, s.waiting_packets, s.waiting_bytes)
                    }
                    _ => {
                        let (_, unsent) = p.unsent(now);
                        let sent = p.stats.payload_out - unsent;
                        (sent, p.waiting_packets(now), p.waiting_bytes(now))
                    }
                };
                q.t.push(t);
                q.queue_pkts.push(waiting_packets as f64);
                q.queue_bytes.push(waiting_bytes as f64);
                q.throughput_bps.push((sent - *at_sample) as f64 * per_s);
                *at_sample = sent;
            }
            // The aggregate bins what the path carried, as each flow's series does.
            let d = match &far {
                Some(s) => s.total_arrived(&self.flows),
                None => self.total_arrived(),
            };
            self.aggregate_series.t.push(t);
            self.aggregate_series
                .throughput_bps
                .push((d - self.arrived_at_sample) as f64 * per_s);
            self.arrived_at_sample = d;
        }
        if now + dt <= self.end {
            self.events.push(now + dt, Ev::Sample);
        }
    }

    /// Payload bytes that have reached the scenario flows' receiving hosts.
    pub(super) fn total_arrived(&self) -> u64 {
        self.flows
            .iter()
            .filter(|f| f.id.is_some())
            .map(|f| f.arrived)
            .sum()
    }

    pub(super) fn total_delivered(&self) -> u64 {
        self.flows
            .iter()
            .filter(|f| f.id.is_some())
            .map(|f| f.delivered())
            .sum()
    }

    pub(super) fn on_second(&mut self) {
        let d = match self.far_snapshot() {
            Some(s) => s.total_delivered(&self.flows),
            None => self.total_delivered(),
        };
        self.per_second.push(d - self.delivered_at_second);
        self.delivered_at_second = d;
        if self.now + 1_000_000_000 <= self.end {
            self.events.push(self.now + 1_000_000_000, Ev::Second);
        }
    }
}
