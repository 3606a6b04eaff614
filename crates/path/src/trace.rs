//! Trace-driven serialiser: mahimahi link traces.
//!
//! Format (mahimahi `man/mm-link.1`, `src/frontend/link_queue.cc`): one integer per line, the
//! millisecond at which one *delivery opportunity* occurs; each opportunity can carry
//! `PACKET_SIZE = 1504` bytes. Timestamps are non-decreasing; several lines with the same value mean
//! several opportunities in that millisecond. The trace repeats with a period equal to its last
//! timestamp (`base_timestamp_ += schedule_.back()`).
//!
//! Accounting is byte-level, as in mahimahi: a packet larger than 1504 B uses several opportunities
//! (it leaves at the one that carries its last byte), and the bytes an opportunity has left after a
//! packet completes carry the next packet only if that packet was already waiting at that instant.
//! Opportunities that pass with nothing to send are wasted (a trace describes capacity, not credit).
//!
//! Deviation from mahimahi: times are exact nanoseconds from the trace epoch instead of being
//! rounded to the millisecond tick at which mahimahi's event loop happens to wake, so a packet
//! leaves exactly at its opportunity. The bursts inside one millisecond are the trace's own.

use std::path::Path;

/// Nanoseconds from the trace's epoch, on the clock of whoever drives the serialiser.
type Nanos = u64;

/// Bytes carried by one delivery opportunity (mahimahi `PACKET_SIZE`).
pub const OPPORTUNITY_BYTES: u32 = 1504;

/// Errors reading a trace file.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The OS error is part of the message and deliberately not a `source`, so that error
    /// chains (`anyhow`'s `{:#}`) do not print it twice.
    #[error("cannot read trace file {path}: {error}")]
    Io {
        /// The trace file as named.
        path: String,
        /// Why it could not be read.
        error: std::io::Error,
    },
    /// A line is not a non-negative integer.
    #[error("trace {path} line {line}: `{text}` is not a non-negative integer millisecond")]
    Parse {
        /// The trace as named.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The line's text.
        text: String,
    },
    /// A timestamp is smaller than the one before it.
    #[error("trace {path} line {line}: timestamps must not decrease ({prev} ms then {now} ms)")]
    Decreasing {
        /// The trace as named.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The previous timestamp, in ms.
        prev: u64,
        /// This line's timestamp, in ms.
        now: u64,
    },
    /// No opportunity after 0 ms, so the trace has no period.
    #[error(
        "trace {path} is empty or its last timestamp is 0 ms; a trace needs at least one \
         opportunity after 0 ms to define its period"
    )]
    NoPeriod {
        /// The trace as named.
        path: String,
    },
}

/// A parsed trace: opportunity times in nanoseconds within one period.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    times: Vec<Nanos>,
    period: Nanos,
}

impl Trace {
    /// Parses the text of a mahimahi trace (`name` is used in error messages).
    pub fn parse(name: &str, text: &str) -> Result<Trace, TraceError> {
        let mut ms = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let t = raw.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let v: u64 = t.parse().map_err(|_| TraceError::Parse {
                path: name.into(),
                line: i + 1,
                text: t.into(),
            })?;
            if let Some(&prev) = ms.last() {
                if v < prev {
                    return Err(TraceError::Decreasing {
                        path: name.into(),
                        line: i + 1,
                        prev,
                        now: v,
                    });
                }
            }
            ms.push(v);
        }
        match ms.last() {
            Some(&last) if last > 0 => Ok(Trace {
                period: last * 1_000_000,
                times: ms.into_iter().map(|m| m * 1_000_000).collect(),
            }),
            _ => Err(TraceError::NoPeriod { path: name.into() }),
        }
    }

    /// Reads and parses a trace file.
    pub fn from_file(path: &Path) -> Result<Trace, TraceError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| TraceError::Io {
            path: name.clone(),
            error,
        })?;
        Self::parse(&name, &text)
    }

    /// Mean capacity of the trace in bits per second.
    pub fn mean_rate_bps(&self) -> f64 {
        self.times.len() as f64 * OPPORTUNITY_BYTES as f64 * 8.0 / (self.period as f64 / 1e9)
    }

    /// Time of opportunity number `k` (counting across repetitions), relative to the epoch.
    fn time_of(&self, k: u64) -> Nanos {
        let n = self.times.len() as u64;
        (k / n) * self.period + self.times[(k % n) as usize]
    }

    /// The first opportunity index whose time is ≥ `t` (relative to the epoch).
    fn first_at_or_after(&self, t: Nanos) -> u64 {
        let n = self.times.len() as u64;
        let wraps = t / self.period;
        let rem = t % self.period;
        let idx = self.times.partition_point(|&x| x < rem) as u64;
        wraps * n + idx
    }
}

/// Serialiser that follows a trace's delivery opportunities.
#[derive(Debug, Clone)]
pub struct TraceSerializer {
    trace: Trace,
    epoch: Nanos,
    /// Index of the opportunity used last (None before the first packet), its time and the
    /// bytes it still has.
    current: Option<u64>,
    current_time: Nanos,
    bytes_left: u32,
    busy_until: Nanos,
}

impl TraceSerializer {
    /// The trace starts at `epoch` (opportunity times are relative to it).
    pub fn new(trace: Trace, epoch: Nanos) -> Self {
        Self {
            trace,
            epoch,
            current: None,
            current_time: 0,
            bytes_left: 0,
            busy_until: epoch,
        }
    }

    /// The trace being followed.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The instant the trace's time 0 falls on, ns.
    pub fn epoch(&self) -> Nanos {
        self.epoch
    }

    /// Counts the trace from `epoch` on (an engine that learns its zero point after it
    /// started): packets given from now on meet the opportunities of the trace started at
    /// `epoch`, after the packets already given finish.
    pub fn rebase(&mut self, epoch: Nanos) {
        self.epoch = epoch;
        self.current = None;
        self.bytes_left = 0;
    }

    /// When the link finishes the last packet it was given, in ns (the link is busy until then).
    pub fn busy_until(&self) -> Nanos {
        self.busy_until
    }

    /// Serialises `bytes` arriving at `arrival`; returns the time its last byte leaves.
    pub fn transmit(&mut self, arrival: Nanos, bytes: u32) -> Nanos {
        let mut remaining = bytes.max(1);
        // Leftover bytes of the current opportunity serve this packet only if it was waiting
        // when the opportunity occurred.
        if self.bytes_left > 0 && arrival <= self.current_time {
            let used = remaining.min(self.bytes_left);
            self.bytes_left -= used;
            remaining -= used;
            if remaining == 0 {
                self.busy_until = self.current_time;
                return self.current_time;
            }
        }
        let start = arrival.max(self.busy_until).max(self.epoch) - self.epoch;
        let mut k = self.trace.first_at_or_after(start);
        if let Some(c) = self.current {
            k = k.max(c + 1);
        }
        loop {
            let used = remaining.min(OPPORTUNITY_BYTES);
            remaining -= used;
            if remaining == 0 {
                self.current = Some(k);
                self.current_time = self.epoch + self.trace.time_of(k);
                self.bytes_left = OPPORTUNITY_BYTES - used;
                self.busy_until = self.current_time;
                return self.current_time;
            }
            k += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: Nanos = 1_000_000;

    #[test]
    fn parses_and_rejects() {
        let t = Trace::parse("t", "0\n1\n1\n# comment\n\n4\n").unwrap();
        assert_eq!(t.period, 4 * MS);
        assert_eq!(t.times, vec![0, MS, MS, 4 * MS]);
        assert!(matches!(
            Trace::parse("t", "1\nx\n"),
            Err(TraceError::Parse { line: 2, .. })
        ));
        assert!(matches!(
            Trace::parse("t", "5\n3\n"),
            Err(TraceError::Decreasing { line: 2, .. })
        ));
        assert!(matches!(
            Trace::parse("t", "0\n0\n"),
            Err(TraceError::NoPeriod { .. })
        ));
    }

    #[test]
    fn mean_rate_of_one_opportunity_per_ms_is_12_032_mbps() {
        let t = Trace::parse("t", "1\n").unwrap();
        assert!((t.mean_rate_bps() - 12_032_000.0).abs() < 1e-6);
    }

    #[test]
    fn packets_leave_at_their_opportunities_and_share_leftover_bytes() {
        // Opportunities at 1, 2, 3 ms (period 3 ms, repeating).
        let t = Trace::parse("t", "1\n2\n3\n").unwrap();
        let mut s = TraceSerializer::new(t, 0);
        // Two 700 B packets waiting at 0: both fit in the 1 ms opportunity (1400 ≤ 1504).
        assert_eq!(s.transmit(0, 700), MS);
        assert_eq!(s.transmit(0, 700), MS);
        // A third 700 B packet needs 700 but only 104 are left: it completes at 2 ms.
        assert_eq!(s.transmit(0, 700), 2 * MS);
        // A 3000 B packet arriving at 2.5 ms: the 2 ms leftover is wasted (it was not waiting);
        // it needs two opportunities: 3 ms and the next period's 1 ms = 4 ms.
        assert_eq!(s.transmit(2 * MS + MS / 2, 3000), 4 * MS);
        // Idle until 10 ms: the next opportunity at or after 10 ms is 10 ms (= 3·3 + 1).
        assert_eq!(s.transmit(10 * MS, 100), 10 * MS);
    }

    #[test]
    fn epoch_offsets_the_trace() {
        let t = Trace::parse("t", "2\n").unwrap();
        let mut s = TraceSerializer::new(t, 1_000);
        assert_eq!(s.transmit(0, 1500), 1_000 + 2 * MS);
    }

    #[test]
    fn a_rebased_trace_counts_from_its_new_epoch_after_what_was_sent() {
        // Opportunities at 2 ms of every 2 ms period. From epoch 0: 2, 4, 6 ms, ...
        let t = Trace::parse("t", "2\n").unwrap();
        let mut s = TraceSerializer::new(t, 0);
        assert_eq!(s.transmit(0, 1000), 2 * MS);
        // Counted from 5.5 ms on, the opportunities fall at 7.5, 9.5 ms, ...; the 504 bytes
        // left of the 2 ms opportunity are gone with the old schedule.
        s.rebase(5 * MS + MS / 2);
        assert_eq!(s.transmit(MS, 500), 7 * MS + MS / 2);
        assert_eq!(s.transmit(8 * MS, 1500), 9 * MS + MS / 2);
        // Rebased to 10 ms while the last packet is still to leave (at 9.5 ms): the next,
        // arriving at 9 ms, meets the new schedule's first opportunity, 10 + 2 = 12 ms.
        s.rebase(10 * MS);
        assert_eq!(s.transmit(9 * MS, 1500), 12 * MS);
    }

    #[test]
    fn missing_file_names_the_os_error_once() {
        let e = Trace::from_file(Path::new("/nonexistent/lh.trace")).unwrap_err();
        assert!(std::error::Error::source(&e).is_none());
        let msg = e.to_string();
        assert!(
            msg.starts_with("cannot read trace file /nonexistent/lh.trace: "),
            "{msg}"
        );
        assert_eq!(msg.matches("os error 2").count(), 1, "{msg}");
    }
}
