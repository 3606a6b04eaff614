//! Silences in the traffic offered to the bottleneck, and which host they came from.
//!
//! A window-based sender is clocked by its ACKs: it sends when an ACK frees room in its window.
//! A stall anywhere on the loop — the sending host not running its stack for a few ms, the
//! receiving host not acknowledging — leaves a hole in the data stream, the hole travels to the
//! receiver, comes back as a hole in the ACK stream one round trip later, and makes the sender
//! fall silent again: the ACK clock repeats a silence every round trip until a standing queue at
//! the bottleneck absorbs it. After each silence the sender's held-back window leaves at the
//! host's speed, far above the link's, and queues at the bottleneck. A delay-based control reads
//! that queue as congestion although the link was idle half the time. This module measures it
//! from the emulator's event log (`queue_log` describes the format).
//!
//! Time is cut into bins of [`BIN_NS`]. For each direction, a *silence* is a run of at least
//! [`MIN_SILENCE_BINS`] bins without one arrival at the bottleneck. Its interior bins (the edge
//! bins are partly busy) are attributed by what the emulator delivered to the silent host over
//! the other direction meanwhile:
//! - **fed**: the other direction delivered packets to this host (ACKs to a sender, data to a
//!   receiver) and the host still sent nothing: a stall of that host (its CPU, its stack);
//! - **unfed**: nothing arrived for it to answer: an earlier silence carried on by the ACK clock
//!   (or a sender with nothing to send).
//!
//! So on a one-flow path `a>b`'s fed share is the sending host's own stalls, `b>a`'s fed share the
//! receiving host's, and the unfed shares are those stalls repeated by the loop.

use std::io::{BufRead, BufReader, Read};

/// Bin width: a 1500-byte packet every 12 µs at 1 Gb/s, so an empty half millisecond is ~40
/// packets not sent; short enough to see ms stalls, long enough that one empty bin at 100 Mb/s
/// (4 packet times) is not noise.
pub const BIN_NS: u64 = 500_000;
/// A silence lasts at least 2 ms: longer than an ACK's usual spacing at any rate the lab runs,
/// and the queueing delay FAST keeps at 1 Gb/s (α = 200 packets is 2.4 ms), which such a
/// silence empties.
pub const MIN_SILENCE_BINS: usize = 4;

/// One direction's silences, as shares of the measured span.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DirectionSilences {
    /// Silences of at least [`MIN_SILENCE_BINS`] bins.
    pub count: u64,
    /// All silent time (whole runs), as a share of the span.
    pub share: f64,
    /// Interior time during which the other direction delivered to this host.
    pub fed_share: f64,
    /// Interior time during which it did not.
    pub unfed_share: f64,
    /// The longest silence, seconds.
    pub longest_s: f64,
}

/// Both directions of the bottleneck, over `span_s` seconds from the epoch.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Silences {
    /// The span measured, seconds.
    pub span_s: f64,
    /// The data direction (a>b).
    pub forward: DirectionSilences,
    /// The ACK direction (b>a).
    pub reverse: DirectionSilences,
}

impl Silences {
    /// One line for the summary's `meta`.
    pub fn render(&self) -> String {
        let one = |name: &str, d: &DirectionSilences, fed: &str| {
            format!(
                "{name}: {:.1} % of the run silent in {} gaps >= 2 ms (longest {:.1} ms); \
                 {:.1} % while {fed}, {:.1} % unfed",
                d.share * 100.0,
                d.count,
                d.longest_s * 1e3,
                d.fed_share * 100.0,
                d.unfed_share * 100.0
            )
        };
        format!(
            "{}; {}",
            one("a>b", &self.forward, "ACKs reached the sender"),
            one("b>a", &self.reverse, "data reached the receiver")
        )
    }
}

/// Per-bin counts of one direction.
#[derive(Default)]
struct Bins {
    arrivals: Vec<u32>,
    deliveries: Vec<u32>,
}

/// Reads the whole event log once: arrivals and deliveries of both directions from `epoch_ns`
/// on, for `span_s` seconds. Lines that do not parse are skipped (`queue_log` counts them).
pub fn read(log: impl Read, epoch_ns: u64, span_s: f64) -> std::io::Result<Silences> {
    let n = ((span_s * 1e9) as u64).div_ceil(BIN_NS).max(1) as usize;
    let mut dirs = [Bins::default(), Bins::default()];
    for d in &mut dirs {
        d.arrivals = vec![0; n];
        d.deliveries = vec![0; n];
    }
    for line in BufReader::new(log).lines() {
        let line = line?;
        let mut f = line.split_ascii_whitespace();
        let (Some(t), Some(dir), Some(event)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let Ok(t) = t.parse::<u64>() else { continue };
        let d = match dir {
            "a>b" => 0,
            "b>a" => 1,
            _ => continue,
        };
        if t < epoch_ns {
            continue;
        }
        let bin = ((t - epoch_ns) / BIN_NS) as usize;
        if bin >= n {
            continue;
        }
        match event {
            "arrive" => dirs[d].arrivals[bin] += 1,
            "deliver" => dirs[d].deliveries[bin] += 1,
            _ => {}
        }
    }
    Ok(Silences {
        span_s,
        forward: attribute(&dirs[0].arrivals, &dirs[1].deliveries),
        reverse: attribute(&dirs[1].arrivals, &dirs[0].deliveries),
    })
}

/// Finds the silences of `arrivals` and splits their interiors by `fed` (deliveries to the
/// silent host over the other direction, same bins).
fn attribute(arrivals: &[u32], fed: &[u32]) -> DirectionSilences {
    let n = arrivals.len();
    let mut out = DirectionSilences::default();
    let (mut silent, mut fed_bins, mut unfed_bins, mut longest) = (0usize, 0usize, 0usize, 0);
    // Silences before the first arrival are the start-up, not a stall: skip them.
    let Some(start) = arrivals.iter().position(|&a| a > 0) else {
        return out;
    };
    let mut i = start;
    while i < n {
        if arrivals[i] > 0 {
            i += 1;
            continue;
        }
        let begin = i;
        while i < n && arrivals[i] == 0 {
            i += 1;
        }
        // A silence still open at the end is the flows stopping.
        if i == n {
            break;
        }
        let len = i - begin;
        if len < MIN_SILENCE_BINS {
            continue;
        }
        out.count += 1;
        silent += len;
        longest = longest.max(len);
        let interior = &fed[begin + 1..i - 1];
        let fed_here = interior.iter().filter(|&&d| d > 0).count();
        fed_bins += fed_here;
        unfed_bins += interior.len() - fed_here;
    }
    let span_bins = (n - start).max(1) as f64;
    out.share = silent as f64 / span_bins;
    out.fed_share = fed_bins as f64 / span_bins;
    out.unfed_share = unfed_bins as f64 / span_bins;
    out.longest_s = longest as f64 * BIN_NS as f64 / 1e9;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An event line at `ms` milliseconds.
    fn line(ms: f64, dir: &str, event: &str) -> String {
        format!("{} {dir} {event} 1500 - -\n", (ms * 1e6) as u64)
    }

    /// Data arrives every 0.25 ms from 0 to 30 ms except during 10–16 ms (a 6 ms silence,
    /// ACKs delivered to the sender during its first half only) and 20–21 ms (too short).
    /// ACKs arrive every 0.25 ms except 2–7 ms, when no data was delivered to the receiver.
    fn log() -> String {
        let mut s = String::from("# t_ns dir event bytes queue_packets queue_bytes detail\n");
        for k in 0..120 {
            let ms = k as f64 * 0.25;
            if !(10.0..16.0).contains(&ms) && !(20.0..21.0).contains(&ms) {
                s += &line(ms, "a>b", "arrive");
            }
            if !(2.0..7.0).contains(&ms) {
                s += &line(ms, "b>a", "arrive");
                s += &line(ms, "a>b", "deliver");
            }
            if ms < 13.0 {
                s += &line(ms, "b>a", "deliver");
            }
        }
        s += "garbage\n";
        s
    }

    #[test]
    fn finds_silences_and_splits_fed_from_unfed() {
        let s = read(log().as_bytes(), 0, 30.0e-3).unwrap();
        // a>b: one silence of 12 bins (10–16 ms); 20–21 ms is 2 bins, too short.
        assert_eq!(s.forward.count, 1);
        assert!((s.forward.share - 12.0 / 60.0).abs() < 1e-12);
        assert!((s.forward.longest_s - 6e-3).abs() < 1e-12);
        // Interior bins 10.5–15.5 ms (10 bins): ACKs delivered until 13 ms → 5 fed, 5 unfed.
        assert!((s.forward.fed_share - 5.0 / 60.0).abs() < 1e-12);
        assert!((s.forward.unfed_share - 5.0 / 60.0).abs() < 1e-12);
        // b>a: 2–7 ms silent (10 bins), no data delivered to the receiver meanwhile: unfed.
        assert_eq!(s.reverse.count, 1);
        assert!((s.reverse.share - 10.0 / 60.0).abs() < 1e-12);
        assert_eq!(s.reverse.fed_share, 0.0);
        assert!((s.reverse.unfed_share - 8.0 / 60.0).abs() < 1e-12);
        let text = s.render();
        assert!(
            text.contains("a>b: 20.0 % of the run silent in 1 gaps"),
            "{text}"
        );
    }

    #[test]
    fn a_steady_stream_and_an_empty_log_have_no_silence() {
        let mut steady = String::new();
        for k in 0..400 {
            steady += &line(k as f64 * 0.1, "a>b", "arrive");
        }
        let s = read(steady.as_bytes(), 0, 40.0e-3).unwrap();
        assert_eq!(s.forward, DirectionSilences::default());
        let s = read("".as_bytes(), 0, 1.0).unwrap();
        assert_eq!(s.forward.count + s.reverse.count, 0);
    }

    #[test]
    fn the_epoch_and_the_end_bound_the_measurement() {
        // Events before the epoch are ignored; the silence at the end (flows stopped) is not one.
        let mut s = line(0.0, "a>b", "arrive");
        for k in 0..20 {
            s += &line(100.0 + k as f64 * 0.25, "a>b", "arrive");
        }
        let r = read(s.as_bytes(), 100_000_000, 50.0e-3).unwrap();
        assert_eq!(r.forward.count, 0);
        assert_eq!(r.forward.share, 0.0);
    }
}
