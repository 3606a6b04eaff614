//! What holds the sender back: the time a connection spends in each sending state, as Linux
//! keeps it for a TCP socket (`tcp_chrono`, shown by `ss -i` as `busy`, `rwnd_limited` and
//! `sndbuf_limited`).
//!
//! Each call to `poll_transmit` that looks for data ends in one outcome, and the time until the
//! next outcome is charged to it:
//! - `sending`: a data packet left, until the next outcome at a later reading of the clock.
//!   A driver reads its clock once per batch of sends, so a sender that waits between
//!   batches shows almost none; one that never waits (its CPU is the limit) spends its time
//!   here;
//! - `window`: the congestion window is full (the ACK clock decides);
//! - `pacing`: the pacer holds the next packet until its release time;
//! - `late`: the pacer released a packet but the driver asked so much later that the pacer's
//!   bucket overflowed: the host did not run the sender in time (a busy core, a long sleep),
//!   and the rate that time was worth is lost. A driver back late by less than the bucket
//!   (a timer's slack) sends what it owes as one burst, and that wait counts as `pacing`.
//!   Linux has no such bucket; a user-space sender needs one, because this is where a shared
//!   core costs throughput;
//! - `receiver_window`: the peer's flow-control window is full;
//! - `no_data`: the application has given nothing to send (Linux's `sndbuf_limited` is close:
//!   there the buffer is full; here the stream is empty and the reader of the file is behind).
//!
//! Only time after the handshake and before the stream is done is counted, so the states'
//! times add up to that span. A sender that fills the path spends its time in `window` or
//! `pacing`; one that does not, and is in `late`, `no_data` or `sending`, is limited by its
//! host, its application or its own CPU.

use longhaul_cc::time::{duration_nanos, Time};

/// Why the sender is not sending, or that it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendState {
    /// A data packet left.
    Sending,
    /// The congestion window is full.
    Window,
    /// The pacer holds the next packet until its release time.
    Pacing,
    /// The driver came back so late that the pacer's bucket overflowed: the host did not run the
    /// sender in time.
    Late,
    /// The peer's flow-control window is full.
    ReceiverWindow,
    /// The application has given nothing to send.
    NoData,
}

impl SendState {
    /// Every state, in the order reports list them.
    pub const ALL: [SendState; 6] = [
        SendState::Sending,
        SendState::Window,
        SendState::Pacing,
        SendState::Late,
        SendState::ReceiverWindow,
        SendState::NoData,
    ];

    /// The name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            SendState::Sending => "sending",
            SendState::Window => "window",
            SendState::Pacing => "pacing",
            SendState::Late => "late",
            SendState::ReceiverWindow => "receiver_window",
            SendState::NoData => "no_data",
        }
    }
}

/// Nanoseconds spent in each [`SendState`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendTimes {
    /// Indexed by `SendState as usize`.
    ns: [u64; 6],
}

impl SendTimes {
    /// Nanoseconds spent in `state`.
    pub fn get(&self, state: SendState) -> u64 {
        self.ns[state as usize]
    }

    /// All states' time together: the span observed.
    pub fn total_ns(&self) -> u64 {
        self.ns.iter().sum()
    }

    /// Each state with its nanoseconds, in [`SendState::ALL`]'s order.
    pub fn entries(&self) -> [(SendState, u64); 6] {
        SendState::ALL.map(|s| (s, self.get(s)))
    }

    /// Each state with its share of the total (0 to 1), in [`SendState::ALL`]'s order.
    pub fn shares(&self) -> [(SendState, f64); 6] {
        let total = self.total_ns().max(1) as f64;
        self.entries().map(|(s, ns)| (s, ns as f64 / total))
    }

    /// The time in each state since an earlier snapshot `before`.
    pub fn since(&self, before: &SendTimes) -> SendTimes {
        SendTimes {
            ns: std::array::from_fn(|i| self.ns[i].saturating_sub(before.ns[i])),
        }
    }

    fn add(&mut self, state: SendState, from: Time, to: Time) {
        self.ns[state as usize] += duration_nanos(to.saturating_since(from));
    }
}

/// The clock: the state entered last, since when, and, if it was the pacer that held data
/// back, the instant after which its bucket overflows (to split its wait into `pacing` and
/// `late`).
#[derive(Clone, Debug, Default)]
pub struct SendClock {
    current: Option<(SendState, Time, Option<Time>)>,
    times: SendTimes,
}

impl SendClock {
    /// Charge the time since the last outcome, then enter `state` at `now`. `release` is,
    /// when `state` is [`SendState::Pacing`], the instant after which waiting loses rate: the
    /// pacer's release time plus the time its bucket takes to fill.
    pub fn enter(&mut self, now: Time, state: SendState, release: Option<Time>) {
        if let Some((previous, since, overflow)) = self.current {
            // A pacing wait past the bucket's overflow is late from there on.
            let until = match overflow {
                Some(at) if previous == SendState::Pacing && at < now => {
                    let from = since.max(at);
                    self.times.add(SendState::Late, from, now);
                    from
                }
                _ => now,
            };
            self.times.add(previous, since, until);
        }
        self.current = Some((state, now, release));
    }

    /// Stop counting at `now` (the stream is done, or the connection closed).
    pub fn stop(&mut self, now: Time) {
        if self.current.is_some() {
            self.enter(now, SendState::Sending, None);
            self.current = None;
        }
    }

    /// The time charged so far (up to the last outcome).
    pub fn times(&self) -> SendTimes {
        self.times
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time::from_millis(n)
    }

    #[test]
    fn time_goes_to_the_state_it_was_spent_in() {
        let mut c = SendClock::default();
        c.enter(ms(0), SendState::Sending, None);
        c.enter(ms(2), SendState::Window, None);
        c.enter(ms(10), SendState::NoData, None);
        c.enter(ms(15), SendState::Sending, None);
        c.stop(ms(16));
        let t = c.times();
        assert_eq!(t.get(SendState::Sending), 3_000_000);
        assert_eq!(t.get(SendState::Window), 8_000_000);
        assert_eq!(t.get(SendState::NoData), 5_000_000);
        assert_eq!(t.total_ns(), 16_000_000);
    }

    #[test]
    fn a_wait_past_the_release_time_is_late() {
        let mut c = SendClock::default();
        // The pacer holds a packet until 3 ms (bucket full then); the driver comes back at 7 ms.
        c.enter(ms(1), SendState::Pacing, Some(ms(3)));
        c.enter(ms(7), SendState::Sending, None);
        // Back on time: all pacing.
        c.enter(ms(8), SendState::Pacing, Some(ms(9)));
        c.enter(ms(9), SendState::Sending, None);
        c.stop(ms(10));
        let t = c.times();
        assert_eq!(t.get(SendState::Pacing), 3_000_000);
        assert_eq!(t.get(SendState::Late), 4_000_000);
        assert_eq!(t.get(SendState::Sending), 2_000_000);
        assert_eq!(t.total_ns(), 9_000_000);
    }

    #[test]
    fn nothing_is_counted_after_stop() {
        let mut c = SendClock::default();
        c.enter(ms(0), SendState::Window, None);
        c.stop(ms(1));
        c.stop(ms(5));
        assert_eq!(c.times().total_ns(), 1_000_000);
        let shares = c.times().shares();
        assert_eq!(shares[1], (SendState::Window, 1.0));
        let before = c.times();
        c.enter(ms(6), SendState::Late, None);
        c.stop(ms(9));
        let delta = c.times().since(&before);
        assert_eq!(
            (
                delta.get(SendState::Late),
                delta.get(SendState::Window),
                delta.total_ns()
            ),
            (3_000_000, 0, 3_000_000)
        );
    }
}
