//! The series measurements on hand-made windows with known answers.

use longhaul_reproduce::measure::{climb_time, jain, mean_after, median, recovery_times};

/// A Scalable-like sawtooth sampled every 0.1 s: the window grows 1 % per 0.2 s RTT from 875 to
/// 1000 (13.4 RTTs = 2.68 s), then drops 12.5 %.
fn scalable_sawtooth(cycles: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut t, mut w) = (Vec::new(), Vec::new());
    let mut now = 0.0;
    for _ in 0..cycles {
        let mut win: f64 = 875.0;
        while win < 1000.0 {
            t.push(now);
            w.push(win);
            win *= 1.01f64.powf(0.5); // half an RTT per 0.1 s sample
            now += 0.1;
        }
        t.push(now);
        w.push(1000.0);
        now += 0.1;
    }
    (t, w)
}

#[test]
fn scalable_sawtooth_recovers_in_about_13_rtts() {
    let (t, w) = scalable_sawtooth(5);
    let r = recovery_times(&t, &w, 0.05, 0.0);
    // Four complete recoveries (the first cycle only sets the peak).
    assert_eq!(r.len(), 4);
    // From the sample at 1000 to the first sample ≥ 995: 26 samples of growth by √1.01 from 875
    // reach 875·1.01^13 = 996.9 ≥ 995, one sample after the drop: 27 × 0.1 s.
    for x in &r {
        assert!((x - 2.7).abs() < 1e-9, "{x}");
    }
    assert!((median(&r) - 2.7).abs() < 1e-9);
}

#[test]
fn a_second_drop_restarts_the_recovery() {
    // peak 100, drop to 50, climb to 80, drop to 40, climb back to 80 (from its 80 peak).
    let w = [100.0, 50.0, 60.0, 70.0, 80.0, 40.0, 60.0, 80.0];
    let t: Vec<f64> = (0..w.len()).map(|i| i as f64).collect();
    let r = recovery_times(&t, &w, 0.05, 0.0);
    assert_eq!(
        r,
        vec![3.0],
        "timed from the 80 at t = 4 to the 80 at t = 7"
    );
}

#[test]
fn linear_climb_is_timed_and_extended_to_the_whole_step() {
    // One packet per 0.18 s from 300 packets at t = 30 s.
    let t: Vec<f64> = (0..4000).map(|i| i as f64 * 0.1).collect();
    let w: Vec<f64> = t
        .iter()
        .map(|&ti| {
            if ti < 30.0 {
                300.0
            } else {
                300.0 + (ti - 30.0) / 0.18
            }
        })
        .collect();
    // From 250 (already passed when the climb starts) to 1500: 1250 packets × 0.18 s = 225 s.
    let c = climb_time(&t, &w, 30.0, 250.0, 1500.0).unwrap();
    assert!((c - 225.0).abs() < 0.2, "{c}");
    assert_eq!(climb_time(&t, &w, 30.0, 250.0, 1e6), None);
}

#[test]
fn means_and_jain() {
    let t = [0.0, 1.0, 2.0, 3.0];
    assert_eq!(mean_after(&t, &[10.0, 20.0, 30.0, 40.0], 2.0), 35.0);
    assert!(mean_after(&t, &[1.0; 4], 5.0).is_nan());
    assert_eq!(jain(&[1.0, 1.0, 1.0]), 1.0);
    // (1 + 1/3 + 1/7)² / (3 (1 + 1/9 + 1/49)) = 0.64195
    assert!((jain(&[1.0, 1.0 / 3.0, 1.0 / 7.0]) - 0.64195).abs() < 1e-4);
    assert_eq!(median(&[3.0, 1.0, 2.0, f64::NAN]), 2.0);
}
