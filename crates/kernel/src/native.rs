//! The arithmetic headers (`src/bpf/include/lh_*.h`) compiled natively (build.rs), so tests run
//! the very code the eBPF programs run. Struct layouts mirror the C structs field by field.
#![allow(missing_docs)]

/// `struct lh_window`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u32,
    pub cwnd_cnt: u32,
    pub ssthresh: u32,
    pub clamp: u32,
}

/// `struct lh_scalable_params`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ScalableParams {
    pub ai_cnt: u32,
    pub md_q10: u32,
    pub legacy_cwnd: u32,
    pub legacy_decrease: u32,
}

/// `struct lh_vegas_params`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct VegasParams {
    pub alpha: u32,
    pub beta: u32,
    pub gamma: u32,
    pub linux_compat: u32,
}

/// `struct lh_vegas`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct VegasState {
    pub beg_snd_nxt: u32,
    pub doing_vegas_now: u32,
    pub cnt_rtt: u32,
    pub min_rtt: u32,
    pub base_rtt: u32,
}

/// `struct lh_hstcp_params`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct HstcpParams {
    pub ignore_acked: u32,
    pub reserved: [u32; 3],
}

/// `struct lh_fast_params`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct FastParams {
    pub alpha: u32,
    pub gamma_q10: u32,
    pub update_period_us: u32,
    pub mi_threshold_us: u32,
    pub eta_cap_den: u32,
    pub min2w_cap: u32,
    pub every_other_rtt: u32,
    pub pace_increments: u32,
    pub rto_cwnd: u32,
    pub beta: u32,
    pub period_min: u32,
    pub pace: u32,
    pub climb_q10: u32,
    pub mi_backlog: u32,
}

/// `struct lh_fast`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct FastState {
    pub avg_rtt_q8: u64,
    pub last_update_us: u64,
    pub pending_q10: u64,
    pub step_q10: u64,
    pub period_start_us: u64,
    pub queue_seen_us: u64,
    pub loss_w_q10: u64,
    pub base_rtt: u32,
    pub round_end: u32,
    pub acks_this_round: u32,
    pub acks_last_round: u32,
    pub w_old_q10: u32,
    pub cwnd_frac_q10: u32,
    pub updates: u32,
    pub period_low: u32,
    pub update_round: u8,
    pub has_update: u8,
    pub phase: u8,
    pub mi_done: u8,
}

impl FastState {
    /// The window in packets with the fraction the kernel's integer window does not hold.
    pub fn window(&self, w: &Window) -> f64 {
        w.cwnd as f64 + self.cwnd_frac_q10 as f64 / 1024.0
    }
}

impl FastParams {
    /// From a parameter block as [`crate::ParamValues::encode`] makes it.
    pub fn from_raw(r: &[u32]) -> FastParams {
        FastParams {
            alpha: r[0],
            gamma_q10: r[1],
            update_period_us: r[2],
            mi_threshold_us: r[3],
            eta_cap_den: r[4],
            min2w_cap: r[5],
            every_other_rtt: r[6],
            pace_increments: r[7],
            rto_cwnd: r[8],
            beta: r[9],
            period_min: r.get(10).copied().unwrap_or(0),
            pace: r.get(11).copied().unwrap_or(0),
            climb_q10: r.get(12).copied().unwrap_or(0),
            mi_backlog: r.get(13).copied().unwrap_or(0),
        }
    }
}

impl HstcpParams {
    pub fn from_raw(r: &[u32]) -> HstcpParams {
        HstcpParams {
            ignore_acked: r[0],
            reserved: [0; 3],
        }
    }
}

impl ScalableParams {
    pub fn from_raw(r: &[u32]) -> ScalableParams {
        ScalableParams {
            ai_cnt: r[0],
            md_q10: r[1],
            legacy_cwnd: r[2],
            legacy_decrease: r[3],
        }
    }
}

impl VegasParams {
    pub fn from_raw(r: &[u32]) -> VegasParams {
        VegasParams {
            alpha: r[0],
            beta: r[1],
            gamma: r[2],
            linux_compat: r[3],
        }
    }
}

/// `struct lh_lion_params`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct LionParams {
    pub queue_threshold_us: u32,
    pub rise_threshold_us: u32,
    pub mbs_initial_q10: u32,
    pub mbs_max_q10: u32,
    pub mbs_step_q10: u32,
    pub mbs_decrease_q16: u32,
    pub startup_gain_q16: u32,
    pub probe_gain_q16: u32,
    pub compete_drop_q16: u32,
    pub loss_decrease_q16: u32,
    pub shuffle_scale_q16: u32,
    pub yield_rounds: u32,
    pub balance_gain_q16: u32,
    pub balance_share_q16: u32,
    pub cwnd_gain_q16: u32,
}

impl LionParams {
    /// From a parameter block as [`crate::ParamValues::encode`] makes it.
    pub fn from_raw(r: &[u32]) -> LionParams {
        LionParams {
            queue_threshold_us: r[0],
            rise_threshold_us: r[1],
            mbs_initial_q10: r[2],
            mbs_max_q10: r[3],
            mbs_step_q10: r[4],
            mbs_decrease_q16: r[5],
            startup_gain_q16: r[6],
            probe_gain_q16: r[7],
            compete_drop_q16: r[8],
            loss_decrease_q16: r[9],
            shuffle_scale_q16: r[10],
            yield_rounds: r[11],
            balance_gain_q16: r[12],
            balance_share_q16: r[13],
            cwnd_gain_q16: r[14],
        }
    }
}

/// `struct lh_lion`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct LionState {
    pub rate: u64,
    pub abw: u64,
    pub r_max_rate: u64,
    pub r_start_us: u32,
    pub r_min_rtt: u32,
    pub r_max_rtt: u32,
    pub r_acked: u32,
    pub mbs_q10: u32,
    pub base_rtt: u32,
    pub srtt_q3: u32,
    pub q_prev: u32,
    pub round_end: u32,
    pub q_eff: u32,
    pub peak_prev: u32,
    pub train: u32,
    pub r_last_us: u32,
    pub floor: u32,
    pub last_rtt: u32,
    pub capacity: u32,
    pub full: u32,
    pub random_losses: u16,
    pub init_cwnd: u16,
    pub r_lost: u16,
    pub yield_round: u8,
    pub overflowing: u8,
    pub phase: u8,
    pub r_flags: u8,
    pub flags: u8,
}

impl LionState {
    /// The phase as the reference names it.
    pub fn phase_name(&self) -> &'static str {
        match self.phase {
            0 => "startup",
            1 => "drop_avoidance",
            2 => "yield",
            _ => "balance",
        }
    }
}

/// One ACK for [`lion_ack`], in the kernel's units.
#[derive(Debug, Clone, Copy, Default)]
pub struct LionAck {
    /// snd_una after the ACK.
    pub ack: u32,
    pub snd_nxt: u32,
    pub now_us: u64,
    /// Negative: no RTT sample.
    pub rtt_us: i64,
    /// Bytes delivered over `interval_us` (the delivery-rate sample; interval 0: none).
    pub delivered: u64,
    pub interval_us: u64,
    pub app_limited: bool,
    pub cwnd_limited: bool,
    pub acked_bytes: u64,
}

#[link(name = "lh_native", kind = "static")]
extern "C" {
    fn lh_native_slow_start(w: *mut Window, acked: u32) -> u32;
    fn lh_native_cong_avoid_ai(w: *mut Window, step: u32, acked: u32);
    fn lh_native_reno_cong_avoid(w: *mut Window, acked: u32);
    fn lh_native_scalable_cong_avoid(w: *mut Window, p: *const ScalableParams, acked: u32);
    fn lh_native_scalable_ssthresh(cwnd: u32, p: *const ScalableParams) -> u32;
    fn lh_native_hstcp_row(cwnd: u32) -> u32;
    fn lh_native_hstcp_cong_avoid(w: *mut Window, p: *const HstcpParams, acked: u32) -> u32;
    fn lh_native_hstcp_ssthresh(cwnd: u32) -> u32;
    fn lh_native_vegas_init(v: *mut VegasState, snd_nxt: u32);
    fn lh_native_vegas_enable(v: *mut VegasState, snd_nxt: u32);
    fn lh_native_vegas_rtt_sample(v: *mut VegasState, rtt_us: i32);
    fn lh_native_vegas_cong_avoid(
        v: *mut VegasState,
        w: *mut Window,
        p: *const VegasParams,
        ack: u32,
        snd_nxt: u32,
        acked: u32,
        cwnd_limited: i32,
    );
    fn lh_native_fast_init(f: *mut FastState, snd_nxt: u32);
    fn lh_native_fast_ack_begin(f: *mut FastState, ack: u32, snd_nxt: u32);
    fn lh_native_fast_rtt_sample(
        f: *mut FastState,
        p: *const FastParams,
        rtt_us: i32,
        in_flight: u32,
        acked: u32,
        now_us: u64,
    );
    fn lh_native_fast_window_at_send(f: *mut FastState, bytes: u64, mss: u32);
    fn lh_native_fast_recovery_ack(f: *mut FastState, now_us: u64);
    fn lh_native_fast_cong_avoid(
        f: *mut FastState,
        w: *mut Window,
        p: *const FastParams,
        now_us: u64,
        acked: u32,
        cwnd_limited: i32,
    );
    fn lh_native_fast_ssthresh(f: *mut FastState, cwnd: u32) -> u32;
    fn lh_native_fast_timeout(f: *mut FastState);
    fn lh_native_fast_target_q10(
        f: *const FastState,
        p: *const FastParams,
        w_q10: u64,
        w_old_q10: u64,
    ) -> u64;
    fn lh_native_lion_init(
        l: *mut LionState,
        p: *const LionParams,
        snd_nxt: u32,
        init_cwnd: u32,
        now_us: u64,
    );
    fn lh_native_lion_ack(
        l: *mut LionState,
        p: *const LionParams,
        ack: u32,
        snd_nxt: u32,
        now_us: u64,
        rtt_us: i64,
        delivered: u64,
        interval_us: u64,
        app_limited: i32,
        cwnd_limited: i32,
        acked_bytes: u64,
        mss: u32,
        clamp: u32,
    );
    fn lh_native_lion_loss(
        l: *mut LionState,
        p: *const LionParams,
        lost: u32,
        mss: u32,
        clamp: u32,
    );
    fn lh_native_lion_rto(l: *mut LionState, p: *const LionParams, mss: u32, clamp: u32);
    fn lh_native_lion_cwnd(l: *const LionState, p: *const LionParams, mss: u32, clamp: u32) -> u32;
    fn lh_native_lion_burst(l: *const LionState) -> u32;
    fn lh_native_lion_shuffle_half_bits(rate_bytes: u64) -> u64;
}

// SAFETY (all wrappers): the C functions only read and write the structs passed by pointer,
// whose layouts above match the C definitions; they keep no pointer after returning.

pub fn slow_start(w: &mut Window, acked: u32) -> u32 {
    unsafe { lh_native_slow_start(w, acked) }
}
pub fn cong_avoid_ai(w: &mut Window, step: u32, acked: u32) {
    unsafe { lh_native_cong_avoid_ai(w, step, acked) }
}
pub fn reno_cong_avoid(w: &mut Window, acked: u32) {
    unsafe { lh_native_reno_cong_avoid(w, acked) }
}
pub fn scalable_cong_avoid(w: &mut Window, p: &ScalableParams, acked: u32) {
    unsafe { lh_native_scalable_cong_avoid(w, p, acked) }
}
pub fn scalable_ssthresh(cwnd: u32, p: &ScalableParams) -> u32 {
    unsafe { lh_native_scalable_ssthresh(cwnd, p) }
}
pub fn hstcp_row(cwnd: u32) -> u32 {
    unsafe { lh_native_hstcp_row(cwnd) }
}
pub fn hstcp_cong_avoid(w: &mut Window, p: &HstcpParams, acked: u32) -> u32 {
    unsafe { lh_native_hstcp_cong_avoid(w, p, acked) }
}
pub fn hstcp_ssthresh(cwnd: u32) -> u32 {
    unsafe { lh_native_hstcp_ssthresh(cwnd) }
}
pub fn vegas_init(v: &mut VegasState, snd_nxt: u32) {
    unsafe { lh_native_vegas_init(v, snd_nxt) }
}
pub fn vegas_enable(v: &mut VegasState, snd_nxt: u32) {
    unsafe { lh_native_vegas_enable(v, snd_nxt) }
}
pub fn vegas_rtt_sample(v: &mut VegasState, rtt_us: i32) {
    unsafe { lh_native_vegas_rtt_sample(v, rtt_us) }
}
#[allow(clippy::too_many_arguments)]
pub fn vegas_cong_avoid(
    v: &mut VegasState,
    w: &mut Window,
    p: &VegasParams,
    ack: u32,
    snd_nxt: u32,
    acked: u32,
    cwnd_limited: bool,
) {
    unsafe { lh_native_vegas_cong_avoid(v, w, p, ack, snd_nxt, acked, cwnd_limited as i32) }
}
pub fn fast_timeout(f: &mut FastState) {
    unsafe { lh_native_fast_timeout(f) }
}
pub fn fast_init(f: &mut FastState, snd_nxt: u32) {
    unsafe { lh_native_fast_init(f, snd_nxt) }
}
pub fn fast_ack_begin(f: &mut FastState, ack: u32, snd_nxt: u32) {
    unsafe { lh_native_fast_ack_begin(f, ack, snd_nxt) }
}
pub fn fast_rtt_sample(
    f: &mut FastState,
    p: &FastParams,
    rtt_us: i32,
    in_flight: u32,
    acked: u32,
    now_us: u64,
) {
    unsafe { lh_native_fast_rtt_sample(f, p, rtt_us, in_flight, acked, now_us) }
}
pub fn fast_window_at_send(f: &mut FastState, bytes: u64, mss: u32) {
    unsafe { lh_native_fast_window_at_send(f, bytes, mss) }
}
pub fn fast_recovery_ack(f: &mut FastState, now_us: u64) {
    unsafe { lh_native_fast_recovery_ack(f, now_us) }
}
pub fn fast_cong_avoid(
    f: &mut FastState,
    w: &mut Window,
    p: &FastParams,
    now_us: u64,
    acked: u32,
    cwnd_limited: bool,
) {
    unsafe { lh_native_fast_cong_avoid(f, w, p, now_us, acked, cwnd_limited as i32) }
}
pub fn fast_ssthresh(f: &mut FastState, cwnd: u32) -> u32 {
    unsafe { lh_native_fast_ssthresh(f, cwnd) }
}
pub fn fast_target_q10(f: &FastState, p: &FastParams, w_q10: u64, w_old_q10: u64) -> u64 {
    unsafe { lh_native_fast_target_q10(f, p, w_q10, w_old_q10) }
}
pub fn lion_init(l: &mut LionState, p: &LionParams, snd_nxt: u32, init_cwnd: u32, now_us: u64) {
    unsafe { lh_native_lion_init(l, p, snd_nxt, init_cwnd, now_us) }
}
pub fn lion_ack(l: &mut LionState, p: &LionParams, a: &LionAck, mss: u32, clamp: u32) {
    unsafe {
        lh_native_lion_ack(
            l,
            p,
            a.ack,
            a.snd_nxt,
            a.now_us,
            a.rtt_us,
            a.delivered,
            a.interval_us,
            a.app_limited as i32,
            a.cwnd_limited as i32,
            a.acked_bytes,
            mss,
            clamp,
        )
    }
}
pub fn lion_loss(l: &mut LionState, p: &LionParams, lost: u32, mss: u32, clamp: u32) {
    unsafe { lh_native_lion_loss(l, p, lost, mss, clamp) }
}
pub fn lion_rto(l: &mut LionState, p: &LionParams, mss: u32, clamp: u32) {
    unsafe { lh_native_lion_rto(l, p, mss, clamp) }
}
/// The safety window in packets (0: not set yet, the window stays).
pub fn lion_cwnd(l: &LionState, p: &LionParams, mss: u32, clamp: u32) -> u32 {
    unsafe { lh_native_lion_cwnd(l, p, mss, clamp) }
}
pub fn lion_burst(l: &LionState) -> u32 {
    unsafe { lh_native_lion_burst(l) }
}
/// The shuffle table's yield for a rate in bytes/s, in half bits/s.
pub fn lion_shuffle_half_bits(rate_bytes: u64) -> u64 {
    unsafe { lh_native_lion_shuffle_half_bits(rate_bytes) }
}
