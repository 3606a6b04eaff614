//! Path MTU discovery: the search for the largest datagram the path carries, as datagram
//! packetization-layer PMTU discovery (DPLPMTUD, RFC 8899 §4–5) and QUIC (RFC 9000 §14.3) do it.
//!
//! A connection starts at its configured MTU (`Config::mss`, 1500-byte IP packets on a real
//! host): that is RFC 8899's `BASE_PLPMTU` here, and nothing ever goes below it. The search
//! sends *probe packets* of candidate sizes; a size counts as carried only when a probe of it
//! is acknowledged (§4.1), and then new data packets fill it. A probe is a zero-length DATA
//! packet padded to its size (`packet::encode_padded_probe`), acknowledged like any data
//! packet. Its loss is neither a congestion signal nor a data loss (§4.4): the controller never
//! hears of a probe and it carries no stream bytes. [`MAX_PROBES`] (3, RFC 8899's default)
//! probes of a size lost in a row make it too big.
//!
//! **The search** (§5.3's SEARCHING): the candidates are `base + k·`[`STEP`] below the upper
//! bound (`MAX_PLPMTU`: what the host's route allows, capped by the driver), and the bound
//! itself. The bound is tried first — a path without a narrower hop (a jumbo-frame network,
//! loopback) is done with one probe — then a binary search between the largest size
//! acknowledged and the smallest found too big, one probe outstanding at a time. It ends
//! (SEARCH_COMPLETE) at the largest candidate the path carries: a path that drops packets
//! above `L` bytes ends at the largest candidate ≤ `L`.
//!
//! **Black holes** (§4.3): a path that carried the raised size may stop doing so (a route
//! change to a narrower hop that sends no ICMP). Losses of data packets larger than the base
//! are then *suspicious*: [`BLACK_HOLE_LOSSES`] loss events in a row that lose such packets,
//! with none of them acknowledged in between, fall back to the base and end the search for the
//! rest of the connection. Events are counted as recovery periods are: a loss counts only if
//! the packet lost was sent after the previous counted event, so the several passes of loss
//! detection over one burst of congestion count once, and any acknowledged large packet clears
//! the count.
//!
//! **The congestion window** stays continuous in bytes across a size change: the controller
//! keeps counting in packets of the base size for the connection's life (`Setup::mss` never
//! changes), and a larger data packet counts as its payload in base-sized packets when it is
//! acknowledged or lost. The window in bytes (`cwnd × base mss`) is therefore the same just
//! before and after a switch, as Linux's `tcp_mtup_probe_success` keeps it by rescaling the
//! window in packets. Growth per acknowledged byte is also unchanged (slow start doubles the
//! bytes per round trip either way); congestion avoidance keeps adding one base-sized packet
//! per round trip, where Linux would add one of the new size — the more conservative choice.
//!
//! Deviations from RFC 8899, and why: the base is the configured MTU and is not itself probed
//! (the transport already sends at that size, so a path that does not carry it fails before
//! any search); no PMTU_RAISE_TIMER re-probe after the search completes and no search after a
//! black hole (a transfer is one connection; a new one searches again); ICMP Packet Too Big
//! messages are not used (§4.6 makes them optional, and the probes do not rely on them); the
//! local interface refusing a probe (`EMSGSIZE`, `Connection::on_too_big`) makes its size too
//! big at once, and refusing a raised data packet is a black hole found at once.

use longhaul_cc::Time;

/// The largest IP packet (IPv4's 16-bit total length): the highest bound a search may have.
pub const MAX_MTU: u32 = 65_535;
/// Probes of one size lost in a row that make it too big (RFC 8899's `MAX_PROBES`).
pub const MAX_PROBES: u32 = 3;
/// Bytes between two candidate sizes.
pub const STEP: u32 = 16;
/// Suspicious loss events in a row that declare a black hole.
pub const BLACK_HOLE_LOSSES: u32 = 3;

/// Where the search stands (RFC 8899 §5.2's states, those that apply).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Probing for a larger size.
    Searching,
    /// The largest candidate the path carries is in use.
    Complete,
    /// Packets of a raised size were lost as a black hole loses them: back at the base, and
    /// the search is over.
    BlackHole,
}

impl Phase {
    /// The name the reports use.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Searching => "searching",
            Phase::Complete => "complete",
            Phase::BlackHole => "black hole",
        }
    }
}

/// What the search found and did, for the connection's [`crate::Stats`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PmtuStats {
    /// The IP packet size data packets fill now (the PLPMTU), bytes.
    pub mtu: u32,
    /// The size the search starts from and falls back to.
    pub base: u32,
    /// The largest size it may try.
    pub bound: u32,
    /// Where the search stands.
    pub phase: Phase,
    /// Probe packets sent.
    pub probes_sent: u64,
    /// Probe packets acknowledged.
    pub probes_acked: u64,
    /// Probe packets lost.
    pub probes_lost: u64,
    /// Times the size in use went up.
    pub raises: u64,
    /// Black holes found (each a fall back to the base).
    pub black_holes: u64,
}

/// The search's state (see the module header). Sizes are IP packets, bytes.
#[derive(Clone, Debug)]
pub struct PmtuSearch {
    /// Candidates are `size(i) = min(base + i·STEP, bound)`, `i` from 0 to the bound's.
    /// Index of the largest candidate acknowledged (the size in use while not in a black hole).
    low: u32,
    /// Index of the smallest candidate found too big (`top + 1`: none).
    high: u32,
    /// The candidate being probed, and how many of its probes were lost so far.
    target: u32,
    lost_in_a_row: u32,
    /// The probe in flight: its packet number.
    outstanding: Option<u64>,
    /// Suspicious loss events since a large data packet was last acknowledged, and the time
    /// of the latest.
    suspicious: u32,
    suspicious_at: Option<Time>,
    stats: PmtuStats,
}

impl PmtuSearch {
    /// A search from `base` up to `bound` (both IP packet sizes); with `bound <= base` it is
    /// complete from the start.
    pub fn new(base: u32, bound: u32) -> PmtuSearch {
        let bound = bound.max(base);
        let top = (bound - base).div_ceil(STEP);
        let phase = if top == 0 {
            Phase::Complete
        } else {
            Phase::Searching
        };
        PmtuSearch {
            low: 0,
            high: top + 1,
            target: top,
            lost_in_a_row: 0,
            outstanding: None,
            suspicious: 0,
            suspicious_at: None,
            stats: PmtuStats {
                mtu: base,
                base,
                bound,
                phase,
                probes_sent: 0,
                probes_acked: 0,
                probes_lost: 0,
                raises: 0,
                black_holes: 0,
            },
        }
    }

    fn size(&self, i: u32) -> u32 {
        (self.stats.base + i * STEP).min(self.stats.bound)
    }

    /// The size data packets fill now (the PLPMTU).
    pub fn mtu(&self) -> u32 {
        self.stats.mtu
    }

    /// The base size.
    pub fn base(&self) -> u32 {
        self.stats.base
    }

    /// Where the search stands.
    pub fn phase(&self) -> Phase {
        self.stats.phase
    }

    /// Counters and the size in use.
    pub fn stats(&self) -> PmtuStats {
        self.stats
    }

    /// The packet number of the probe in flight, if one is.
    pub fn outstanding(&self) -> Option<u64> {
        self.outstanding
    }

    /// The size to probe now, if the search wants a probe sent (none while one is in flight).
    pub fn next_probe(&self) -> Option<u32> {
        (self.stats.phase == Phase::Searching && self.outstanding.is_none())
            .then(|| self.size(self.target))
    }

    /// The probe [`PmtuSearch::next_probe`] asked for left as packet `pn`.
    pub fn on_probe_sent(&mut self, pn: u64) {
        self.outstanding = Some(pn);
        self.stats.probes_sent += 1;
    }

    /// Packet `pn`, a probe, was acknowledged. Returns the new size for data packets when
    /// this raises it.
    pub fn on_probe_acked(&mut self, pn: u64) -> Option<u32> {
        if self.outstanding != Some(pn) {
            return None;
        }
        self.outstanding = None;
        self.stats.probes_acked += 1;
        if self.stats.phase != Phase::Searching {
            return None;
        }
        self.low = self.target;
        self.lost_in_a_row = 0;
        self.stats.mtu = self.size(self.low);
        self.stats.raises += 1;
        self.next_target();
        Some(self.stats.mtu)
    }

    /// Packet `pn`, a probe, was declared lost.
    pub fn on_probe_lost(&mut self, pn: u64) {
        if self.outstanding != Some(pn) {
            return;
        }
        self.outstanding = None;
        self.stats.probes_lost += 1;
        if self.stats.phase != Phase::Searching {
            return;
        }
        self.lost_in_a_row += 1;
        if self.lost_in_a_row >= MAX_PROBES {
            self.high = self.target;
            self.lost_in_a_row = 0;
            self.next_target();
        }
    }

    /// Packet `pn`, a probe, was refused by the local interface as too big: its size is too
    /// big at once.
    pub fn on_probe_refused(&mut self, pn: u64) {
        if self.outstanding != Some(pn) {
            return;
        }
        self.outstanding = None;
        self.stats.probes_lost += 1;
        if self.stats.phase == Phase::Searching {
            self.high = self.target;
            self.lost_in_a_row = 0;
            self.next_target();
        }
    }

    /// The size in use no longer leaves this host (the interface's MTU went down): back to the
    /// base, and the search is over, as after a black hole.
    pub fn on_refused(&mut self) -> bool {
        if self.stats.mtu == self.stats.base {
            return false;
        }
        self.fall_back();
        true
    }

    /// Packet `pn`, a probe, never left (the host's queue was full): it is sent again, and
    /// says nothing about the path.
    pub fn on_probe_not_sent(&mut self, pn: u64) {
        if self.outstanding == Some(pn) {
            self.outstanding = None;
            self.stats.probes_sent -= 1;
        }
    }

    /// Back to the base size, for the rest of the connection.
    fn fall_back(&mut self) {
        self.stats.phase = Phase::BlackHole;
        self.stats.mtu = self.stats.base;
        self.stats.black_holes += 1;
        self.low = 0;
    }

    /// Binary search between `low` and `high`, or complete.
    fn next_target(&mut self) {
        if self.high - self.low <= 1 {
            self.stats.phase = Phase::Complete;
        } else {
            self.target = self.low + (self.high - self.low) / 2;
        }
    }

    /// A data packet larger than the base was acknowledged: the path carries raised sizes.
    pub fn on_large_acked(&mut self) {
        self.suspicious = 0;
        self.suspicious_at = None;
    }

    /// A loss event at `now` (a pass of loss detection, or a retransmission timeout) declared
    /// data packets larger than the base lost, the latest of them sent at `sent`. Returns true
    /// when this declares a black hole: the size is back at the base and the search is over.
    pub fn on_large_lost(&mut self, now: Time, sent: Time) -> bool {
        if self.stats.phase == Phase::BlackHole || self.stats.mtu == self.stats.base {
            return false;
        }
        if self.suspicious_at.is_some_and(|at| sent <= at) {
            // Lost in the same event as one already counted.
            return false;
        }
        self.suspicious += 1;
        self.suspicious_at = Some(now);
        if self.suspicious < BLACK_HOLE_LOSSES {
            return false;
        }
        self.fall_back();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the search over a path that carries packets up to `carries` bytes; returns the
    /// search and the probes it sent.
    fn converge(base: u32, bound: u32, carries: u32) -> (PmtuSearch, u64) {
        let mut s = PmtuSearch::new(base, bound);
        let mut pn = 0;
        while let Some(size) = s.next_probe() {
            s.on_probe_sent(pn);
            if size <= carries {
                s.on_probe_acked(pn);
            } else {
                s.on_probe_lost(pn);
            }
            pn += 1;
            assert!(pn < 200, "the search does not end");
        }
        (s, pn)
    }

    /// The largest candidate (`base + k·STEP`, or the bound) at or below `limit`.
    fn largest_candidate(base: u32, bound: u32, limit: u32) -> u32 {
        if limit >= bound {
            return bound;
        }
        base + (limit - base) / STEP * STEP
    }

    #[test]
    fn a_path_that_drops_above_l_ends_at_the_largest_candidate_at_or_below_l() {
        for (bound, carries) in [
            (9000, 4000),
            (9000, 9000),
            (9000, 1500),
            (9000, 1515),
            (9000, 1516),
            (9000, 8999),
            (65535, 9000),
            (65535, 65535),
            (65535, 16383),
            (16384, 3999),
        ] {
            let (s, probes) = converge(1500, bound, carries);
            let want = largest_candidate(1500, bound, carries);
            assert_eq!(s.mtu(), want, "bound {bound}, path {carries}");
            assert_eq!(s.phase(), Phase::Complete);
            let st = s.stats();
            assert_eq!(st.probes_sent, probes);
            assert_eq!(st.probes_acked + st.probes_lost, probes);
            // A wrong size costs MAX_PROBES probes, a right one one: about log2 of the
            // candidates in all.
            let candidates = (bound - 1500).div_ceil(STEP) as f64;
            let most = (candidates.log2().ceil() as u64 + 1) * MAX_PROBES as u64;
            assert!(
                probes <= most,
                "{probes} probes for {candidates} candidates"
            );
            assert!(want <= carries && (want == bound || carries - want < STEP));
        }
    }

    #[test]
    fn a_clear_path_is_done_with_one_probe_and_a_bound_at_the_base_with_none() {
        let (s, probes) = converge(1500, 9000, 9000);
        assert_eq!((s.mtu(), probes, s.stats().raises), (9000, 1, 1));
        let s = PmtuSearch::new(1500, 1500);
        assert_eq!(
            (s.phase(), s.next_probe(), s.mtu()),
            (Phase::Complete, None, 1500)
        );
        let s = PmtuSearch::new(1500, 1400);
        assert_eq!((s.phase(), s.mtu()), (Phase::Complete, 1500));
    }

    #[test]
    fn a_size_is_too_big_only_after_max_probes_losses_in_a_row() {
        let mut s = PmtuSearch::new(1500, 9000);
        for pn in 0..MAX_PROBES as u64 - 1 {
            assert_eq!(s.next_probe(), Some(9000));
            s.on_probe_sent(pn);
            assert_eq!(s.next_probe(), None, "one probe in flight at a time");
            s.on_probe_lost(pn);
        }
        // A probe that never left does not count.
        s.on_probe_sent(10);
        s.on_probe_not_sent(10);
        assert_eq!(s.next_probe(), Some(9000));
        s.on_probe_sent(11);
        assert_eq!(
            s.on_probe_acked(11),
            Some(9000),
            "a random loss is forgiven"
        );
        assert_eq!(s.phase(), Phase::Complete);
        // A late answer to an old probe changes nothing.
        assert_eq!(s.on_probe_acked(0), None);
        assert_eq!(s.stats().probes_lost, 2);
    }

    #[test]
    fn a_size_the_interface_refuses_is_too_big_at_once() {
        let mut s = PmtuSearch::new(1500, 9000);
        s.on_probe_sent(0);
        s.on_probe_refused(0);
        assert_eq!(
            s.next_probe(),
            Some(1500 + 234 * STEP),
            "the next size, not 9000 again"
        );
        s.on_probe_sent(1);
        assert_eq!(s.on_probe_acked(1), Some(5244));
        // The interface shrinks below the size in use: back at the base, search over.
        assert!(s.on_refused());
        assert_eq!(
            (s.mtu(), s.phase(), s.next_probe()),
            (1500, Phase::BlackHole, None)
        );
        assert!(!s.on_refused(), "once");
        assert_eq!(s.stats().black_holes, 1);
    }

    #[test]
    fn losses_of_large_packets_with_none_acknowledged_fall_back_to_the_base() {
        let (mut s, _) = converge(1500, 9000, 9000);
        let ms = Time::from_millis;
        // One burst of congestion found over several passes counts once, and an
        // acknowledged large packet clears the count.
        assert!(!s.on_large_lost(ms(100), ms(90)));
        assert!(!s.on_large_lost(ms(101), ms(95)));
        assert!(!s.on_large_lost(ms(102), ms(99)));
        assert!(!s.on_large_lost(ms(200), ms(150)));
        s.on_large_acked();
        assert!(!s.on_large_lost(ms(300), ms(250)));
        assert!(!s.on_large_lost(ms(400), ms(350)));
        assert_eq!(s.mtu(), 9000);
        // The third event in a row, each losing packets sent after the one before.
        assert!(s.on_large_lost(ms(500), ms(450)));
        assert_eq!((s.mtu(), s.phase()), (1500, Phase::BlackHole));
        assert_eq!(s.stats().black_holes, 1);
        assert_eq!(s.next_probe(), None, "the search is over");
        assert!(!s.on_large_lost(ms(600), ms(550)), "counted once");
        assert_eq!(s.stats().black_holes, 1);
    }

    #[test]
    fn a_black_hole_during_the_search_ends_it_at_the_base() {
        let mut s = PmtuSearch::new(1500, 9000);
        s.on_probe_sent(0);
        assert_eq!(s.on_probe_acked(0), Some(9000));
        let mut s2 = PmtuSearch::new(1500, 65535);
        s2.on_probe_sent(0);
        s2.on_probe_lost(0);
        assert_eq!(s2.next_probe(), Some(65535), "tried again");
        // At the base nothing is suspicious: there is nothing to fall back from.
        assert!(!s2.on_large_lost(Time::from_millis(1), Time::ZERO));
        for (i, t) in [10, 20, 30].into_iter().enumerate() {
            let black = s.on_large_lost(Time::from_millis(t), Time::from_millis(t - 1));
            assert_eq!(black, i == 2);
        }
        assert_eq!(s.mtu(), 1500);
    }
}
