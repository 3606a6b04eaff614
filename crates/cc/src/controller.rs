//! The one trait every congestion-control algorithm implements.

use crate::event::{AckEvent, EcnEvent, LossEvent, RtoEvent, SentEvent};
use crate::time::Time;
use serde::{Deserialize, Serialize};

/// Linux's "no slow-start threshold yet" value (`TCP_INFINITE_SSTHRESH`), in packets.
pub const INFINITE_SSTHRESH: f64 = 2_147_483_647.0;

/// The fixed facts a controller is created with.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    /// Maximum segment size: payload bytes per full-sized packet.
    pub mss: u32,
    /// Bytes a full-sized packet carries besides its `mss` bytes of payload, as the transport's
    /// pacer counts them (Linux `tcp_mss_to_mtu(mss) − mss`). A controller whose rates are
    /// measured in payload bytes (BBR) converts them to the pacer's bytes with it. Missing in a
    /// file: 52, Linux's 1500-byte MTU less its 1448-byte MSS.
    #[serde(default = "default_header_bytes")]
    pub header_bytes: u32,
    /// Initial congestion window in packets (RFC 6928: 10).
    pub initial_cwnd: f64,
    /// The smallest window any controller may set, in packets.
    pub min_cwnd: f64,
    /// The largest window any controller may set, in packets (Linux `snd_cwnd_clamp`).
    pub max_cwnd: f64,
    /// Seed for the few algorithms that randomise (BBR's initial gain-cycle phase).
    pub seed: u64,
}

fn default_header_bytes() -> u32 {
    52
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            mss: 1448,
            header_bytes: default_header_bytes(),
            initial_cwnd: 10.0,
            min_cwnd: 1.0,
            max_cwnd: 1e9,
            seed: 1,
        }
    }
}

impl Setup {
    /// A setup for packets of `mtu` bytes on the wire with 40 bytes of TCP/IP-style headers
    /// (seed 000 counts utilization net of exactly these 40 bytes).
    pub fn for_mtu(mtu: u32) -> Setup {
        Setup {
            mss: mtu.saturating_sub(40).max(1),
            header_bytes: 40,
            ..Setup::default()
        }
    }

    /// Clamp a proposed window into `[min_cwnd, max_cwnd]`, mapping NaN to `min_cwnd`. Never
    /// panics, even on a setup that [`Setup::validate`] rejects (`f64::clamp` would).
    pub fn clamp_cwnd(&self, w: f64) -> f64 {
        if w.is_nan() {
            self.min_cwnd
        } else {
            w.max(self.min_cwnd).min(self.max_cwnd)
        }
    }

    /// Check that the setup describes a usable sender: a non-zero MSS, finite windows with
    /// `0 < min_cwnd ≤ max_cwnd` and a positive initial window (clamped into that range by the
    /// controllers). They divide by the MSS and by the window, so a zero in either would turn
    /// into infinities.
    pub fn validate(&self) -> Result<(), String> {
        let Setup {
            mss,
            initial_cwnd,
            min_cwnd,
            max_cwnd,
            ..
        } = *self;
        if mss == 0 {
            return Err("setup: mss must be at least 1 byte".into());
        }
        let finite = [initial_cwnd, min_cwnd, max_cwnd]
            .iter()
            .all(|w| w.is_finite());
        if !finite || min_cwnd <= 0.0 || min_cwnd > max_cwnd || initial_cwnd <= 0.0 {
            return Err(format!(
                "setup: windows must be finite, with 0 < min_cwnd ≤ max_cwnd and initial_cwnd > 0; \
                 got min_cwnd {min_cwnd}, initial_cwnd {initial_cwnd}, max_cwnd {max_cwnd}"
            ));
        }
        Ok(())
    }
}

/// A congestion controller: a deterministic state machine driven by transport events.
///
/// Windows are in packets of `Setup::mss` bytes and may be fractional; the transport converts
/// to bytes. Every method takes `&mut self` and an event with an explicit `now`; none may
/// allocate, block, read a clock or panic. Implementations keep their window within
/// `[setup.min_cwnd, setup.max_cwnd]` and never produce NaN.
pub trait CongestionControl: Send + std::fmt::Debug {
    /// The algorithm's registry name (`"fast"`, `"cubic"`, …).
    fn name(&self) -> &'static str;

    /// A packet was sent. Most window-based algorithms ignore this.
    fn on_sent(&mut self, _ev: &SentEvent) {}

    /// An ACK newly acknowledged data.
    fn on_ack(&mut self, ev: &AckEvent);

    /// Loss was detected. Reduce if `ev.first_in_window`, per the algorithm's rule.
    fn on_loss(&mut self, ev: &LossEvent);

    /// The retransmission timer expired.
    fn on_rto(&mut self, ev: &RtoEvent);

    /// ECN-CE was echoed. By default it is treated like the first loss of a window (RFC 3168).
    fn on_ecn(&mut self, ev: &EcnEvent) {
        if ev.first_in_window {
            self.on_loss(&LossEvent {
                now: ev.now,
                lost_packets: 0,
                lost_bytes: 0,
                prior_bytes_in_flight: ev.bytes_in_flight,
                largest_lost: 0,
                first_in_window: true,
            });
        }
    }

    /// The application ran out of data to send (the window is not being used).
    fn on_app_limited(&mut self, _now: Time) {}

    /// An RTT sample that acknowledged no data: the handshake's. It left before any data, into
    /// queues this connection had not yet filled, so delay-based controllers may take it as a
    /// propagation-delay measurement. Linux counts it the same way: the SYN-ACK's RTT
    /// (`tcp_ack_update_rtt` on the client, `tcp_synack_rtt_meas` on the server) enters the
    /// socket's minimum RTT (`tcp_update_rtt_min`), from which BBR's `bbr_init` starts its
    /// min_rtt once the connection is established. The default ignores it.
    fn on_rtt_sample(&mut self, _now: Time, _rtt: std::time::Duration) {}

    /// Congestion window, in packets.
    fn cwnd(&self) -> f64;

    /// Slow-start threshold, in packets ([`INFINITE_SSTHRESH`] until first set).
    fn ssthresh(&self) -> f64;

    /// The rate to pace at, in bytes per second. `None` lets the transport pace by its default
    /// rule (Linux: 2 × cwnd/srtt in slow start, 1.2 × cwnd/srtt after).
    fn pacing_rate(&self) -> Option<u64> {
        None
    }

    /// The largest burst, in packets, the transport may send back to back. `None` lets the
    /// transport decide.
    fn max_burst(&self) -> Option<u32> {
        None
    }

    /// The transport paces this connection's packets, at [`CongestionControl::pacing_rate`]
    /// or by its default rule: Linux's `sk->sk_pacing_status != SK_PACING_NONE` (the fq qdisc, or
    /// TCP's internal pacing). Told once, before the first event; a transport that says
    /// nothing does not pace by default (Linux without fq). Algorithms whose rules assume
    /// back-to-back sending read it (CUBIC's HyStart ACK train); the default ignores it.
    fn on_transport_pacing(&mut self, _paced: bool) {}

    /// A short name for the controller's current phase (for traces and tests).
    fn phase(&self) -> &'static str;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamError;
    use crate::registry::CcSpec;

    #[test]
    fn clamp_never_panics_and_maps_nan_to_the_minimum() {
        let setup = Setup::default();
        assert_eq!(setup.clamp_cwnd(f64::NAN), 1.0);
        assert_eq!(setup.clamp_cwnd(f64::INFINITY), 1e9);
        assert_eq!(setup.clamp_cwnd(0.25), 1.0);
        assert_eq!(setup.clamp_cwnd(42.5), 42.5);
        // An inverted range (rejected by validate) still gives a number instead of a panic.
        let inverted = Setup {
            min_cwnd: 10.0,
            max_cwnd: 5.0,
            ..Setup::default()
        };
        assert_eq!(inverted.clamp_cwnd(7.0), 5.0);
    }

    #[test]
    fn building_with_an_unusable_setup_is_an_error_not_a_panic() {
        let bad = [
            Setup {
                mss: 0,
                ..Setup::default()
            },
            Setup {
                min_cwnd: 10.0,
                max_cwnd: 5.0,
                ..Setup::default()
            },
            Setup {
                min_cwnd: 0.0,
                ..Setup::default()
            },
            Setup {
                max_cwnd: f64::NAN,
                ..Setup::default()
            },
            Setup {
                initial_cwnd: f64::INFINITY,
                ..Setup::default()
            },
        ];
        for name in [
            "reno",
            "highspeed",
            "scalable",
            "vegas",
            "fast",
            "cubic",
            "bbr",
            "lion",
        ] {
            let spec: CcSpec = name.parse().unwrap();
            assert!(spec.build(&Setup::default()).is_ok());
            for setup in &bad {
                match spec.build(setup) {
                    Err(ParamError::Invalid { algorithm, reason }) => {
                        assert_eq!(algorithm, name);
                        assert!(reason.starts_with("setup: "), "{reason}");
                    }
                    other => panic!("{name} with {setup:?}: {other:?}"),
                }
            }
        }
    }
}
