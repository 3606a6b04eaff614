//! The C arithmetic headers, compiled natively, against hand-computed values from the sources'
//! constants (Linux tcp_cong.c, tcp_scalable.c, tcp_highspeed.c, tcp_vegas.c; the FAST papers).

use longhaul_kernel::native::{self, *};

fn window(cwnd: u32, ssthresh: u32) -> Window {
    Window {
        cwnd,
        cwnd_cnt: 0,
        ssthresh,
        clamp: 1_000_000,
    }
}

#[test]
fn slow_start_stops_at_ssthresh_and_returns_the_leftover() {
    let mut w = window(10, 15);
    assert_eq!(native::slow_start(&mut w, 8), 3);
    assert_eq!(w.cwnd, 15);
    // Reno: the 3 leftover packets go into the credit counter of step 15.
    let mut w = window(10, 15);
    native::reno_cong_avoid(&mut w, 8);
    assert_eq!((w.cwnd, w.cwnd_cnt), (15, 3));
}

#[test]
fn additive_increase_carries_credit_exactly() {
    let mut w = window(20, 10);
    native::cong_avoid_ai(&mut w, 20, 45); // 45 / 20 = 2 packets, 5 left
    assert_eq!((w.cwnd, w.cwnd_cnt), (22, 5));
    // Credit earned at a larger step: one packet, counter reset, then this ACK's 3.
    let mut w = window(50, 10);
    w.cwnd_cnt = 30;
    native::cong_avoid_ai(&mut w, 20, 3);
    assert_eq!((w.cwnd, w.cwnd_cnt), (51, 3));
}

#[test]
fn scalable_linux_and_kelly_rules() {
    let linux = ScalableParams::from_raw(&[100, 128, 100, 0]);
    let kelly = ScalableParams::from_raw(&[100, 128, 16, 1]);
    // Linux: cwnd − cwnd>>3 at every window, floor 2.
    assert_eq!(native::scalable_ssthresh(100, &linux), 88);
    assert_eq!(native::scalable_ssthresh(16, &linux), 14);
    assert_eq!(native::scalable_ssthresh(2, &linux), 2);
    // Kelly: halve at or below the legacy window of 16, 7/8 above.
    assert_eq!(native::scalable_ssthresh(16, &kelly), 8);
    assert_eq!(native::scalable_ssthresh(17, &kelly), 15);
    // Above 100 packets: one packet per 100 acknowledged (a = 0.01).
    let mut w = window(500, 400);
    native::scalable_cong_avoid(&mut w, &linux, 250);
    assert_eq!((w.cwnd, w.cwnd_cnt), (502, 50));
    // Below: Reno, one packet per cwnd acknowledged.
    let mut w = window(50, 40);
    native::scalable_cong_avoid(&mut w, &linux, 50);
    assert_eq!((w.cwnd, w.cwnd_cnt), (51, 0));
    // Kelly between 16 and 100 uses 0.01 already.
    let mut w = window(50, 40);
    native::scalable_cong_avoid(&mut w, &kelly, 50);
    assert_eq!((w.cwnd, w.cwnd_cnt), (50, 50));
}

/// Upper window bounds of the 72 rows of RFC 3649 Appendix B as Linux tabulates them.
const HSTCP_BOUNDS: [u32; 72] = [
    38, 118, 221, 347, 495, 663, 851, 1058, 1284, 1529, 1793, 2076, 2378, 2699, 3039, 3399, 3778,
    4177, 4596, 5036, 5497, 5979, 6483, 7009, 7558, 8130, 8726, 9346, 9991, 10661, 11358, 12082,
    12834, 13614, 14424, 15265, 16137, 17042, 17981, 18955, 19965, 21013, 22101, 23230, 24402,
    25618, 26881, 28193, 29557, 30975, 32450, 33986, 35586, 37253, 38992, 40808, 42707, 44694,
    46776, 48961, 51258, 53677, 56230, 58932, 61799, 64851, 68113, 71617, 75401, 79517, 84035,
    89053,
];

#[test]
fn highspeed_row_search_equals_the_linux_walk_for_every_window() {
    // Linux walks ai up while cwnd > vals[ai].cwnd (ai < 71): the first row whose bound is at
    // least cwnd. The fixed-depth binary search must agree for every window.
    let mut ai = 0usize;
    for cwnd in 1..=100_000u32 {
        while ai < 71 && cwnd > HSTCP_BOUNDS[ai] {
            ai += 1;
        }
        assert_eq!(native::hstcp_row(cwnd), ai as u32, "cwnd {cwnd}");
    }
    assert_eq!(native::hstcp_row(u32::MAX), 71);
    assert_eq!(native::hstcp_row(0), 0);
}

#[test]
fn highspeed_decrease_and_increase_from_the_table() {
    // Row 0 (w ≤ 38): halve. 1000 is row 7, md 83: 1000 − 83000>>8 = 1000 − 324.
    assert_eq!(native::hstcp_ssthresh(38), 19);
    assert_eq!(native::hstcp_ssthresh(1000), 676);
    // 84035 is row 70, md 25: 84035 − (84035·25)>>8 = 84035 − 8206.
    assert_eq!(native::hstcp_ssthresh(84035), 75829);
    // Row 7 adds a = 8 per cwnd ACKs: 125 ACKs at cwnd 1000 give exactly one packet,
    // whatever each ACK covers (Linux ignores `acked`).
    let linux = HstcpParams::from_raw(&[1]);
    let mut w = window(1000, 500);
    for i in 0..125 {
        assert_eq!(native::hstcp_cong_avoid(&mut w, &linux, 2), 7);
        assert_eq!(w.cwnd, if i < 124 { 1000 } else { 1001 });
    }
    assert_eq!(w.cwnd_cnt, 0);
    // RFC mode counts every acknowledged packet: 125 ACKs of 2 bring 125·2·8 = 2000 credits:
    // one packet at 1000, then 1000 of the 1001 the next one needs.
    let rfc = HstcpParams::from_raw(&[0]);
    let mut w = window(1000, 500);
    for _ in 0..125 {
        native::hstcp_cong_avoid(&mut w, &rfc, 2);
    }
    assert_eq!((w.cwnd, w.cwnd_cnt), (1001, 1000));
    // And carries a slow-start leftover: 10 → ssthresh 12 with 5 acked leaves 3 for row 0.
    let mut w = window(10, 12);
    native::hstcp_cong_avoid(&mut w, &rfc, 5);
    assert_eq!((w.cwnd, w.cwnd_cnt), (12, 3));
    let mut w = window(10, 12);
    native::hstcp_cong_avoid(&mut w, &linux, 5);
    assert_eq!((w.cwnd, w.cwnd_cnt), (12, 0));
}

fn vegas_after_round(linux_compat: u32, cwnd: u32, ssthresh: u32) -> Window {
    let p = VegasParams::from_raw(&[2, 4, 1, linux_compat]);
    let mut v = VegasState::default();
    native::vegas_init(&mut v, 100);
    // Base RTT 100 µs from an earlier round, this round's minimum 150 µs (3 samples; the
    // programs add 1 µs to every sample).
    v.base_rtt = 100;
    for rtt in [149, 160, 170] {
        native::vegas_rtt_sample(&mut v, rtt);
    }
    assert_eq!((v.min_rtt, v.cnt_rtt), (150, 3));
    let mut w = window(cwnd, ssthresh);
    native::vegas_cong_avoid(&mut v, &mut w, &p, 101, 200, 1, true);
    assert_eq!(
        (v.beg_snd_nxt, v.cnt_rtt),
        (200, 0),
        "a new round starts at snd_nxt"
    );
    w
}

#[test]
fn vegas_backlog_uses_rtt_by_default_and_base_rtt_in_linux_mode() {
    // cwnd 30, RTT 150, base 100. Paper: 30·50/150 = 10 > β = 4 → −1.
    // tcp_current_ssthresh then lifts ssthresh to max(20, 29>>1 + 29>>2 = 21).
    let w = vegas_after_round(0, 30, 20);
    assert_eq!((w.cwnd, w.ssthresh), (29, 21));
    // cwnd 8: paper 8·50/150 = 2 (integer), inside [α, β] → unchanged; Linux 8·50/100 = 4,
    // also inside; cwnd 9: paper 3 (hold), Linux 4.5 → 4 (hold); cwnd 10: paper 3, Linux 5 > β.
    assert_eq!(vegas_after_round(0, 10, 5).cwnd, 10);
    assert_eq!(vegas_after_round(1, 10, 5).cwnd, 9);
    // cwnd 5: paper 5·50/150 = 1 < α → +1.
    assert_eq!(vegas_after_round(0, 5, 2).cwnd, 6);
    // Slow start with backlog above γ = 1: cwnd → min(cwnd, cwnd·base/rtt + 1) = 20·100/150+1.
    let w = vegas_after_round(0, 20, 1000);
    assert_eq!(w.cwnd, 14);
    assert_eq!(w.ssthresh, 14);
}

fn fast_with(base_us: u32, avg_us: u64) -> FastState {
    FastState {
        base_rtt: base_us,
        avg_rtt_q8: avg_us << 8,
        ..FastState::default()
    }
}

/// α, γ = 0.5, 20 ms, 0.75 ms, η cap 1/4, 2w cap, every other RTT, pacing, RTO window 2, no
/// dead band.
fn fast_params(alpha: u32, gamma_q10: u32) -> FastParams {
    FastParams::from_raw(&[alpha, gamma_q10, 20_000, 750, 4, 1, 1, 1, 2, 0])
}

const Q: u64 = 1024;

#[test]
fn fast_window_law_in_fixed_point() {
    let p = fast_params(20, 512);
    // (1−γ)w + γ(base/avg·w_old + α) = 0.5·100 + 0.5·(100·100/200 + 20) = 50 + 35 = 85.
    assert_eq!(
        native::fast_target_q10(&fast_with(100, 200), &p, 100 * Q, 100 * Q),
        85 * Q
    );
    // The fixed point: base/avg = 1000/1200, w = 120: 60 + 0.5·(100 + 20) = 120 exactly.
    assert_eq!(
        native::fast_target_q10(&fast_with(1000, 1200), &p, 120 * Q, 120 * Q),
        120 * Q
    );
    // γ·α/2 fractions survive: γ = 0.5, α = 1, no queue: 0.5·10 + 0.5·(10 + 1) = 10.5.
    let p1 = fast_params(1, 512);
    assert_eq!(
        native::fast_target_q10(&fast_with(100, 100), &p1, 10 * Q, 10 * Q),
        10 * Q + 512
    );
    // Never more than doubling with the paper's cap: γ = 1, α = 100 from w = 10 would be 110.
    let pg = fast_params(100, 1024);
    assert_eq!(
        native::fast_target_q10(&fast_with(100, 100), &pg, 10 * Q, 10 * Q),
        20 * Q
    );
    let mut no_cap = pg;
    no_cap.min2w_cap = 0;
    assert_eq!(
        native::fast_target_q10(&fast_with(100, 100), &no_cap, 10 * Q, 10 * Q),
        110 * Q
    );
    // Never below 2 packets.
    assert_eq!(
        native::fast_target_q10(&fast_with(100, 100_000), &p1, 2 * Q, 2 * Q),
        2 * Q
    );
}

#[test]
fn fast_dead_band_holds_the_window_while_the_backlog_is_between_alpha_and_beta() {
    // α = 100, β = 300, base 50 ms, avg 100 ms: the backlog is w_old·(1 − 1/2) = w_old/2 (the
    // reference's `dead_band_holds_the_window...` test, same numbers).
    let mut p = fast_params(100, 512);
    p.beta = 300;
    let f = fast_with(50_000, 100_000);
    // w_old 400: backlog 200 in [100, 300): the window stays at 150.
    assert_eq!(native::fast_target_q10(&f, &p, 150 * Q, 400 * Q), 150 * Q);
    // The band's edges: backlog exactly α (w_old 200) holds, exactly β (w_old 600) moves:
    // 0.5·150 + 0.5·(600/2 + 100) = 275.
    assert_eq!(native::fast_target_q10(&f, &p, 150 * Q, 200 * Q), 150 * Q);
    assert_eq!(native::fast_target_q10(&f, &p, 150 * Q, 600 * Q), 275 * Q);
    // Backlog 50 < α (w_old 100): the law, 0.5·150 + 0.5·(100/2 + 100) = 150.
    assert_eq!(native::fast_target_q10(&f, &p, 150 * Q, 100 * Q), 150 * Q);
    // Backlog 50 from w_old 100 with w = 60: the law raises it, 0.5·60 + 0.5·150 = 105.
    assert_eq!(native::fast_target_q10(&f, &p, 60 * Q, 100 * Q), 105 * Q);
    // Backlog 400 ≥ β (w_old 800): the law lowers w = 1000 to 0.5·1000 + 0.5·500 = 750.
    assert_eq!(native::fast_target_q10(&f, &p, 1000 * Q, 800 * Q), 750 * Q);
    // β = 0 and β = α mean no band: backlog 200 moves the window, 0.5·150 + 0.5·300 = 225.
    for beta in [0, 100] {
        p.beta = beta;
        assert_eq!(native::fast_target_q10(&f, &p, 150 * Q, 400 * Q), 225 * Q);
    }
    // A band below α is ignored (the loader refuses it): β = 50 behaves as β = α.
    p.beta = 50;
    assert_eq!(native::fast_target_q10(&f, &p, 150 * Q, 400 * Q), 225 * Q);
}

#[test]
fn fast_rtt_average_uses_eta_min_3_over_w_and_the_cap() {
    let p = fast_params(20, 512);
    let mut f = FastState::default();
    native::fast_init(&mut f, 0);
    native::fast_rtt_sample(&mut f, &p, 999, 10, 1, 0); // first sample: 1000 µs (+1)
    assert_eq!((f.base_rtt, f.avg_rtt_q8), (1000, 1000 << 8));
    native::fast_rtt_sample(&mut f, &p, 1999, 6, 1, 0); // η = 1/4: 1000 + 1000/4
    assert_eq!(f.avg_rtt_q8, 1250 << 8);
    let mut g = fast_with(1000, 1000);
    native::fast_rtt_sample(&mut g, &p, 1999, 30, 1, 0); // η = 3/30: 1000 + 100
    assert_eq!(g.avg_rtt_q8, 1100 << 8);
    native::fast_rtt_sample(&mut g, &p, 999, 30, 1, 0); // down: 1100 − 100·0.1 = 1090
    assert_eq!(g.avg_rtt_q8, 1090 << 8);
    native::fast_rtt_sample(&mut g, &p, -1, 30, 1, 0); // no sample: unchanged
    assert_eq!(g.avg_rtt_q8, 1090 << 8);
    // ns-2's cap 1/256 at 30 packets in flight: 3/30 > 1/256, so 1/256.
    let mut ns2 = p;
    ns2.eta_cap_den = 256;
    let mut h = fast_with(1000, 1000);
    native::fast_rtt_sample(&mut h, &ns2, 1255, 30, 1, 0); // 1000 + 256/256
    assert_eq!(h.avg_rtt_q8, 1001 << 8);
    // An ACK for two packets weighs as two samples: η = 3/30 twice, 1000 + 100 = 1100, then
    // 1100 + (2000 − 1100)/10 = 1190 µs.
    let mut k = fast_with(1000, 1000);
    native::fast_rtt_sample(&mut k, &p, 1999, 30, 2, 0);
    assert_eq!(k.avg_rtt_q8, 1190 << 8);
}

#[test]
fn fast_doubles_without_queue_and_updates_every_other_round_after_the_period() {
    let mut p = fast_params(20, 512);
    p.update_period_us = 10_000;
    let mut f = FastState::default();
    native::fast_init(&mut f, 0);
    let mut w = window(10, 0x7fff_ffff);
    // ACK of packet 0 ends round 0 (update round), sample 1000 µs: MI, no queue, +acked.
    native::fast_ack_begin(&mut f, 1, 10);
    native::fast_rtt_sample(&mut f, &p, 999, 10, 1, 0);
    native::fast_cong_avoid(&mut f, &mut w, &p, 1_000, 10, true);
    assert_eq!((w.cwnd, f.update_round), (20, 1));
    // A 1 ms queue appears (avg 2000, base 1000): MI ends; the period since the MI ACK has not
    // passed, so no update yet.
    f.avg_rtt_q8 = 2000 << 8;
    native::fast_ack_begin(&mut f, 5, 30);
    native::fast_cong_avoid(&mut f, &mut w, &p, 2_000, 1, true);
    assert_eq!((w.cwnd, f.updates), (20, 0));
    // Next round (not an update round) after the period: still nothing.
    native::fast_ack_begin(&mut f, 11, 40);
    native::fast_cong_avoid(&mut f, &mut w, &p, 20_000, 1, true);
    assert_eq!((f.update_round, f.updates), (0, 0));
    // Update round, period over: w_old from the ACK (20 packets of 1448 B in flight at send):
    // 0.5·20 + 0.5·(20·1000/2000 + 20) = 10 + 15 = 25. Base RTT 1 ms < 4 ms: no pacing.
    native::fast_ack_begin(&mut f, 41, 60);
    native::fast_window_at_send(&mut f, 20 * 1448, 1448);
    native::fast_cong_avoid(&mut f, &mut w, &p, 30_000, 1, true);
    assert_eq!((w.cwnd, f.cwnd_frac_q10, f.updates), (25, 0, 1));
    // An odd window halves with the half packet kept: 25 → 12 + 0.5.
    assert_eq!(native::fast_ssthresh(&mut f, 25), 12);
    assert_eq!(f.cwnd_frac_q10, 512);
}

#[test]
fn fast_paces_an_increase_over_one_update_period() {
    // Base 10 ms, avg 20 ms (q = 10 ms), 20 ACKs last round, period 20 ms: 20·20/20 = 20 ACKs
    // per period. w = 100, w_old = 100, α = 200, γ = 0.5: target 0.5·100 + 0.5·(50 + 200)
    // = 175, so 75 packets are released at 75/20 = 3.75 per ACK.
    let p = fast_params(200, 512);
    let mut f = fast_with(10_000, 20_000);
    f.update_round = 1;
    f.acks_last_round = 20;
    let mut w = window(100, 50);
    native::fast_window_at_send(&mut f, 100 * 1448, 1448);
    native::fast_cong_avoid(&mut f, &mut w, &p, 100_000, 1, true);
    assert_eq!(f.updates, 1);
    assert_eq!(f.step_q10, 3840); // 3.75 packets
    assert_eq!(f.window(&w), 103.75);
    for _ in 0..19 {
        native::fast_cong_avoid(&mut f, &mut w, &p, 100_100, 1, true);
    }
    assert_eq!((w.cwnd, f.cwnd_frac_q10, f.pending_q10), (175, 0, 0));
}
