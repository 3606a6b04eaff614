//! Senders and receivers: polling an endpoint for packets (blocked or dropped by a full host
//! queue), its lazy timer, and creating a flow's two endpoints of the scenario's transport.

use super::*;

impl Engine<'_> {
    /// Drain an endpoint's transmissions and re-arm its timer.
    pub(super) fn pump(&mut self, fi: usize, side: usize) {
        self.pump_from(fi, side, self.now);
    }

    /// `pump`, with timers no earlier than `earliest` (a timer that has just fired and still
    /// reports a due deadline is retried a nanosecond later rather than at the same instant,
    /// which could repeat forever).
    pub(super) fn pump_from(&mut self, fi: usize, side: usize, earliest: u64) {
        if self.stalled(fi, side) {
            return; // a stalled host sends nothing; it is pumped when the stall ends
        }
        let now = self.now;
        let mut wake = NONE;
        loop {
            let mut host_full = false;
            if side == 0 {
                if let Some((ap, room, on_full)) = self.flows[fi].access {
                    let port = &mut self.ports[ap as usize];
                    if port.waiting_packets(now) >= room {
                        if on_full == OnFull::Block {
                            wake = port.next_departure(now).unwrap_or(now + 1);
                            break;
                        }
                        host_full = true;
                    }
                }
            }
            self.scratch.clear();
            let f = &mut self.flows[fi];
            let pkt = match side {
                0 => f
                    .sender
                    .as_mut()
                    .and_then(|s| s.poll_transmit(now, &mut self.scratch)),
                _ => f
                    .receiver
                    .as_mut()
                    .and_then(|r| r.poll_transmit(now, &mut self.scratch)),
            };
            let Some(out) = pkt else { break };
            if host_full {
                self.host_drop(fi, out);
                break;
            }
            let buf = if self.scratch.is_empty() {
                NO_BUF
            } else {
                self.bufs.put(&self.scratch)
            };
            // A new value with the routing fields, not four narrow stores into the old one: the
            // port copies the packet at once with wide loads, which a store buffer holding
            // byte-sized writes to the same bytes cannot serve (a store-forwarding stall).
            let pkt = Packet {
                flow: fi as u32,
                hop: 0,
                dir: if side == 0 {
                    Dir::Forward
                } else {
                    Dir::Reverse
                },
                buf,
                ..out
            };
            let f = &self.flows[fi];
            let port = if side == 0 { f.fwd[0] } else { f.rev[0] };
            self.enqueue(port, pkt);
        }
        let f = &mut self.flows[fi];
        let deadline = match side {
            0 => f.sender.as_ref().and_then(|s| s.poll_timeout()),
            _ => f.receiver.as_ref().and_then(|r| r.poll_timeout()),
        }
        .unwrap_or(NONE)
        .min(wake);
        // A deadline already past fires now (the timer event must match `armed` to run).
        let deadline = deadline.max(earliest);
        if deadline < f.armed[side] {
            f.armed[side] = deadline;
            self.events
                .push(deadline, Ev::Timer((fi * 2 + side) as u32));
        }
    }

    /// The sender's packet found its host queue full (`on_full = "drop"`): count and log the
    /// drop, and hand the packet back to the sender.
    pub(super) fn host_drop(&mut self, fi: usize, pkt: Packet) {
        let now = self.now;
        let f = &mut self.flows[fi];
        let location = format!("access:{}", f.id.map(|i| i.to_string()).unwrap_or_default());
        if pkt.payload > 0 {
            f.dropped += 1;
            f.ledger.record(&location, REASON_HOST_QUEUE_FULL, 1);
        }
        if let Some(s) = f.sender.as_mut() {
            s.on_local_drop(now, &pkt);
        }
        let out = &self.checked.scenario.output;
        if out.drop_log {
            if self.drops.len() < out.drop_log_limit {
                if let Some(l) = self.link.as_mut() {
                    l.note_drop(self.events.last_key());
                }
                self.drops.push(DropRecord {
                    time_s: now as f64 * 1e-9,
                    link: location,
                    direction: "forward",
                    flow: self.flows[fi].id,
                    reason: DropReason::HostQueueFull.as_str(),
                });
            } else {
                self.drops_unlogged += 1;
            }
        }
    }

    pub(super) fn on_timer(&mut self, fi: usize, side: usize) {
        let now = self.now;
        let f = &mut self.flows[fi];
        if f.armed[side] != now {
            return; // superseded by an earlier deadline that already fired
        }
        f.armed[side] = NONE;
        if self.stalled(fi, side) {
            return; // deferred: re-armed when the stall ends (`stalls`)
        }
        let f = &mut self.flows[fi];
        match side {
            0 => {
                if let Some(s) = f.sender.as_mut() {
                    if s.poll_timeout().is_some_and(|d| d <= now) {
                        s.handle_timeout(now);
                    }
                }
            }
            _ => {
                if let Some(r) = f.receiver.as_mut() {
                    if r.poll_timeout().is_some_and(|d| d <= now) {
                        r.handle_timeout(now);
                    }
                }
            }
        }
        self.pump_from(fi, side, now + 1);
    }
}

/// What a flow's endpoints are created with.
pub(super) struct Endpoints {
    /// Path MTU: bytes on the wire of a full packet.
    pub(super) mtu: u32,
    pub(super) start: u64,
    pub(super) stop: u64,
    pub(super) bytes: Option<u64>,
    pub(super) ecn: bool,
    /// Bottleneck rate × base RTT, to size buffers and windows.
    pub(super) bdp_bytes: u64,
    /// Model transport: Linux 2.4's delayed ACKs and per-ACK growth (`stack = "linux-2.4"`).
    pub(super) linux24: bool,
}

/// A flow's two endpoints.
type FlowEnds = (Box<AnySender>, Box<AnyReceiver>);

/// A sender and a receiver of the scenario's transport.
pub(super) fn make_endpoints(
    kind: TransportKind,
    cc: Box<dyn longhaul_cc::CongestionControl>,
    spec: &CcSpec,
    setup: Setup,
    e: Endpoints,
) -> Result<FlowEnds, String> {
    match kind {
        TransportKind::Model => {
            let cfg = ModelConfig {
                mss: e.mtu - HEADER_BYTES,
                header: HEADER_BYTES,
                start: e.start,
                stop: e.stop,
                bytes: e.bytes,
                ecn: e.ecn,
                linux24: e.linux24,
            };
            Ok((
                Box::new(AnySender::Model(ModelSender::new(cfg, cc))),
                Box::new(AnyReceiver::Model(ModelReceiver::with_delayed_acks(
                    HEADER_BYTES,
                    e.linux24,
                ))),
            ))
        }
        TransportKind::Proto | TransportKind::ProtoSecure => {
            let mut config = longhaul_proto::Config::new(spec.clone());
            if kind == TransportKind::ProtoSecure {
                // One key pair for every end, trusted by every end: the simulation exercises
                // the handshake and the sealing, not key management.
                config.security = longhaul_proto::Security::noise(
                    longhaul_proto::Identity::from_private([0x5a; 32]),
                    longhaul_proto::PeerPolicy::Any,
                );
            }
            config.mss = e.mtu - IP_UDP_OVERHEAD - config.data_overhead() as u32;
            config.setup = setup;
            config.synthetic = true;
            config.idle_timeout = None;
            // Windows and buffers never limit a simulated bulk transfer: 4 BDPs, at least the
            // transport's defaults.
            let window = (4 * e.bdp_bytes).max(config.recv_window);
            config.recv_window = window;
            config.send_buffer = window;
            let receiver = ProtoReceiver::new(config.clone()).map_err(|err| err.to_string())?;
            Ok((
                Box::new(AnySender::Proto(ProtoSender::new(
                    config, e.start, e.stop, e.bytes, e.ecn,
                ))),
                Box::new(AnyReceiver::Proto(receiver)),
            ))
        }
    }
}
