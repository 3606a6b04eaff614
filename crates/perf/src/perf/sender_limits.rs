//! What held a TCP sender back: the receiver's window, the send buffer, or neither — and how often
//! the congestion window went unfilled.
//!
//! The kernel keeps three "chrono" timers per connection (`tcp_chrono_start`, Linux 4.10+): busy
//! (data unacknowledged or unsent), and, as parts of it, receive-window-limited and
//! send-buffer-limited. `TCP_INFO` reports them in microseconds at jiffy resolution.
//!
//! They cannot tell a sender whose window is full from one held below it by something else:
//! pacing that falls behind (late timers on a busy host), TCP small queues waiting for the device
//! to take packets, or an application that does not write fast enough. So beside them this
//! counts the report samples (`TCP_INFO` once per interval) taken in the open state — no loss or
//! reordering being handled, so cwnd is the window in use — whose packets in flight
//! (`tcpi_unacked`) were more than 5 % below cwnd. A flow that fills its window scores near 0;
//! one held back scores the share of the run it was. The unfilled samples are split by whether
//! data was waiting in the socket (`tcpi_notsent_bytes` > 0: the stack held it back — pacing,
//! TCP small queues) or not (the application had not written it).
//!
//! The share means something for controls whose window is the operating point (Reno, CUBIC,
//! FAST...). BBR sets cwnd to twice the BDP as a cap and runs on its pacing rate, so most of
//! its samples read as unfilled by design.

use super::client::PerfRun;
use super::tcp_info::{TcpStats, CA_OPEN};

/// Below this share of cwnd in flight a sample counts as unfilled (5 % of slack: ACKs arriving
/// between a sample's reads of cwnd and in-flight, and the last TSO segment still queued).
pub const UNFILLED_BELOW: f64 = 0.95;

/// One stream's sender limits over a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SenderLimits {
    /// Seconds with data unacknowledged or unsent (`tcpi_busy_time`).
    pub busy_s: f64,
    /// Of those, seconds held back by the receiver's window.
    pub rwnd_limited_s: f64,
    /// Of those, seconds the send buffer limited the sender: cwnd not full, nothing left unsent,
    /// and the application waiting for buffer space (`tcp_cwnd_validate`'s test).
    pub sndbuf_limited_s: f64,
    /// Samples in the open state with cwnd known.
    pub open_samples: usize,
    /// Share of `open_samples` with in-flight below [`UNFILLED_BELOW`] × cwnd.
    pub window_unfilled: f64,
    /// Of `open_samples`, the share unfilled while data waited unsent in the socket.
    pub unfilled_data_waiting: f64,
}

impl SenderLimits {
    /// Stream `s` of a run; `None` when the kernel reported no chrono timers (before 4.10) and
    /// no sample was taken.
    pub fn of(run: &PerfRun, s: usize) -> Option<SenderLimits> {
        let samples = run.intervals.iter().filter_map(|i| i.streams.get(s));
        let last = run.final_tcp.get(s).copied().unwrap_or_default();
        Self::from_samples(samples.map(|x| &x.tcp), &last)
    }

    /// From the report samples and the last `TCP_INFO`, whose timers cover the whole run.
    pub fn from_samples<'a>(
        samples: impl Iterator<Item = &'a TcpStats>,
        last: &TcpStats,
    ) -> Option<SenderLimits> {
        let mut open = 0usize;
        let mut unfilled = 0usize;
        let mut waiting = 0usize;
        for t in samples {
            if t.ca_state == CA_OPEN && t.cwnd_pkts > 0 {
                open += 1;
                if (t.unacked as f64) < UNFILLED_BELOW * t.cwnd_pkts as f64 {
                    unfilled += 1;
                    waiting += usize::from(t.notsent_bytes > 0);
                }
            }
        }
        let share = |n: usize| {
            if open == 0 {
                f64::NAN
            } else {
                n as f64 / open as f64
            }
        };
        if open == 0 && last.busy_us == 0 {
            return None;
        }
        Some(SenderLimits {
            busy_s: last.busy_us as f64 / 1e6,
            rwnd_limited_s: last.rwnd_limited_us as f64 / 1e6,
            sndbuf_limited_s: last.sndbuf_limited_us as f64 / 1e6,
            open_samples: open,
            window_unfilled: share(unfilled),
            unfilled_data_waiting: share(waiting),
        })
    }

    /// One line for a summary's `meta`.
    pub fn render(&self) -> String {
        format!(
            "busy={:.2}s rwnd_limited={:.2}s sndbuf_limited={:.2}s window_unfilled={:.1}% \
             (data waiting {:.1}%, none written {:.1}%) of {} open samples",
            self.busy_s,
            self.rwnd_limited_s,
            self.sndbuf_limited_s,
            self.window_unfilled * 100.0,
            self.unfilled_data_waiting * 100.0,
            (self.window_unfilled - self.unfilled_data_waiting) * 100.0,
            self.open_samples
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(ca_state: u8, cwnd_pkts: u32, unacked: u32, notsent_bytes: u32) -> TcpStats {
        TcpStats {
            ca_state,
            cwnd_pkts,
            unacked,
            notsent_bytes,
            ..TcpStats::default()
        }
    }

    #[test]
    fn counts_unfilled_windows_in_the_open_state_only() {
        let samples = [
            sample(CA_OPEN, 1000, 1000, 0),     // full
            sample(CA_OPEN, 1000, 960, 0),      // within 5 %
            sample(CA_OPEN, 1000, 940, 65_160), // unfilled, data waiting (held by the stack)
            sample(CA_OPEN, 1000, 500, 0),      // unfilled, nothing written
            sample(3, 1000, 100, 0),            // recovery: cwnd is not the window in use
            sample(CA_OPEN, 0, 0, 0),           // no window yet
        ];
        let last = TcpStats {
            busy_us: 59_870_000,
            rwnd_limited_us: 0,
            sndbuf_limited_us: 1_250_000,
            ..TcpStats::default()
        };
        let l = SenderLimits::from_samples(samples.iter(), &last).unwrap();
        assert_eq!(l.open_samples, 4);
        assert_eq!(l.window_unfilled, 0.5);
        assert_eq!(l.unfilled_data_waiting, 0.25);
        assert_eq!((l.busy_s, l.sndbuf_limited_s), (59.87, 1.25));
        assert_eq!(
            l.render(),
            "busy=59.87s rwnd_limited=0.00s sndbuf_limited=1.25s window_unfilled=50.0% \
             (data waiting 25.0%, none written 25.0%) of 4 open samples"
        );
    }

    #[test]
    fn nothing_measured_is_none() {
        assert_eq!(
            SenderLimits::from_samples([].iter(), &TcpStats::default()),
            None
        );
    }
}
