//! Cross traffic: unresponsive sources emit packets onto their link; responsive ones start
//! congestion-controlled transfers, released once finished.

use super::endpoints::{make_endpoints, Endpoints};
use super::*;

impl Engine<'_> {
    pub(super) fn on_cross(&mut self, s: usize) {
        let now = self.now;
        let c = &mut self.cross[s];
        let (emit, next) = c.src.fire(now);
        let port = c.port;
        let size = c.src.packet_size;
        if let Some(t) = next {
            self.events.push(t, Ev::Cross(s as u32));
        }
        if emit {
            let pkt = Packet {
                flow: CROSS_FLOW + s as u32,
                size: size as u16,
                payload: size.saturating_sub(HEADER_BYTES) as u16,
                ..Packet::EMPTY
            };
            self.enqueue(port, pkt);
        }
    }

    /// Start a responsive cross-traffic transfer: a congestion-controlled flow over the link.
    pub(super) fn on_transfer(&mut self, s: usize) {
        let now = self.now;
        let sc = &self.checked.scenario;
        let c = &mut self.cross[s];
        if now >= c.src.stop {
            return;
        }
        let t = c.src.responsive_transfer(now);
        let (bytes, next) = (t.bytes, t.next_ns);
        let link = c.link;
        let mtu = sc.links[link].mtu;
        let spec = c.cc.clone().expect("responsive source has a controller");
        let setup = Setup {
            seed: mix(sc.seed, 3_000_000 + c.src.transfers),
            ..Setup::for_mtu(mtu)
        };
        if next < c.src.stop {
            self.events.push(next, Ev::Transfer(s as u32));
        }
        let Ok(cc) = spec.build(&setup) else { return };
        let rtt = 2 * sc.links[link].delay.0;
        let ends = Endpoints {
            mtu,
            start: now,
            stop: u64::MAX,
            bytes: Some(bytes),
            ecn: false,
            bdp_bytes: (sc.links[link].rate.0 * rtt as f64 / 8e9) as u64,
            linux24: false,
        };
        let Ok((sender, receiver)) = make_endpoints(sc.transport, cc, &spec, setup, ends) else {
            return;
        };
        let (fp, rp) = self.link_ports[link];
        let fi = self.flows.len();
        self.flows.push(Flow {
            sender: Some(sender),
            receiver: Some(receiver),
            ..Flow::new(None, Some(s), vec![fp].into(), vec![rp].into())
        });
        self.pump(fi, 0);
    }

    /// Free a finished responsive transfer's state (its packets are all acknowledged).
    pub(super) fn maybe_release(&mut self, fi: usize) {
        let f = &mut self.flows[fi];
        if f.sender.as_ref().is_some_and(|s| s.snapshot().finished) {
            let d = f.delivered();
            f.final_delivered = d;
            f.sender = None;
            f.receiver = None;
            if let Some(s) = f.cross {
                self.cross[s].delivered += d;
                self.cross[s].completed += 1;
            }
        }
    }
}
