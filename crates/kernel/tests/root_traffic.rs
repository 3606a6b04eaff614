//! Root tests: real TCP transfers between network namespaces over veth pairs rate-limited
//! by TBF (100 Mb/s), one per congestion control, checking from the sender's TCP_INFO that the
//! socket runs the algorithm and behaves as the algorithm says.
//!
//! There is no netem, so the propagation RTT is tens of microseconds and every delay measured
//! is the flow's own queue in TBF; the assertions are chosen to hold at that small RTT.

mod common;

use common::netns::{median, Path};
use common::*;
use longhaul_emu::sys::steal::largest_stolen_during;
use longhaul_kernel::catalog::Algorithm;
use longhaul_kernel::native;
use std::sync::Mutex;
use std::time::Duration;

/// One transfer at a time: they share two CPU cores, and contention would show up as delay.
static SERIAL: Mutex<()> = Mutex::new(());

const RATE_BPS: u64 = 100_000_000;
const POLL: Duration = Duration::from_micros(200);

#[test]
fn scalable_sets_ssthresh_to_seven_eighths_of_cwnd_on_loss() {
    if !require_root("scalable_sets_ssthresh_to_seven_eighths_of_cwnd_on_loss") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mark = dmesg_mark();
    let cc = LoadedCc::load(Algorithm::Scalable, "lht_scalable", &[]);
    let path = Path::new(RATE_BPS, 300);
    let t = path.transfer(&cc.name, Duration::from_secs(5), POLL);
    assert_eq!(t.congestion_control, cc.name);
    assert_eq!(t.received, t.sent);
    let d = t.loss_decreases();
    let mut ratios: Vec<f64> = d
        .iter()
        .skip(1)
        .map(|&(c, s)| s as f64 / c as f64)
        .collect();
    eprintln!("scalable decreases (cwnd before, ssthresh after): {d:?}");
    assert!(ratios.len() >= 2, "too few losses after slow start: {d:?}");
    let m = median(&mut ratios);
    eprintln!(
        "scalable: median ssthresh/cwnd = {m:.4} over {} losses",
        ratios.len()
    );
    // 7/8 = 0.875 (Linux: cwnd − cwnd>>3). The cwnd sample precedes the loss by up to one poll
    // interval, during which Scalable grows by ≤ 1%, hence the tolerance.
    assert!((m - 0.875).abs() < 0.02, "median ratio {m}");
    let problems = dmesg_problems_since(mark);
    assert!(problems.is_empty(), "kernel log: {problems:#?}");
}

#[test]
fn highspeed_decrease_follows_its_table_at_a_large_window() {
    if !require_root("highspeed_decrease_follows_its_table_at_a_large_window") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mark = dmesg_mark();
    let cc = LoadedCc::load(Algorithm::HighSpeed, "lht_highspeed", &[]);
    let path = Path::new(RATE_BPS, 800);
    let t = path.transfer(&cc.name, Duration::from_secs(5), POLL);
    assert_eq!(t.congestion_control, cc.name);
    assert_eq!(t.received, t.sent);
    let d = t.loss_decreases();
    eprintln!("highspeed decreases (cwnd before, ssthresh after): {d:?}");
    let large: Vec<(u32, u32)> = d.into_iter().filter(|&(c, _)| c > 118).collect();
    assert!(!large.is_empty(), "no loss at a window above 118 packets");
    let mut errors = Vec::new();
    for &(c, s) in &large {
        let ratio = s as f64 / c as f64;
        let expected = native::hstcp_ssthresh(c) as f64 / c as f64;
        eprintln!(
            "highspeed: cwnd {c}: ssthresh/cwnd {ratio:.4}, table 1−b(w) = {expected:.4} \
             (Reno 0.5)"
        );
        errors.push((ratio - expected).abs());
    }
    let m = median(&mut errors);
    assert!(m < 0.02, "median |measured − table| = {m}");
    let problems = dmesg_problems_since(mark);
    assert!(problems.is_empty(), "kernel log: {problems:#?}");
}

#[test]
fn fast_keeps_about_alpha_packets_queued() {
    if !require_root("fast_keeps_about_alpha_packets_queued") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mark = dmesg_mark();
    let queue = 300;
    let mut delays = Vec::new();
    let mut packet_time = 0.0;
    // Two values of α on the same path: each flow's own backlog must follow its α. The law's
    // equilibrium is checked with the papers' estimator (the EWMA of every sample, no climb, no
    // pacing): the mean queueing delay measured here is what it steers to. FAST's default,
    // `period_min`, steers the smallest sample of each period to α instead, so on this
    // sub-millisecond path, where delayed ACKs and bursts add more than α to most samples, the
    // mean sits higher (α = 10: 3.7 ms against α·packet/rate = 1.2 ms).
    for alpha in [10u32, 40] {
        let cc = LoadedCc::load(
            Algorithm::Fast,
            "lht_fast",
            &[
                &format!("alpha={alpha}"),
                "period_min=0",
                "climb=0",
                "pace=0",
            ],
        );
        let path = Path::new(RATE_BPS, queue);
        let (t, stolen) =
            largest_stolen_during(|| path.transfer(&cc.name, Duration::from_secs(4), POLL));
        assert_eq!(t.congestion_control, cc.name);
        assert_eq!(t.received, t.sent);
        let q = t.median_queueing_delay_s(Duration::from_secs(2));
        packet_time = path.packet_time_s();
        let target = alpha as f64 * packet_time;
        let full = queue as f64 * packet_time;
        let mut cwnds: Vec<f64> = t
            .samples
            .iter()
            .filter(|(at, _)| *at >= Duration::from_secs(2))
            .map(|(_, i)| i.snd_cwnd as f64)
            .collect();
        let cwnd = median(&mut cwnds);
        eprintln!(
            "fast alpha={alpha}: queueing delay {:.3} ms, alpha·packet/rate {:.3} ms, full \
             buffer {:.3} ms, median cwnd {cwnd}, retransmits {}",
            q * 1e3,
            target * 1e3,
            full * 1e3,
            t.last.total_retrans
        );
        // Equilibrium: rate·q = α packets. At this tiny propagation delay the window is about
        // α too. Delayed ACKs and bursts blur RTT samples, so a factor of two either way —
        // where the host leaves the CPUs to the run: with the hypervisor stealing a share of
        // every CPU the sub-millisecond delays are the host's (α = 10: 2.7 ms against 1.2 in a
        // CI run with steal bursts, 1.4 on the rerun), so then they are reported.
        if stolen < 0.1 {
            assert!(
                q > 0.5 * target && q < 2.0 * target,
                "q {q} vs α target {target}"
            );
        } else {
            eprintln!(
                "{:.0} % of a CPU stolen: the α target is not asserted",
                stolen * 100.0
            );
        }
        assert!(q < 0.2 * full, "FAST filled the buffer: q {q}, full {full}");
        delays.push(q);
        drop(path);
        drop(cc);
    }
    // The backlog follows α: 30 more packets of α add 30 packets of queue. Compared as a
    // slope rather than a ratio, because the delayed-ACK and GSO-burst part of the measured
    // delay is a constant offset of a few packets that would dominate a ratio at α = 10
    // (idle-machine runs measured 10-14 packets there, against 40 ± 1 at α = 40).
    let slope = (delays[1] - delays[0]) / (30.0 * packet_time);
    eprintln!("fast: extra queue per extra packet of α = {slope:.2} (expected 1)");
    assert!(slope > 0.6 && slope < 1.4, "slope {slope}");
    let problems = dmesg_problems_since(mark);
    assert!(problems.is_empty(), "kernel log: {problems:#?}");
}

/// FAST with α above what the buffer holds cannot reach its equilibrium: it overflows the
/// queue, and on every loss it halves (ssthresh = cwnd/2, Reno's decrease). The ACKs of a
/// SACK recovery that only cumulatively acknowledge segments SACKed earlier carry no delivery
/// sample; the kernel then reports every byte of the connection as "in flight at send", which
/// must not feed the window law (it would double the window at the next update).
#[test]
fn fast_halves_on_loss_when_alpha_exceeds_the_buffer() {
    if !require_root("fast_halves_on_loss_when_alpha_exceeds_the_buffer") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mark = dmesg_mark();
    let (alpha, queue) = (60u32, 20u32);
    let cc = LoadedCc::load(
        Algorithm::Fast,
        "lht_fastloss",
        &[&format!("alpha={alpha}")],
    );
    let path = Path::new(RATE_BPS, queue);
    let t = path.transfer(&cc.name, Duration::from_secs(4), POLL);
    assert_eq!(t.congestion_control, cc.name);
    assert_eq!(t.received, t.sent);
    let d = t.loss_decreases();
    let mut cwnds: Vec<u32> = t.samples.iter().map(|(_, i)| i.snd_cwnd).collect();
    cwnds.sort_unstable();
    let max_cwnd = *cwnds.last().unwrap_or(&0);
    // The median, not a high percentile: on a busy host the kernel's skipped callbacks
    // (crates/kernel/README.md, "Skipped callbacks") come in bursts, and the window they leave
    // (a maximum of 1,623,994,570 packets in two runs of five) lasts until the program runs
    // again and repairs it; p99 measured 523 and 105 packets in two runs, 40 in the others.
    // They are printed; only a window the law keeps too large moves the median.
    let p99_cwnd = cwnds[cwnds.len() * 99 / 100];
    let median_cwnd = cwnds[cwnds.len() / 2];
    eprintln!(
        "fast alpha={alpha}, queue {queue}: decreases (cwnd before, ssthresh after) {d:?}, \
         cwnd p99 {p99_cwnd} max {max_cwnd}, retransmits {}",
        t.last.total_retrans
    );
    assert!(d.len() >= 2, "too few losses: {d:?}");
    let mut ratios: Vec<f64> = d.iter().map(|&(c, s)| s as f64 / c as f64).collect();
    let m = median(&mut ratios);
    // Halving of the window in the sample before the loss; that sample precedes the loss by
    // up to one poll interval, in which the window may still grow a little.
    assert!((m - 0.5).abs() < 0.1, "median ssthresh/cwnd {m}");
    // The path holds `queue` packets plus a few in flight: a window far beyond α + queue is
    // one the window law was fed a bogus "window at send" for.
    assert!(
        median_cwnd < 4 * (alpha + queue),
        "median window {median_cwnd} packets on a {queue}-packet path (p99 {p99_cwnd})"
    );
    let problems = dmesg_problems_since(mark);
    assert!(problems.is_empty(), "kernel log: {problems:#?}");
}

/// Two FAST flows through one bottleneck: each keeps its own α packets queued, so the queue
/// holds about 2α and the link is shared equally (FAST's proportional fairness with equal α).
#[test]
fn two_fast_flows_share_the_link_equally_with_two_alphas_queued() {
    if !require_root("two_fast_flows_share_the_link_equally_with_two_alphas_queued") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mark = dmesg_mark();
    let alpha = 20.0;
    // The papers' estimator: with FAST's defaults (`period_min` steering each period's
    // smallest sample) this sub-millisecond path shared less evenly (one run Jain 0.815,
    // 67.6 and 24.0 Mb/s, 54 packets queued against 2α = 40; another passed).
    let cc = LoadedCc::load(
        Algorithm::Fast,
        "lht_fast2",
        &["alpha=20", "period_min=0", "climb=0", "pace=0"],
    );
    let path = Path::new(RATE_BPS, 300);
    let d = Duration::from_secs(4);
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| path.transfer_on(5201, &cc.name, d, POLL));
        let b = s.spawn(|| path.transfer_on(5202, &cc.name, d, POLL));
        (a.join().unwrap(), b.join().unwrap())
    });
    for t in [&a, &b] {
        assert_eq!(t.congestion_control, cc.name);
        assert_eq!(t.received, t.sent);
    }
    // Rates over the second half, from each sender's bytes_acked.
    let rate = |t: &common::netns::Transfer| {
        let from = Duration::from_secs(2);
        let first = t.samples.iter().find(|(at, _)| *at >= from).unwrap();
        let last = t.samples.last().unwrap();
        (last.1.bytes_acked - first.1.bytes_acked) as f64 * 8.0 / (last.0 - first.0).as_secs_f64()
    };
    let (ra, rb) = (rate(&a), rate(&b));
    let jain = (ra + rb).powi(2) / (2.0 * (ra * ra + rb * rb));
    let q = (a.median_queueing_delay_s(Duration::from_secs(2))
        + b.median_queueing_delay_s(Duration::from_secs(2)))
        / 2.0;
    let backlog = q / path.packet_time_s();
    eprintln!(
        "two fast flows: {:.1} and {:.1} Mb/s (Jain {jain:.4}), queue {:.3} ms = {backlog:.1} \
         packets (2·alpha = {})",
        ra / 1e6,
        rb / 1e6,
        q * 1e3,
        2.0 * alpha
    );
    // Equal α gives equal rates only when both flows measure the same baseRTT. A flow that
    // never sees the queue empty overestimates its baseRTT and keeps more than α queued
    // (Low, Peterson & Wang, JACM 2002; the simulator's fast-equilibrium experiment shows the
    // same bias), so runs range from Jain 0.9999 to about 0.88 on this path. The assertion
    // allows that bias and still rejects a flow starving the other (Jain 0.5 at the limit).
    assert!(jain > 0.85, "unequal shares: {ra} vs {rb}");
    // Goodput ceiling is 1448/1514 of the rate; the sampling threads share two cores.
    assert!(
        ra + rb > 0.7 * RATE_BPS as f64,
        "link underused: {}",
        ra + rb
    );
    assert!(
        backlog > alpha && backlog < 4.0 * alpha,
        "queue {backlog} packets for two flows of alpha {alpha}"
    );
    let problems = dmesg_problems_since(mark);
    assert!(problems.is_empty(), "kernel log: {problems:#?}");
}

#[test]
fn vegas_keeps_its_backlog_between_alpha_and_beta() {
    if !require_root("vegas_keeps_its_backlog_between_alpha_and_beta") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mark = dmesg_mark();
    let (alpha, beta) = (10.0, 20.0);
    let cc = LoadedCc::load(Algorithm::Vegas, "lht_vegas", &["alpha=10", "beta=20"]);
    let path = Path::new(RATE_BPS, 300);
    let t = path.transfer(&cc.name, Duration::from_secs(4), POLL);
    assert_eq!(t.congestion_control, cc.name);
    assert_eq!(t.received, t.sent);
    let q = t.median_queueing_delay_s(Duration::from_secs(2));
    let backlog = q / path.packet_time_s();
    eprintln!(
        "vegas: queueing delay {:.3} ms = {backlog:.1} packets (alpha {alpha}, beta {beta}), \
         retransmits {}",
        q * 1e3,
        t.last.total_retrans
    );
    // Vegas holds between α and β packets *as it measures them*: its RTT samples, like the
    // TCP_INFO ones read here, carry delayed-ACK and GSO-burst delay that is not queue, so
    // (as for FAST above) a factor of two either way. Runs on this path measure 18–31 packets;
    // a loss-based flow fills the 300-packet buffer (`reno_fills_the_same_buffer`).
    assert!(
        backlog > 0.5 * alpha && backlog < 2.0 * beta,
        "backlog {backlog} packets"
    );
    let problems = dmesg_problems_since(mark);
    assert!(problems.is_empty(), "kernel log: {problems:#?}");
}

/// The baseline the FAST and Vegas numbers are read against: a loss-based flow on the same
/// path fills the TBF queue.
#[test]
fn reno_fills_the_same_buffer() {
    if !require_root("reno_fills_the_same_buffer") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let path = Path::new(RATE_BPS, 300);
    let t = path.transfer("reno", Duration::from_secs(3), POLL);
    let q = t.median_queueing_delay_s(Duration::from_secs(1));
    let full = 300.0 * path.packet_time_s();
    eprintln!(
        "reno: queueing delay {:.3} ms, full buffer {:.3} ms",
        q * 1e3,
        full * 1e3
    );
    assert!(q > 0.3 * full, "reno queue {q} vs buffer {full}");
}
