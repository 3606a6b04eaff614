//! Sender, router and receiver network namespaces joined by veth pairs, with a TBF rate limit
//! (and its queue) on the router's egress toward the receiver, torn down on drop. No netem: the path's own delay is tens of microseconds, so
//! every delay the tests measure is queueing in TBF.

use super::*;
use std::fs::File;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::thread;

pub struct Path {
    pub sender_ns: String,
    pub router_ns: String,
    pub receiver_ns: String,
    pub receiver_addr: Ipv4Addr,
    pub rate_bps: u64,
    pub queue_packets: u32,
}

/// Bytes one full-sized packet occupies in TBF (Ethernet header included): MSS 1448 with
/// timestamps + 32 B TCP/IP + 14 B Ethernet... as the kernel accounts skb->len on veth.
pub const WIRE_PACKET_BYTES: u64 = 1514;

static NEXT: AtomicU32 = AtomicU32::new(0);

fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .output()
        .expect("running ip (iproute2)");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Path {
    /// sender — router — receiver over two veth pairs, with a `rate_bps` TBF bottleneck of
    /// `queue_packets` on the router's egress toward the receiver.
    ///
    /// The bottleneck sits in a middle namespace on purpose: a qdisc on the sender's own device
    /// would be subject to TCP Small Queues, which lets one socket keep only about a
    /// millisecond of data in local queues, so a loss-based flow could never fill the buffer.
    /// Crossing a veth orphans the packet, so the router's queue is a real network queue.
    pub fn new(rate_bps: u64, queue_packets: u32) -> Path {
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let tag = format!("{}-{n}", std::process::id());
        let subnet = (n % 250) as u8;
        let path = Path {
            sender_ns: format!("lh-s-{tag}"),
            router_ns: format!("lh-m-{tag}"),
            receiver_ns: format!("lh-r-{tag}"),
            receiver_addr: Ipv4Addr::new(10, 201, subnet, 2),
            rate_bps,
            queue_packets,
        };
        // From here on, Drop removes whatever was created.
        for ns in [&path.sender_ns, &path.router_ns, &path.receiver_ns] {
            ip(&["netns", "add", ns]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        let (s, rs, rd, d) = (
            format!("lhs{n}"),
            format!("lhrs{n}"),
            format!("lhrd{n}"),
            format!("lhd{n}"),
        );
        ip(&[
            "link",
            "add",
            &s,
            "netns",
            &path.sender_ns,
            "type",
            "veth",
            "peer",
            "name",
            &rs,
            "netns",
            &path.router_ns,
        ]);
        ip(&[
            "link",
            "add",
            &rd,
            "netns",
            &path.router_ns,
            "type",
            "veth",
            "peer",
            "name",
            &d,
            "netns",
            &path.receiver_ns,
        ]);
        let left = format!("10.200.{subnet}");
        let right = format!("10.201.{subnet}");
        for (ns, dev, addr) in [
            (&path.sender_ns, &s, format!("{left}.1/24")),
            (&path.router_ns, &rs, format!("{left}.2/24")),
            (&path.router_ns, &rd, format!("{right}.1/24")),
            (&path.receiver_ns, &d, format!("{right}.2/24")),
        ] {
            ip(&["-n", ns, "addr", "add", &addr, "dev", dev]);
            ip(&["-n", ns, "link", "set", dev, "up"]);
        }
        ip(&[
            "-n",
            &path.sender_ns,
            "route",
            "add",
            "default",
            "via",
            &format!("{left}.2"),
        ]);
        ip(&[
            "-n",
            &path.receiver_ns,
            "route",
            "add",
            "default",
            "via",
            &format!("{right}.1"),
        ]);
        exec(
            &path.router_ns,
            &["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"],
        );
        // TBF: burst of 10 packets (also makes TBF segment GSO super-packets into MSS-sized
        // ones), queue limit in bytes for `queue_packets` full-sized packets.
        let burst = (10 * WIRE_PACKET_BYTES).to_string();
        let limit = (queue_packets as u64 * WIRE_PACKET_BYTES).to_string();
        let rate = format!("{rate_bps}bit");
        exec(
            &path.router_ns,
            &[
                "tc", "qdisc", "add", "dev", &rd, "root", "tbf", "rate", &rate, "burst", &burst,
                "limit", &limit,
            ],
        );
        path
    }

    /// Seconds one full-sized packet takes at the bottleneck rate.
    pub fn packet_time_s(&self) -> f64 {
        WIRE_PACKET_BYTES as f64 * 8.0 / self.rate_bps as f64
    }

    /// Sends bulk data from the sender namespace for `duration` with congestion control `cc`,
    /// sampling the sender's TCP_INFO every `every`. Returns the samples (time since start).
    pub fn transfer(&self, cc: &str, duration: Duration, every: Duration) -> Transfer {
        self.transfer_on(5201, cc, duration, every)
    }

    /// As [`Path::transfer`], to receiver port `port` (concurrent transfers use distinct ports).
    pub fn transfer_on(
        &self,
        port: u16,
        cc: &str,
        duration: Duration,
        every: Duration,
    ) -> Transfer {
        let addr = SocketAddrV4::new(self.receiver_addr, port);
        transfer_between(
            &self.sender_ns,
            &self.receiver_ns,
            addr,
            cc,
            duration,
            every,
        )
    }
}

/// Sends bulk data from namespace `sender_ns` to a receiver listening on `addr` in
/// `receiver_ns` for `duration` with congestion control `cc`, sampling the sender's TCP_INFO
/// every `every`. Returns the samples (time since the connection was established).
pub fn transfer_between(
    sender_ns: &str,
    receiver_ns: &str,
    addr: SocketAddrV4,
    cc: &str,
    duration: Duration,
    every: Duration,
) -> Transfer {
    let (ready_tx, ready_rx) = mpsc::channel();
    let rns = receiver_ns.to_string();
    let receiver = thread::spawn(move || {
        enter(&rns);
        let listener = TcpListener::bind(addr).expect("bind in receiver namespace");
        ready_tx.send(()).unwrap();
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = vec![0u8; 1 << 17];
        let mut total = 0u64;
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 {
                break;
            }
            total += n as u64;
        }
        total
    });
    ready_rx.recv().unwrap();
    let sns = sender_ns.to_string();
    let cc = cc.to_string();
    let sender = thread::spawn(move || {
        enter(&sns);
        let sock =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        set_congestion(sock.as_raw_fd(), &cc).unwrap_or_else(|e| panic!("{cc}: {e}"));
        sock.connect(&addr.into())
            .expect("connect to the receiver namespace");
        let mut stream: TcpStream = sock.into();
        let fd = stream.as_raw_fd();
        let congestion_control = get_congestion(fd);
        let start = Instant::now();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop2 = stop.clone();
        let sampler = thread::spawn(move || {
            let mut samples = Vec::new();
            while !stop2.load(Ordering::Relaxed) {
                samples.push((start.elapsed(), tcp_info(fd)));
                thread::sleep(every);
            }
            samples
        });
        let buf = vec![0xa5u8; 1 << 16];
        let mut sent = 0u64;
        while start.elapsed() < duration {
            stream.write_all(&buf).unwrap();
            sent += buf.len() as u64;
        }
        stop.store(true, Ordering::Relaxed);
        let samples = sampler.join().unwrap();
        let last = tcp_info(fd);
        stream.shutdown(std::net::Shutdown::Write).unwrap();
        (congestion_control, samples, sent, last)
    });
    let (congestion_control, samples, sent, last) = sender.join().unwrap();
    let received = receiver.join().unwrap();
    let t = Transfer {
        congestion_control,
        samples,
        sent,
        received,
        last,
    };
    t.assert_sane_windows();
    t
}

/// Moves the calling thread into network namespace `ns`.
fn enter(ns: &str) {
    let f = File::open(format!("/var/run/netns/{ns}")).expect("namespace file");
    nix::sched::setns(f, nix::sched::CloneFlags::CLONE_NEWNET).expect("setns");
}

fn exec(ns: &str, args: &[&str]) {
    let out = Command::new("ip")
        .args(["netns", "exec", ns])
        .args(args)
        .output()
        .expect("running ip netns exec");
    assert!(
        out.status.success(),
        "{}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Drop for Path {
    fn drop(&mut self) {
        // Deleting the namespaces deletes the veth pair and its qdisc with them.
        for ns in [&self.sender_ns, &self.router_ns, &self.receiver_ns] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

pub struct Transfer {
    /// TCP_CONGESTION of the sending socket.
    pub congestion_control: String,
    pub samples: Vec<(Duration, TcpInfo)>,
    pub sent: u64,
    pub received: u64,
    pub last: TcpInfo,
}

/// No window on these paths comes near this many packets (a 100 Mb/s path with a few
/// hundred packets of buffer holds about a thousand); a value above it is a corrupt window.
/// It is the programs' LH_CWND_MAX (bpf/include/lh_bpf.h), above which they repair.
const ABSURD_WINDOW: u32 = 1 << 24;
/// ssthresh before the first congestion signal (TCP_INFINITE_SSTHRESH).
const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;
/// Consecutive corrupt samples tolerated (5 ms at the tests' 200 µs polling): a callback the
/// kernel skipped leaves an uninitialised ssthresh or window until the next ACK whose
/// callbacks do run repairs it (`lh_repair_if_skipped`); skips come in bursts while the
/// softirq runs on top of the same thread (one lasted 1.2 ms), and a corruption that
/// outlives 5 ms is a bug of ours.
const MAX_TRANSIENT_SAMPLES: usize = 25;

fn corrupt(i: &TcpInfo) -> bool {
    let ssthresh_bad = i.snd_ssthresh > ABSURD_WINDOW && i.snd_ssthresh != INFINITE_SSTHRESH;
    i.snd_cwnd == 0 || i.snd_cwnd > ABSURD_WINDOW || ssthresh_bad
}

impl Transfer {
    /// Fails when a cwnd or ssthresh no congestion control could have produced on this path
    /// persists for more than MAX_TRANSIENT_SAMPLES samples, showing the samples up to it;
    /// prints the transient ones (repaired by the programs).
    pub fn assert_sane_windows(&self) {
        let mut run = 0;
        let mut transient = 0;
        for (k, (at, i)) in self.samples.iter().enumerate() {
            if !corrupt(i) {
                run = 0;
                continue;
            }
            run += 1;
            transient += 1;
            if run <= MAX_TRANSIENT_SAMPLES {
                continue;
            }
            let before: Vec<String> = self.samples[k.saturating_sub(12)..=k]
                .iter()
                .map(|(t, s)| {
                    format!(
                        "{:.4} s: cwnd {} ssthresh {} ca_state {} retrans {}",
                        t.as_secs_f64(),
                        s.snd_cwnd,
                        s.snd_ssthresh,
                        s.ca_state,
                        s.total_retrans
                    )
                })
                .collect();
            panic!(
                "{}: corrupt window for {run} samples, at {:.3} s: cwnd {} ssthresh {} \
                 (ca_state {}); samples up to it:\n{}",
                self.congestion_control,
                at.as_secs_f64(),
                i.snd_cwnd,
                i.snd_ssthresh,
                i.ca_state,
                before.join("\n")
            );
        }
        if transient > 0 {
            eprintln!(
                "{}: {transient} sample(s) showed a corrupt window that the next ACK repaired \
                 (a callback the kernel skipped)",
                self.congestion_control
            );
        }
    }

    /// Every multiplicative decrease seen: (cwnd in the sample before, new ssthresh).
    pub fn decreases(&self) -> Vec<(u32, u32)> {
        self.samples
            .windows(2)
            .filter(|w| {
                let (a, b) = (&w[0].1, &w[1].1);
                b.snd_ssthresh != a.snd_ssthresh && b.snd_ssthresh < a.snd_cwnd
            })
            .map(|w| (w[0].1.snd_cwnd, w[1].1.snd_ssthresh))
            .collect()
    }

    /// Goodput from the sender's bytes_acked between the first sample at or after `from` and
    /// the last sample, bits per second.
    pub fn goodput_bps(&self, from: Duration) -> f64 {
        let first = self
            .samples
            .iter()
            .find(|(at, _)| *at >= from)
            .expect("samples after `from`");
        let last = self.samples.last().expect("samples");
        (last.1.bytes_acked - first.1.bytes_acked) as f64 * 8.0 / (last.0 - first.0).as_secs_f64()
    }

    /// Median of the sender's smoothed RTT over the samples after `from`, seconds.
    pub fn median_srtt_s(&self, from: Duration) -> f64 {
        let mut v: Vec<f64> = self
            .samples
            .iter()
            .filter(|(t, i)| *t >= from && i.rtt_us > 0)
            .map(|(_, i)| i.rtt_us as f64 * 1e-6)
            .collect();
        median(&mut v)
    }

    /// The decreases a loss started: (cwnd in the last sample in Open or Disorder, the
    /// ssthresh of the reduction that follows: the value most samples of the CWR, Recovery or
    /// Loss episode show; the kernel sets ssthresh on entering it). Unlike
    /// [`Transfer::decreases`] this leaves out the ssthresh changes inside a recovery (an undo
    /// restoring the threshold, a timeout during recovery), whose "cwnd before" is not the
    /// window the loss hit, and a transient value left by a skipped callback before the next
    /// ACK repaired it; and it keeps a cut to the same ssthresh as the previous one (a flow in
    /// a steady loss cycle hits the same window every time).
    pub fn loss_decreases(&self) -> Vec<(u32, u32)> {
        self.loss_episodes()
            .into_iter()
            .map(|e| (e.cwnd_before, e.ssthresh))
            .collect()
    }

    /// [`Transfer::loss_decreases`] with, for each, how long before the first sample of the
    /// reduction the "cwnd before" was taken: the window can have grown in that time, and on
    /// a busy host the sampler sleeps longer than its period.
    pub fn loss_episodes(&self) -> Vec<LossEpisode> {
        let s = &self.samples;
        let mut out = Vec::new();
        let mut k = 1;
        while k < s.len() {
            if !(s[k - 1].1.ca_state <= 1 && s[k].1.ca_state >= 2) {
                k += 1;
                continue;
            }
            let (before, sampled_at) = (s[k - 1].1.snd_cwnd, s[k - 1].0);
            let gap = s[k].0.saturating_sub(sampled_at);
            let mut values = Vec::new();
            while k < s.len() && s[k].1.ca_state >= 2 {
                values.push(s[k].1.snd_ssthresh);
                k += 1;
            }
            out.push(LossEpisode {
                cwnd_before: before,
                ssthresh: mode(&values),
                sample_gap: gap,
            });
        }
        out
    }

    /// Median queueing delay (srtt − min_rtt) over the samples after `from`, seconds.
    pub fn median_queueing_delay_s(&self, from: Duration) -> f64 {
        let mut q: Vec<f64> = self
            .samples
            .iter()
            .filter(|(t, i)| *t >= from && i.rtt_us > 0)
            .map(|(_, i)| i.rtt_us.saturating_sub(i.min_rtt_us) as f64 * 1e-6)
            .collect();
        median(&mut q)
    }
}

/// One reduction a loss started, as the sender's samples show it.
#[derive(Debug, Clone, Copy)]
pub struct LossEpisode {
    /// cwnd in the last sample in Open or Disorder.
    pub cwnd_before: u32,
    /// The ssthresh most samples of the reduction show.
    pub ssthresh: u32,
    /// Time from that last sample to the first one in the reduction: the loss happened
    /// within it.
    pub sample_gap: Duration,
}

/// The most frequent value (the first seen among equals).
fn mode(values: &[u32]) -> u32 {
    let mut best = (0, values[0]);
    for &v in values {
        let n = values.iter().filter(|&&x| x == v).count();
        if n > best.0 {
            best = (n, v);
        }
    }
    best.1
}

pub fn median(v: &mut [f64]) -> f64 {
    assert!(!v.is_empty(), "no samples");
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}
