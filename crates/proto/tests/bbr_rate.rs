//! BBR's steady-state rate through the transport: cruising at gain 1 it must deliver
//! `1 − pacing_margin` (99 %) of the bottleneck's payload capacity, as Linux's BBR does by
//! converting its payload-byte bandwidth to packet bytes (`bbr_rate_bytes_per_sec`).

mod common;

use common::{run, LinkParams, Workload};
use longhaul_cc::CcSpec;
use longhaul_proto::{Config, Time};
use std::time::Duration;

fn config() -> Config {
    Config {
        synthetic: true,
        recv_window: 8 << 20,
        send_buffer: 8 << 20,
        ..Config::new(CcSpec::default_for("bbr").unwrap())
    }
}

/// When a synthetic transfer of `bytes` completes over a clean 100 Mb/s, 40 ms path.
fn finish(bytes: u64) -> (f64, f64) {
    let link = LinkParams::clean(100e6, Duration::from_millis(20));
    let cfg = config();
    let payload_share = cfg.mss as f64 / (cfg.mss as usize + cfg.data_overhead()) as f64;
    let out = run(
        cfg.clone(),
        cfg,
        link,
        link,
        Workload::Synthetic(bytes),
        3,
        Time::from_millis(60_000),
    );
    assert_eq!(out.synthetic_read, bytes);
    (out.finished_at.as_secs_f64(), 100e6 / 8.0 * payload_share)
}

#[test]
fn steady_state_bbr_delivers_99_percent_of_payload_capacity() {
    // Two transfers differ only in the bytes sent after start-up: their difference in
    // completion time is the steady state alone (before the 10-s PROBE_RTT).
    let (t1, capacity) = finish(30_000_000);
    let (t2, _) = finish(90_000_000);
    let rate = 60_000_000.0 / (t2 - t1);
    let share = rate / capacity;
    eprintln!(
        "BBR steady state: {:.2} % of payload capacity",
        100.0 * share
    );
    assert!(
        (0.985..=1.0).contains(&share),
        "steady state {:.1} % of payload capacity ({rate:.0} B/s; finished at {t1:.3} s and {t2:.3} s)",
        100.0 * share
    );
}
