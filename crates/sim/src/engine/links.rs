//! Packets through ports: a packet offered to a port is queued, dropped (logged where and why)
//! or sent on; one that arrives at the end of a hop moves to the next hop or to its endpoint.

use super::*;

impl Engine<'_> {
    /// Offer `pkt` to port `port` now. Inlined into its callers so that a packet just built
    /// field by field goes into the delay line from registers: through memory, the port's wide
    /// copy of it would wait on the narrow stores of its fields (a store-forwarding stall, the
    /// largest single cost of this function when it was called).
    #[inline(always)]
    pub(super) fn enqueue(&mut self, port: u32, pkt: Packet) {
        let p = &mut self.ports[port as usize];
        let rng = &mut self.port_rng[port as usize];
        let u_red = if p.red().is_some() {
            rng.gen::<f64>()
        } else {
            0.0
        };
        let lost = p.loss.lose(rng);
        self.packet_count += 1;
        let remote = p.remote;
        let (verdict, pkt) = p.enqueue(self.now, pkt, u_red, lost, rng);
        match verdict {
            Enqueued::Sent {
                arrival,
                head,
                duplicate,
            } => {
                if head {
                    self.events.push(arrival, Ev::Arrive(port));
                }
                if remote {
                    self.send_across(arrival, pkt);
                }
                if let Some(at) = duplicate {
                    // The copy carries bytes of its own: each copy's are released where it
                    // ends.
                    let buf = if pkt.buf != NO_BUF {
                        self.bufs.copy(pkt.buf)
                    } else {
                        NO_BUF
                    };
                    let copy = Packet { buf, ..pkt };
                    if self.ports[port as usize].put_copy_on_line(at, copy) {
                        self.events.push(at, Ev::Arrive(port));
                    }
                }
            }
            Enqueued::Dropped { at, reason } => {
                if pkt.buf != NO_BUF {
                    self.bufs.release(pkt.buf);
                }
                let p = &self.ports[port as usize];
                let location = |flow: Option<u32>| {
                    if p.link == usize::MAX {
                        format!("access:{}", flow.map(|f| f.to_string()).unwrap_or_default())
                    } else if p.reverse {
                        format!("{} (reverse)", self.checked.scenario.links[p.link].name)
                    } else {
                        self.checked.scenario.links[p.link].name.clone()
                    }
                };
                let flow = if pkt.flow >= CROSS_FLOW {
                    None
                } else {
                    let f = &mut self.flows[pkt.flow as usize];
                    if pkt.dir == Dir::Forward && pkt.payload > 0 {
                        f.dropped += 1;
                        f.ledger.record(&location(f.id), summary_reason(reason), 1);
                    }
                    f.id
                };
                let out = &self.checked.scenario.output;
                if out.drop_log {
                    if self.drops.len() < out.drop_log_limit {
                        let link = location(flow);
                        if let Some(l) = self.link.as_mut() {
                            l.note_drop(self.events.last_key());
                        }
                        self.drops.push(DropRecord {
                            time_s: at as f64 * 1e-9,
                            link,
                            direction: if p.reverse { "reverse" } else { "forward" },
                            flow,
                            reason: reason.as_str(),
                        });
                    } else {
                        self.drops_unlogged += 1;
                    }
                }
            }
        }
    }

    pub(super) fn on_arrive(&mut self, port: u32) {
        let now = self.now;
        // Deliver every packet that has arrived by now; schedule the next head.
        while let Some((pkt, next)) = self.ports[port as usize].pop_arrived(now) {
            self.forward(pkt);
            match next {
                Some(t) if t <= now => continue,
                Some(t) => {
                    self.events.push(t, Ev::Arrive(port));
                    break;
                }
                None => break,
            }
        }
    }

    /// Move a packet that reached the end of hop `pkt.hop` on to its next hop or endpoint.
    pub(super) fn forward(&mut self, mut pkt: Packet) {
        if pkt.flow >= CROSS_FLOW {
            return; // cross traffic leaves the network after its link
        }
        let fi = pkt.flow as usize;
        let f = &self.flows[fi];
        let route = if pkt.dir == Dir::Forward {
            &f.fwd
        } else {
            &f.rev
        };
        let next = pkt.hop as usize + 1;
        if next < route.len() {
            pkt.hop = next as u8;
            let port = route[next];
            self.enqueue(port, pkt);
            return;
        }
        let side = if pkt.dir == Dir::Forward { 1 } else { 0 };
        if side == 1 {
            self.flows[fi].arrived += u64::from(pkt.payload);
            if let Some(t) = self.trace.as_mut().and_then(|t| t.arrivals.get_mut(fi)) {
                t.push((self.now, u32::from(pkt.payload)));
            }
        }
        self.deliver(fi, side, pkt);
    }

    /// Hand a packet to its endpoint (`side` 0: the sender, 1: the receiver) and let the
    /// endpoint transmit; a stalled host holds it until the stall ends (`stalls`).
    pub(super) fn deliver(&mut self, fi: usize, side: usize, pkt: Packet) {
        if let Some(s) = self.flows[fi].stalls[side].as_mut() {
            if s.stalled() {
                s.held.push_back(pkt);
                return;
            }
        }
        let now = self.now;
        {
            let bytes: &[u8] = if pkt.buf != NO_BUF {
                self.bufs.get(pkt.buf)
            } else {
                &[]
            };
            let f = &mut self.flows[fi];
            match side {
                0 => {
                    if let Some(s) = f.sender.as_mut() {
                        s.handle_packet(now, &pkt, bytes)
                    }
                }
                _ => {
                    if let Some(r) = f.receiver.as_mut() {
                        let before = r.delivered_bytes();
                        r.handle_packet(now, &pkt, bytes);
                        let after = r.delivered_bytes();
                        if after > before {
                            f.last_delivery = now;
                            if let Some(t) =
                                self.trace.as_mut().and_then(|t| t.deliveries.get_mut(fi))
                            {
                                t.push((now, after - before));
                            }
                        }
                    }
                }
            }
        }
        if pkt.buf != NO_BUF {
            self.bufs.release(pkt.buf);
        }
        self.pump(fi, side);
        if side == 0 && self.flows[fi].cross.is_some() {
            self.maybe_release(fi);
        }
    }
}

/// The summary's name for a drop reason (`longhaul_metrics::loss`).
fn summary_reason(r: DropReason) -> &'static str {
    match r {
        DropReason::QueueFull => REASON_QUEUE_FULL,
        DropReason::RedEarly | DropReason::RedForced => REASON_AQM,
        DropReason::RandomLoss => REASON_RANDOM,
        DropReason::HostQueueFull => REASON_HOST_QUEUE_FULL,
        DropReason::TooBig => REASON_TOO_BIG,
    }
}
