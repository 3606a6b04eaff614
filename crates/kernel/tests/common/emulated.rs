//! Two network namespaces joined by the longhaul emulator (`longhaul-emu`): a long fat path with
//! a constant rate, a one-way propagation delay in each direction, and a drop-tail bottleneck
//! queue on the data direction. The emulator forwards in user space between TUN devices, so
//! every packet is MTU-sized (no GSO on TUN) and the queue is a real network queue the sender's
//! TCP Small Queues cannot see. Everything (namespaces, TUN devices, forwarding threads) is
//! removed when the path is dropped, also when a test panics.

use super::netns::{transfer_between, Transfer};
use longhaul_emu::config::{LinkConfig, RateConfig};
use longhaul_emu::emulator::Side;
use longhaul_emu::model::loss::LossConfig;
use longhaul_emu::{Emulator, Mode, Options, Summary};
use std::net::SocketAddrV4;
use std::process::Command;
use std::time::Duration;

/// IP bytes of one full-sized packet (MTU 1500: MSS 1448 + 12 B timestamps + 40 B headers). The
/// emulator serialises IP bytes (no link overhead configured).
pub const PACKET_BYTES: u64 = 1500;

pub struct EmulatedPath {
    emu: Option<Emulator>,
    pub rate_bps: u64,
    pub rtt: Duration,
    pub queue_packets: u32,
}

impl EmulatedPath {
    /// `rate_bps` from a to b, `rtt` split equally between the two directions, a drop-tail queue
    /// of `queue_packets` in front of the a→b bottleneck, and Bernoulli loss `loss` on a→b.
    /// The ACK direction has the delay only.
    pub fn new(rate_bps: u64, rtt: Duration, queue_packets: u32, loss: f64) -> EmulatedPath {
        Self::with_log(rate_bps, rtt, queue_packets, loss, None)
    }

    /// As [`EmulatedPath::new`], writing the emulator's per-packet event log to `log`
    /// (`# t_ns dir event bytes queue_packets queue_bytes detail`, one `enqueue` or `drop`
    /// line per wire packet as it reaches the bottleneck queue).
    pub fn with_log(
        rate_bps: u64,
        rtt: Duration,
        queue_packets: u32,
        loss: f64,
        log: Option<std::path::PathBuf>,
    ) -> EmulatedPath {
        let mut link = LinkConfig::default();
        let one_way = rtt.as_nanos() as u64 / 2;
        link.a_to_b.rate = RateConfig::Constant { bps: rate_bps };
        link.a_to_b.queue.packets = Some(queue_packets.into());
        if loss > 0.0 {
            link.a_to_b.loss = LossConfig::Bernoulli { p: loss };
        }
        link.a_to_b.delay.delay_ns = one_way;
        link.b_to_a.delay.delay_ns = one_way;
        let mut options = Options::new(link);
        options.event_log = log;
        let emu = Emulator::start(Mode::Pair, options)
            .unwrap_or_else(|e| panic!("starting the emulated path: {e}"));
        let path = EmulatedPath {
            emu: Some(emu),
            rate_bps,
            rtt,
            queue_packets,
        };
        // Socket buffers large enough for windows of several BDP (the default 4 MB send buffer
        // caps a window at about 1400 packets); tcp_[rw]mem are per namespace.
        for side in [Side::A, Side::B] {
            for key in ["net.ipv4.tcp_wmem", "net.ipv4.tcp_rmem"] {
                let ns = path.namespace(side);
                let out = Command::new("ip")
                    .args(["netns", "exec", &ns, "sysctl", "-q", "-w"])
                    .arg(format!("{key}=4096 131072 67108864"))
                    .output()
                    .expect("running ip netns exec sysctl");
                assert!(
                    out.status.success(),
                    "sysctl {key} in {ns}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
        // Let the forwarders calibrate their timers before traffic starts.
        std::thread::sleep(Duration::from_millis(50));
        path
    }

    fn emu(&self) -> &Emulator {
        self.emu.as_ref().expect("running")
    }

    fn namespace(&self, side: Side) -> String {
        self.emu()
            .namespace(side)
            .expect("a pair has two namespaces")
            .to_string()
    }

    /// Seconds one full-sized packet takes at the bottleneck rate.
    pub fn packet_time_s(&self) -> f64 {
        PACKET_BYTES as f64 * 8.0 / self.rate_bps as f64
    }

    /// The bandwidth-delay product in full-sized packets.
    pub fn bdp_packets(&self) -> f64 {
        self.rtt.as_secs_f64() / self.packet_time_s()
    }

    /// The most TCP payload the path can carry, bits per second (MSS / packet of the rate).
    pub fn goodput_ceiling_bps(&self) -> f64 {
        self.rate_bps as f64 * 1448.0 / PACKET_BYTES as f64
    }

    /// Bulk transfer from a to b for `duration` with congestion control `cc`, sampling the
    /// sender's TCP_INFO every `every`.
    pub fn transfer(&self, cc: &str, duration: Duration, every: Duration) -> Transfer {
        let addr = SocketAddrV4::new(self.emu().address(Side::B), 5201);
        transfer_between(
            &self.namespace(Side::A),
            &self.namespace(Side::B),
            addr,
            cc,
            duration,
            every,
        )
    }

    /// Stops the emulator and returns its summary (drops by reason, queueing delay, rate).
    pub fn stop(mut self) -> Summary {
        let emu = self.emu.take().expect("running");
        emu.stop()
            .unwrap_or_else(|e| panic!("stopping the emulator: {e}"))
    }
}
