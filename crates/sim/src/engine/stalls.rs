//! Hosts that stop running their network stack for a while (`host_stalls`; the stall process
//! and its source are `crate::stall`'s).
//!
//! While a host is stalled it runs none of its flow's endpoint: packets that reach it wait in
//! arrival order (`deliver`), a timer that fires waits (`on_timer`), and it transmits nothing
//! (`pump_from`). Its NIC still drains the host queue (the access port), as a NIC's DMA does
//! while the CPU is elsewhere. When the stall ends, the endpoint takes the waiting packets in
//! order, each at that instant — so a sender's RTT samples include the stall, as the kernel's
//! do — transmitting after each what its window, pacing and host queue allow (a burst), and
//! then a timer that came due. A sender's stall thus holds back the ACKs that clock it; a
//! receiver's holds back the data, and its ACKs leave together at the stall's end, per packet
//! or per the stack's ACK rule.
//!
//! Each host's stalls are events of their own (`Ev::Stall`), drawn from the host's own random
//! stream: a flow without `host_stalls` runs exactly as before.

use super::*;

impl Engine<'_> {
    /// Whether the host of `fi`'s endpoint `side` is stalled now.
    #[inline]
    pub(super) fn stalled(&self, fi: usize, side: usize) -> bool {
        self.flows[fi].stalls[side]
            .as_ref()
            .is_some_and(|s| s.stalled())
    }

    /// Schedule the first stall of every host this engine holds (in a split run, each part
    /// schedules its own endpoints' hosts).
    pub(super) fn schedule_stalls(&mut self) {
        for fi in 0..self.flows.len() {
            for side in 0..2 {
                if let Some(s) = self.flows[fi].stalls[side].as_mut() {
                    let t = s.next_start(self.now);
                    self.events.push(t, Ev::Stall((fi * 2 + side) as u32));
                }
            }
        }
    }

    /// A host stalls, or its stall ends and it catches up.
    pub(super) fn on_stall(&mut self, fi: usize, side: usize) {
        let now = self.now;
        let ev = Ev::Stall((fi * 2 + side) as u32);
        let Some(s) = self.flows[fi].stalls[side].as_mut() else {
            return;
        };
        if !s.stalled() {
            let until = s.begin(now);
            self.events.push(until, ev);
            return;
        }
        s.resume();
        let next = s.next_start(now);
        self.events.push(next, ev);
        let mut held = std::mem::take(&mut s.held);
        for pkt in held.drain(..) {
            self.deliver(fi, side, pkt);
        }
        // Keep the queue's room for the next stall.
        if let Some(s) = self.flows[fi].stalls[side].as_mut() {
            s.held = held;
        }
        // A timer deferred by the stall fires now (`pump` re-arms it at once).
        self.pump(fi, side);
    }

    /// Each stalling host's stalls, for the outcome (`Outcome::host_stalls`).
    pub(super) fn stall_reports(&self) -> Vec<HostStallReport> {
        let mut reports = Vec::new();
        for f in &self.flows {
            let Some(id) = f.id else { continue };
            for (side, host) in ["sender", "receiver"].into_iter().enumerate() {
                if let Some(s) = &f.stalls[side] {
                    reports.push(HostStallReport {
                        flow: id,
                        host,
                        stalls: s.count,
                        stalled_s: s.stalled_ns as f64 * 1e-9,
                    });
                }
            }
        }
        reports
    }
}
