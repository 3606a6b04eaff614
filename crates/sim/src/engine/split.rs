//! One run on two threads, with the same result bit for bit.
//!
//! This is conservative parallel discrete-event simulation (Chandy and Misra, "Distributed
//! simulation: a case study in design and verification of distributed programs", IEEE TSE
//! 1979; Bryant 1977) with two logical processes and the propagation delay as lookahead.
//!
//! **The cut.** Every flow's data route ends at one port and its ACK route starts at one port
//! (in a dumbbell, the bottleneck's two directions). The *near* part — the caller's thread —
//! keeps the senders, every queue on the data path up to and including that last port's queue,
//! and the ACK path from the far end of the first ACK port on. The *far* part — a second thread
//! — takes the data arriving at the end of the last data port, the receivers and their timers,
//! and the first ACK port's queue. The two delay lines of the cut are the only state both
//! sides touch; a packet crossing one travels as a message, `(arrival time, packet)`.
//!
//! **Lookahead.** A packet put on a delay line of delay d at time t arrives no earlier than
//! t + d. So once one part has run every event before time D (it says so with each batch of
//! packets it sends: `done`), the other may run every event before D + d: nothing the first
//! part still does can reach it sooner. Each part publishes its progress every `FLUSH_EVERY`
//! events and whenever it has to wait; both delays are positive, so the two cannot both wait
//! for each other. At 1 Gb/s × 180 ms the far part trails the near one by up to 90 ms of
//! simulated time, some 15,000 events, and neither waits long.
//!
//! **Same result.** Events at the same nanosecond run in an order fixed by the events
//! themselves (`events`), so each part runs its share of the single-threaded run's sequence,
//! in the same order. An `Arrive` at the cut gets the key it would have had, whichever thread
//! schedules it. Time-series samples read both parts: at a `Sample` or `Second` the far part
//! sends a snapshot of its receivers and its port as of that instant (samples run before
//! anything else at their time), which the near part waits for. Event and packet counts add
//! up; drop-log entries carry the key of the event that made them and are merged in key order.
//!
//! **When.** `plan` splits a run only when the cut exists and is safe: every flow's routes end
//! and start at the same two ports, both with a constant propagation delay above zero (no
//! jitter or reordering, which bound no packet's delay from below), no cross traffic
//! on the ACK port and no responsive (congestion-controlled) cross traffic, which creates flows
//! during the run; and, unless asked to split whenever it can (`SplitWhen::Possible`, for
//! tests), only when the smaller delay holds enough packets for the split to pay
//! (`MIN_WINDOW_PACKETS`). Anything else runs on one thread, with the same code. (The proto
//! transport's header bytes live in each part's own buffer pool; a packet's bytes cross with
//! it.)

use super::*;
use std::collections::VecDeque;
use std::sync::mpsc;

/// Events a part runs between two reports of its progress: about 100 µs of work, so a
/// report costs little and the other part never waits long for one.
const FLUSH_EVERY: u32 = 1024;

/// The two ports a split cuts.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cut {
    /// The last port of every data route: its queue stays near, its delay line ends far.
    fwd: u32,
    /// The first port of every ACK route: its queue is far, its delay line ends near.
    rev: u32,
}

/// The fewest MTU-sized packets the bottleneck must transmit within the cut's smaller
/// propagation delay for a split to pay: each part reports progress every `FLUSH_EVERY` events
/// (about 500 data packets and their ACKs), and a lookahead of only a few reports makes the
/// parts take turns instead of running together. At one packet (a 1 µs delay) a split run
/// took 100 times as long as one thread; seed 000 holds 7,500 packets (90 ms at 12 µs each).
const MIN_WINDOW_PACKETS: u64 = 2048;

/// Whether a run splits: `Worthwhile` when it can and its lookahead holds enough packets
/// (`MIN_WINDOW_PACKETS`), `Possible` to split every run that can be split (tests of the split's
/// exactness on small networks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitWhen {
    /// Split only when the lookahead holds at least `MIN_WINDOW_PACKETS` packets.
    Worthwhile,
    /// Split whenever the network allows it.
    Possible,
}

/// Where the run can be cut, if it can (see the module comment) and `when` allows.
pub(super) fn plan(e: &Engine, when: SplitWhen) -> Option<Cut> {
    let first = e.flows.first()?;
    let cut = Cut {
        fwd: *first.fwd.last()?,
        rev: *first.rev.first()?,
    };
    let same_cut = e.flows.iter().all(|f| {
        f.cross.is_none() && f.fwd.last() == Some(&cut.fwd) && f.rev.first() == Some(&cut.rev)
    });
    let cross_ok = e.cross.iter().all(|c| c.cc.is_none() && c.port != cut.rev);
    let (fwd, rev) = (&e.ports[cut.fwd as usize], &e.ports[cut.rev as usize]);
    // Jitter and reordering give no lower bound on a packet's delay, hence no lookahead.
    let constant = fwd.delay_model.is_none() && rev.delay_model.is_none();
    let lookahead = fwd.delay_ns.min(rev.delay_ns);
    let window_packets = lookahead.checked_div(fwd.mtu_tx_ns()).unwrap_or(0);
    let enough = match when {
        SplitWhen::Worthwhile => window_packets >= MIN_WINDOW_PACKETS,
        SplitWhen::Possible => lookahead > 0,
    };
    (same_cut && cross_ok && constant && enough).then_some(cut)
}

/// What one part sends the other.
enum Msg {
    /// Packets put on the cut's delay line, in order; every event before `done` has run. A
    /// packet with bytes (the proto transport's header) has their length in `buf`, and the
    /// bytes follow the previous packet's in `bytes`.
    Batch {
        packets: Arrivals,
        bytes: Vec<u8>,
        done: u64,
    },
    /// The far part at a `Sample` or `Second`.
    Snapshot(Snapshot),
}

/// The far part's state at a sample instant.
pub(super) struct Snapshot {
    /// Payload bytes each flow's receiver has delivered.
    pub delivered: Vec<u64>,
    /// Payload bytes that have reached each flow's receiving host.
    pub arrived: Vec<u64>,
    /// The far part's port (the ACK port of the cut) and its counters, as `on_sample` reads
    /// them.
    pub port: u32,
    pub sent_payload: u64,
    pub waiting_packets: u64,
    pub waiting_bytes: u64,
}

impl Snapshot {
    pub fn total_arrived(&self, flows: &[Flow]) -> u64 {
        flows
            .iter()
            .zip(&self.arrived)
            .filter(|(f, _)| f.id.is_some())
            .map(|(_, a)| a)
            .sum()
    }

    pub fn total_delivered(&self, flows: &[Flow]) -> u64 {
        flows
            .iter()
            .zip(&self.delivered)
            .filter(|(f, _)| f.id.is_some())
            .map(|(_, d)| d)
            .sum()
    }
}

/// Packets on their way to the other part's delay line: (arrival time, packet).
type Arrivals = Vec<(u64, Packet)>;

/// One part's end of the two channels.
pub(super) struct Link {
    far: bool,
    /// The cut port whose delay line this part drains, and that line's delay.
    in_port: u32,
    lookahead: u64,
    /// The far part's own port (for snapshots).
    far_port: u32,
    tx: mpsc::Sender<Msg>,
    rx: mpsc::Receiver<Msg>,
    /// Packets put on the other part's line since the last batch, and their bytes.
    out: Arrivals,
    out_bytes: Vec<u8>,
    /// Emptied batch buffers, reused for the next batches (a fresh buffer would grow by
    /// doubling, a reallocation every few packets).
    spare: Vec<(Arrivals, Vec<u8>)>,
    /// The other part has run every event before this time.
    other_done: u64,
    snapshots: VecDeque<Snapshot>,
    since_flush: u32,
    /// The event key of each drop-log entry this part wrote, in order.
    drop_keys: Vec<u128>,
}

impl Link {
    /// `far`: which part this is; `in_port`: the cut port whose delay line it drains, with
    /// that line's delay as its lookahead.
    fn new(
        far: bool,
        in_port: u32,
        cut: Cut,
        lookahead: u64,
        tx: mpsc::Sender<Msg>,
        rx: mpsc::Receiver<Msg>,
    ) -> Link {
        Link {
            far,
            in_port,
            lookahead,
            far_port: cut.rev,
            tx,
            rx,
            out: Vec::new(),
            out_bytes: Vec::new(),
            spare: Vec::new(),
            other_done: 0,
            snapshots: VecDeque::new(),
            since_flush: 0,
            drop_keys: Vec::new(),
        }
    }

    pub fn note_drop(&mut self, key: u128) {
        self.drop_keys.push(key);
    }
}

impl<'a> Engine<'a> {
    pub(super) fn run_split(mut self, cut: Cut, progress: &mut dyn FnMut(&Progress)) -> Outcome {
        let (to_far, from_near) = mpsc::channel();
        let (to_near, from_far) = mpsc::channel();
        let mut far = self.split_off(cut, to_near, from_near);
        self.ports[cut.fwd as usize].remote = true;
        let lookahead = self.ports[cut.rev as usize].delay_ns;
        self.link = Some(Box::new(Link::new(
            false, cut.rev, cut, lookahead, to_far, from_far,
        )));
        let far = std::thread::scope(|s| {
            let handle = s.spawn(move || {
                far.run_part(&mut |_| {});
                far
            });
            let near = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.start();
                self.run_part(progress);
            }));
            if let Err(panic) = near {
                // Close this part's channel so that the far part stops waiting and ends.
                self.link = None;
                let _ = handle.join();
                std::panic::resume_unwind(panic);
            }
            match handle.join() {
                Ok(far) => far,
                Err(panic) => std::panic::resume_unwind(panic),
            }
        });
        self.rejoin(far, cut);
        self.now = self.end;
        progress(&self.progress());
        Outcome {
            threads: 2,
            ..self.finish()
        }
    }

    /// Build the far part: the receivers, the ACK port, and an empty copy of the data port
    /// whose delay line it drains. Every table keeps its indices, so the shared code runs
    /// unchanged on either part.
    fn split_off(
        &mut self,
        cut: Cut,
        tx: mpsc::Sender<Msg>,
        rx: mpsc::Receiver<Msg>,
    ) -> Engine<'a> {
        let mut ports: Vec<Port> = self.ports.iter().map(Port::empty_copy).collect();
        std::mem::swap(
            &mut ports[cut.rev as usize],
            &mut self.ports[cut.rev as usize],
        );
        ports[cut.rev as usize].remote = true;
        let flows = self
            .flows
            .iter_mut()
            .map(|f| Flow {
                receiver: f.receiver.take(),
                armed: [NONE, f.armed[1]],
                stalls: [None, f.stalls[1].take()],
                ..Flow::new(f.id, None, f.fwd.clone(), f.rev.clone())
            })
            .collect();
        let mut far = Engine {
            port_series: (0..ports.len()).map(|_| None).collect(),
            ports,
            port_rng: self.port_rng.clone(),
            link_ports: self.link_ports.clone(),
            flows,
            link: Some(Box::new(Link::new(
                true,
                cut.fwd,
                cut,
                self.ports[cut.fwd as usize].delay_ns,
                tx,
                rx,
            ))),
            ..Engine::empty(self.checked)
        };
        far.events.push(0, Ev::Sample);
        far.events.push(1_000_000_000, Ev::Second);
        // The receivers' hosts stall on the far part (the near part's `start` schedules the
        // senders').
        far.schedule_stalls();
        far
    }

    /// Put the far part's state back, so that `finish` sees one network.
    fn rejoin(&mut self, mut far: Engine<'a>, cut: Cut) {
        let rev = cut.rev as usize;
        std::mem::swap(&mut self.ports[rev], &mut far.ports[rev]);
        self.ports[rev].remote = false;
        self.ports[cut.fwd as usize].remote = false;
        self.port_rng[rev] = far.port_rng[rev].clone();
        for (f, g) in self.flows.iter_mut().zip(&mut far.flows) {
            f.receiver = g.receiver.take();
            f.armed[1] = g.armed[1];
            f.stalls[1] = g.stalls[1].take();
        }
        self.event_count += far.event_count;
        self.packet_count += far.packet_count;
        // Drop-log entries in the order the single-threaded run writes them: by event key.
        let near_keys = self.link.take().map(|l| l.drop_keys).unwrap_or_default();
        let far_keys = far.link.take().map(|l| l.drop_keys).unwrap_or_default();
        let mut near = near_keys
            .into_iter()
            .zip(std::mem::take(&mut self.drops))
            .peekable();
        let mut other = far_keys.into_iter().zip(far.drops).peekable();
        let mut merged = Vec::new();
        loop {
            let take_near = match (near.peek(), other.peek()) {
                (Some(a), Some(b)) => a.0 <= b.0,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let (_, record) = if take_near { near.next() } else { other.next() }.expect("peeked");
            merged.push(record);
        }
        let limit = self.checked.scenario.output.drop_log_limit;
        self.drops_unlogged += far.drops_unlogged + merged.len().saturating_sub(limit) as u64;
        merged.truncate(limit);
        self.drops = merged;
    }

    /// Run this part's share of the events until both parts are past the end.
    fn run_part(&mut self, progress: &mut dyn FnMut(&Progress)) {
        let end = self.end;
        let mut next_report = PROGRESS_EVERY;
        loop {
            let (horizon, far) = {
                let l = self.link.as_ref().expect("a split part has a link");
                (l.other_done.saturating_add(l.lookahead), l.far)
            };
            let next = self.events.peek_time().unwrap_or(u64::MAX);
            if next < horizon && next <= end {
                let (t, ev) = self.events.pop_until(end).expect("peeked");
                self.now = t;
                match ev {
                    Ev::Sample | Ev::Second if far => self.send_snapshot(ev),
                    _ => {
                        self.event_count += 1;
                        self.dispatch(ev);
                    }
                }
                if self.event_count >= next_report {
                    next_report += PROGRESS_EVERY;
                    progress(&self.progress());
                }
                let l = self.link.as_mut().expect("link");
                l.since_flush += 1;
                if l.since_flush >= FLUSH_EVERY {
                    self.flush(t);
                    self.receive_available();
                }
                continue;
            }
            if next > end && horizon > end {
                // Nothing this part holds or can still receive is due by the end.
                self.flush(u64::MAX);
                return;
            }
            // Wait for the other part: say how far this one got, then block.
            self.flush(next.min(horizon));
            self.receive_blocking();
            self.receive_available();
        }
    }

    /// Send the packets put on the other part's line since the last batch, and this part's
    /// progress: every event before `done` has run.
    fn flush(&mut self, done: u64) {
        let l = self.link.as_mut().expect("link");
        l.since_flush = 0;
        let (next, next_bytes) = l.spare.pop().unwrap_or_default();
        let packets = std::mem::replace(&mut l.out, next);
        let bytes = std::mem::replace(&mut l.out_bytes, next_bytes);
        // The other part may have finished and dropped its receiver; nothing is lost then.
        let _ = l.tx.send(Msg::Batch {
            packets,
            bytes,
            done,
        });
    }

    fn receive_available(&mut self) {
        loop {
            let msg = match self.link.as_ref().expect("link").rx.try_recv() {
                Ok(m) => m,
                Err(_) => return,
            };
            self.receive(msg);
        }
    }

    fn receive_blocking(&mut self) {
        match self.link.as_ref().expect("link").rx.recv() {
            Ok(m) => self.receive(m),
            // The other part is gone: it finished (a panic there is re-raised at the join).
            Err(_) => self.link.as_mut().expect("link").other_done = u64::MAX,
        }
    }

    fn receive(&mut self, msg: Msg) {
        let l = self.link.as_mut().expect("link");
        match msg {
            Msg::Batch {
                packets,
                bytes,
                done,
            } => {
                let port = l.in_port;
                l.other_done = done;
                let (mut packets, mut bytes) = (packets, bytes);
                let mut at = 0;
                for (arrival, mut pkt) in packets.drain(..) {
                    if pkt.buf != NO_BUF {
                        let len = pkt.buf as usize;
                        pkt.buf = self.bufs.put(&bytes[at..at + len]);
                        at += len;
                    }
                    if self.ports[port as usize].put_on_line(arrival, pkt) {
                        self.events.push(arrival, Ev::Arrive(port));
                    }
                }
                if l.spare.len() < 8 {
                    bytes.clear();
                    l.spare.push((packets, bytes));
                }
            }
            Msg::Snapshot(s) => l.snapshots.push_back(s),
        }
    }

    /// A packet accepted by a `remote` port: it goes to the other part, its bytes with it.
    pub(super) fn send_across(&mut self, arrival: u64, mut pkt: Packet) {
        let Some(l) = self.link.as_mut() else { return };
        if pkt.buf != NO_BUF {
            let bytes = self.bufs.get(pkt.buf);
            l.out_bytes.extend_from_slice(bytes);
            let len = bytes.len() as u32;
            self.bufs.release(pkt.buf);
            pkt.buf = len;
        }
        l.out.push((arrival, pkt));
    }

    /// Far part, at a `Sample` or `Second`: send the receivers' and the port's state, and
    /// schedule the next one as the near part does.
    fn send_snapshot(&mut self, ev: Ev) {
        let now = self.now;
        let port = self.link.as_ref().expect("link").far_port;
        let p = &mut self.ports[port as usize];
        let (_, unsent) = p.unsent(now);
        let snapshot = Snapshot {
            delivered: self.flows.iter().map(|f| f.delivered()).collect(),
            arrived: self.flows.iter().map(|f| f.arrived).collect(),
            port,
            sent_payload: p.stats.payload_out - unsent,
            waiting_packets: p.waiting_packets(now),
            waiting_bytes: p.waiting_bytes(now),
        };
        self.flush(now);
        let _ = self
            .link
            .as_ref()
            .expect("link")
            .tx
            .send(Msg::Snapshot(snapshot));
        let step = match ev {
            Ev::Sample => self.checked.scenario.output.interval.0,
            _ => 1_000_000_000,
        };
        if now + step <= self.end {
            self.events.push(now + step, ev);
        }
    }

    /// Near part, at a `Sample` or `Second`: the far part's snapshot of this instant (None
    /// when the run is not split).
    pub(super) fn far_snapshot(&mut self) -> Option<Snapshot> {
        if self.link.as_ref()?.far {
            return None;
        }
        self.flush(self.now);
        loop {
            let l = self.link.as_mut().expect("link");
            if let Some(s) = l.snapshots.pop_front() {
                return Some(s);
            }
            match l.rx.recv() {
                Ok(m) => self.receive(m),
                Err(_) => panic!("the far part of a split run stopped before the end"),
            }
        }
    }
}
