//! Which wire segments of a TCP super-packet leave the emulator together.
//!
//! The path model decides the fate of every wire segment of a super-packet (`crate::gso`):
//! dropped, or delivered at a release time of its own (later segments later, by their
//! serialisation). Writing each segment at its own time is exact but costs a system call per
//! wire packet, which is what offloads are there to avoid. So consecutive delivered segments
//! travel on as one packet — a smaller super-packet — released with the *last* of them, as long
//! as the run's release times rise and span at most `coalesce_ns`: no segment leaves early, and
//! none more than `coalesce_ns` late. A run ends at a dropped segment, at a release time that
//! goes back (reordering) or lies too far from the run's first, at a duplicated segment, which
//! leaves alone and, as its copy, again at the copy's time, and where RED's ECN marks change: the
//! segments of a run share one IP header, so a run is all marked (CE set in that header) or all
//! unmarked.
//!
//! `coalesce_ns = 0` writes every segment at its own time unless segments share one (a
//! bottleneck so fast that their serialisation rounds to the same nanosecond).

use crate::model::Nanos;

/// A run of consecutive segments, `first..first + count`, released at `at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    /// Index of the run's first segment within the super-packet.
    pub first: usize,
    /// Number of segments in the run.
    pub count: usize,
    /// Release time of the run: that of its last segment, in ns on the monotonic clock.
    pub at: Nanos,
    /// RED marked the run's segments: the forwarder sets CE in its IP header.
    pub ce: bool,
}

/// Builds the runs of one super-packet, fed its segments' fates in order.
#[derive(Debug)]
pub struct Coalescer {
    coalesce_ns: Nanos,
    /// The open run and its first segment's release time.
    open: Option<(Nanos, Chunk)>,
}

impl Coalescer {
    /// A builder whose runs span at most `coalesce_ns` nanoseconds of release times.
    pub fn new(coalesce_ns: Nanos) -> Self {
        Self {
            coalesce_ns,
            open: None,
        }
    }

    /// Segment `i` was dropped.
    pub fn dropped(&mut self, out: &mut Vec<Chunk>) {
        self.close(out);
    }

    /// Segment `i` is delivered at `at`, and a duplicate of it at `duplicate_at`; `ce`: RED
    /// marked it.
    pub fn delivered(
        &mut self,
        i: usize,
        at: Nanos,
        duplicate_at: Option<Nanos>,
        ce: bool,
        out: &mut Vec<Chunk>,
    ) {
        if let Some(dup) = duplicate_at {
            self.close(out);
            out.push(Chunk {
                first: i,
                count: 1,
                at,
                ce,
            });
            out.push(Chunk {
                first: i,
                count: 1,
                at: dup,
                ce,
            });
            return;
        }
        if let Some((first_at, c)) = &mut self.open {
            if at >= c.at
                && at - *first_at <= self.coalesce_ns
                && c.first + c.count == i
                && c.ce == ce
            {
                c.count += 1;
                c.at = at;
                return;
            }
        }
        self.close(out);
        self.open = Some((
            at,
            Chunk {
                first: i,
                count: 1,
                at,
                ce,
            },
        ));
    }

    /// No more segments: closes the open run.
    pub fn finish(&mut self, out: &mut Vec<Chunk>) {
        self.close(out);
    }

    fn close(&mut self, out: &mut Vec<Chunk>) {
        if let Some((_, c)) = self.open.take() {
            out.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `fates` (None = dropped; Some((at, duplicate_at))) through a coalescer.
    fn plan(coalesce_ns: Nanos, fates: &[Option<(Nanos, Option<Nanos>)>]) -> Vec<Chunk> {
        let mut c = Coalescer::new(coalesce_ns);
        let mut out = Vec::new();
        for (i, f) in fates.iter().enumerate() {
            match f {
                None => c.dropped(&mut out),
                Some((at, dup)) => c.delivered(i, *at, *dup, false, &mut out),
            }
        }
        c.finish(&mut out);
        out
    }

    fn ch(first: usize, count: usize, at: Nanos) -> Chunk {
        Chunk {
            first,
            count,
            at,
            ce: false,
        }
    }

    #[test]
    fn a_fast_link_keeps_the_super_packet_whole() {
        // 44 segments of 1500 B at 100 Gb/s: 120 ns apart, 5.16 µs in all ≤ 20 µs.
        let fates: Vec<_> = (0..44).map(|i| Some((1_000_000 + 120 * i, None))).collect();
        assert_eq!(plan(20_000, &fates), [ch(0, 44, 1_000_000 + 120 * 43)]);
    }

    #[test]
    fn runs_span_at_most_the_coalescing_window() {
        // 1500 B at 1 Gb/s: 12 µs apart. With 20 µs, pairs (12 µs span); a third would span
        // 24 µs. Each pair leaves with its second segment: the first is 12 µs late, none early.
        let fates: Vec<_> = (0..5).map(|i| Some((12_000 * i, None))).collect();
        assert_eq!(
            plan(20_000, &fates),
            [ch(0, 2, 12_000), ch(2, 2, 36_000), ch(4, 1, 48_000)]
        );
        // 0: every segment at its own time.
        assert_eq!(plan(0, &fates).len(), 5);
    }

    #[test]
    fn a_drop_splits_the_run() {
        let fates = [
            Some((100, None)),
            Some((200, None)),
            None,
            Some((400, None)),
            None,
        ];
        assert_eq!(plan(20_000, &fates), [ch(0, 2, 200), ch(3, 1, 400)]);
        assert_eq!(plan(20_000, &[None, None]), []);
    }

    #[test]
    fn reordering_and_duplicates_leave_alone() {
        // Segment 1 reordered (released before segment 0), segment 3 duplicated at 900.
        let fates = [
            Some((500, None)),
            Some((300, None)),
            Some((510, None)),
            Some((520, Some(900))),
            Some((530, None)),
        ];
        assert_eq!(
            plan(20_000, &fates),
            [
                ch(0, 1, 500),
                ch(1, 2, 510),
                ch(3, 1, 520),
                ch(3, 1, 900),
                ch(4, 1, 530)
            ]
        );
    }

    #[test]
    fn marked_segments_travel_apart_from_unmarked_ones() {
        // Six segments 100 ns apart, RED marked the third and fourth: three runs, the middle
        // one marked (its header gets CE), the others not.
        let mut c = Coalescer::new(20_000);
        let mut out = Vec::new();
        for i in 0..6 {
            c.delivered(i, 100 * i as Nanos, None, i == 2 || i == 3, &mut out);
        }
        c.finish(&mut out);
        let marked = |first, count, at| Chunk {
            ce: true,
            ..ch(first, count, at)
        };
        assert_eq!(out, [ch(0, 2, 100), marked(2, 2, 300), ch(4, 2, 500)]);
        // A marked duplicate: both copies are marked.
        let mut c = Coalescer::new(20_000);
        let mut out = Vec::new();
        c.delivered(0, 10, Some(50), true, &mut out);
        c.finish(&mut out);
        assert_eq!(out, [marked(0, 1, 10), marked(0, 1, 50)]);
    }
}
