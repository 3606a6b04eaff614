//! Connection configuration.

use crate::error::ConfigError;
use crate::packet::{DATA_HEADER_LEN, MAX_HANDSHAKE_DATAGRAM, MAX_PAYLOAD};
use crate::pmtu::MAX_MTU;
use crate::secure::Security;
use longhaul_cc::{CcSpec, Setup};
use std::time::Duration;

/// The receive window a connection advertises unless configured otherwise (64 MiB, a tuned
/// host's `tcp_rmem` maximum): more than a 1 Gb/s × 500 ms path holds.
pub const DEFAULT_RECV_WINDOW: u64 = 64 << 20;

/// Bytes of IPv4 and UDP header in front of every datagram on a real network.
pub const IP_UDP_OVERHEAD: usize = 28;

/// Everything a [`crate::Connection`] is created with. Both ends must agree on `synthetic`
/// (checked in the handshake) and on whether `security` is on (a secure end ignores a plain
/// peer's packets, and the other way round); every other field is local.
#[derive(Clone, Debug)]
pub struct Config {
    /// Payload bytes per full data packet. A data packet is `mss + DATA_HEADER_LEN` (29) bytes.
    pub mss: u32,
    /// The congestion controller and its parameters.
    pub cc: CcSpec,
    /// The controller's setup; its `mss` and `header_bytes` are overwritten with [`Config::mss`]
    /// and [`Config::data_overhead`].
    pub setup: Setup,
    /// Acknowledge at least every this many data packets (RFC 9000: 2).
    pub ack_every: u32,
    /// Longest a receiver holds back an ACK (RFC 9000's default `max_ack_delay`: 25 ms).
    pub max_ack_delay: Duration,
    /// Bytes the receiver buffers beyond what the application has read (flow control). Must be
    /// at least the bandwidth-delay product, or the receive window limits the transfer.
    pub recv_window: u64,
    /// Bytes of unacknowledged plus unsent data the sender buffers; `write` accepts no more.
    pub send_buffer: u64,
    /// Retransmission timeout before the first RTT sample (RFC 6298: 1 s).
    pub initial_rto: Duration,
    /// Smallest retransmission timeout (Linux `TCP_RTO_MIN`: 200 ms).
    pub min_rto: Duration,
    /// Largest retransmission timeout (RFC 6298 §2.5: at least 60 s).
    pub max_rto: Duration,
    /// Consecutive timeouts after which the connection gives up (Linux `tcp_retries2`: 15).
    pub max_rtos: u32,
    /// Close when nothing has been received for this long (`None`: never).
    pub idle_timeout: Option<Duration>,
    /// Data packets carry lengths but no payload bytes (for the simulator).
    pub synthetic: bool,
    /// Authentication and encryption ([`crate::secure`]); off by default.
    pub security: Security,
    /// The pacer lets at least this much of its rate leave in one burst when the controller
    /// does not set its own burst size (`max_burst`): Linux sizes a paced TCP burst the same way,
    /// about 1 ms of the pacing rate (`tcp_tso_autosize`, `sk_pacing_shift` 10). On a real host
    /// every burst costs a timer wake-up and a system call, and with bursts of
    /// [`crate::pacer::DEFAULT_BURST`] packets those cap the rate; [`HOST_BURST_TIME`] is for
    /// real hosts. Zero (the default, and the simulator's) keeps the burst at its packet count.
    pub burst_time: Duration,
    /// Path MTU discovery ([`crate::pmtu`]): the largest IP packet, bytes (IPv4 and UDP headers
    /// included, at most 65 535), to search up to with padded probes. Data packets start at
    /// `mss` (the base) and fill the largest size a probe confirmed. `None` (the default, and
    /// the simulator's), or a bound no larger than the base: every data packet carries at most
    /// `mss`, as without discovery. The driver must send with don't-fragment set and never
    /// fragment (crate documentation).
    pub pmtu_max: Option<u32>,
}

/// [`Config::burst_time`] for a transport on a real host: 1 ms of the pacing rate, Linux's.
pub const HOST_BURST_TIME: Duration = Duration::from_millis(1);

impl Config {
    /// Defaults with the given controller.
    pub fn new(cc: CcSpec) -> Config {
        Config {
            mss: 1448,
            cc,
            setup: Setup::default(),
            ack_every: 2,
            max_ack_delay: Duration::from_millis(25),
            recv_window: DEFAULT_RECV_WINDOW,
            send_buffer: 64 << 20,
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(60),
            max_rtos: 15,
            idle_timeout: Some(Duration::from_secs(120)),
            synthetic: false,
            security: Security::Off,
            burst_time: Duration::ZERO,
            pmtu_max: None,
        }
    }

    /// The largest `mss` whose plain data packets fit a link MTU of `mtu` bytes, after IPv4
    /// (20), UDP (8) and our data header (29): 1443 for a 1500-byte MTU, 8943 for 9000. With
    /// security on, use [`Config::mss_for`], which counts the seal too.
    pub fn mss_for_mtu(mtu: u32) -> u32 {
        mtu.saturating_sub(IP_UDP_OVERHEAD as u32 + DATA_HEADER_LEN as u32)
    }

    /// The largest `mss` whose data packets, as this configuration sends them, fit a link MTU of
    /// `mtu` bytes: [`Config::mss_for_mtu`] less the seal's 27 bytes when security is on (1416
    /// for a 1500-byte MTU).
    pub fn mss_for(&self, mtu: u32) -> u32 {
        mtu.saturating_sub(IP_UDP_OVERHEAD as u32 + self.data_overhead() as u32)
    }

    /// Bytes of a data packet on the wire besides its payload: the data header, and the seal's
    /// header and tag when security is on.
    pub fn data_overhead(&self) -> usize {
        DATA_HEADER_LEN + self.security.overhead()
    }

    /// The IP packet a full data packet of `mss` bytes fills: the base of the path MTU search
    /// (1500 for the `mss` of [`Config::mss_for`]`(1500)`).
    pub fn base_mtu(&self) -> u32 {
        self.mss + (IP_UDP_OVERHEAD + self.data_overhead()) as u32
    }

    /// The largest datagram this configuration produces (a full data packet, a path-MTU probe,
    /// or a handshake message when it is larger); `poll_transmit` needs a buffer at least this
    /// large to send everything it may.
    pub fn max_datagram_size(&self) -> usize {
        let mtu = self.pmtu_max.unwrap_or(0).max(self.base_mtu());
        let data = mtu as usize - IP_UDP_OVERHEAD;
        if self.security.is_on() {
            data.max(MAX_HANDSHAKE_DATAGRAM)
        } else {
            data
        }
    }

    /// Checks the settings: the MSS fits a datagram (with the seal's overhead when security is on),
    /// and windows, buffers, ACK frequency, retransmission limit and initial RTO are not below
    /// their minimums.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let max = MAX_PAYLOAD - self.security.overhead() as u32;
        if !(64..=max).contains(&self.mss) {
            return Err(ConfigError::Mss(self.mss));
        }
        if let Some(m) = self.pmtu_max.filter(|&m| m > MAX_MTU) {
            return Err(ConfigError::PathMtu(m));
        }
        let min = |name, min: u64, value: u64| {
            if value < min {
                Err(ConfigError::TooSmall { name, min, value })
            } else {
                Ok(())
            }
        };
        min("ack_every", 1, self.ack_every as u64)?;
        min("recv_window (bytes)", self.mss as u64, self.recv_window)?;
        min("send_buffer (bytes)", self.mss as u64, self.send_buffer)?;
        min("max_rtos", 1, self.max_rtos as u64)?;
        min(
            "initial_rto (µs)",
            1000,
            self.initial_rto.as_micros() as u64,
        )?;
        Ok(())
    }
}

impl Default for Config {
    /// Reno with its default parameters.
    fn default() -> Config {
        Config::new(CcSpec::default_for("reno").expect("reno is always registered"))
    }
}
