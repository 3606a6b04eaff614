// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The congestion-control arithmetic headers compiled natively, with one exported function per
 * pure function, so the Rust tests run the exact code the eBPF programs run.
 */
#include "lh_fast.h"
#include "lh_highspeed.h"
#include "lh_lion.h"
#include "lh_scalable.h"
#include "lh_vegas.h"

__u32 lh_native_slow_start(struct lh_window *w, __u32 acked) { return lh_slow_start(w, acked); }
void lh_native_cong_avoid_ai(struct lh_window *w, __u32 step, __u32 acked)
{
	lh_cong_avoid_ai(w, step, acked);
}
void lh_native_reno_cong_avoid(struct lh_window *w, __u32 acked) { lh_reno_cong_avoid(w, acked); }

void lh_native_scalable_cong_avoid(struct lh_window *w, const struct lh_scalable_params *p,
				   __u32 acked)
{
	lh_scalable_cong_avoid(w, p, acked);
}
__u32 lh_native_scalable_ssthresh(__u32 cwnd, const struct lh_scalable_params *p)
{
	return lh_scalable_ssthresh(cwnd, p);
}

__u32 lh_native_hstcp_row(__u32 cwnd) { return lh_hstcp_row(cwnd); }
__u32 lh_native_hstcp_cong_avoid(struct lh_window *w, const struct lh_hstcp_params *p, __u32 acked)
{
	return lh_hstcp_cong_avoid(w, p, acked);
}
__u32 lh_native_hstcp_ssthresh(__u32 cwnd) { return lh_hstcp_ssthresh(cwnd); }

void lh_native_vegas_init(struct lh_vegas *v, __u32 snd_nxt) { lh_vegas_init(v, snd_nxt); }
void lh_native_vegas_enable(struct lh_vegas *v, __u32 snd_nxt) { lh_vegas_enable(v, snd_nxt); }
void lh_native_vegas_rtt_sample(struct lh_vegas *v, __s32 rtt_us) { lh_vegas_rtt_sample(v, rtt_us); }
void lh_native_vegas_cong_avoid(struct lh_vegas *v, struct lh_window *w,
				const struct lh_vegas_params *p, __u32 ack, __u32 snd_nxt,
				__u32 acked, int cwnd_limited)
{
	lh_vegas_cong_avoid(v, w, p, ack, snd_nxt, acked, cwnd_limited);
}

void lh_native_fast_init(struct lh_fast *f, __u32 snd_nxt) { lh_fast_init(f, snd_nxt); }
void lh_native_fast_ack_begin(struct lh_fast *f, __u32 ack, __u32 snd_nxt)
{
	lh_fast_ack_begin(f, ack, snd_nxt);
}
void lh_native_fast_rtt_sample(struct lh_fast *f, const struct lh_fast_params *p, __s32 rtt_us,
			       __u32 in_flight, __u32 acked, __u64 now_us)
{
	lh_fast_rtt_sample(f, p, rtt_us, in_flight, acked, now_us);
}
void lh_native_fast_window_at_send(struct lh_fast *f, __u64 bytes, __u32 mss)
{
	lh_fast_window_at_send(f, bytes, mss);
}
void lh_native_fast_recovery_ack(struct lh_fast *f, __u64 now_us) { lh_fast_recovery_ack(f, now_us); }
void lh_native_fast_cong_avoid(struct lh_fast *f, struct lh_window *w,
			       const struct lh_fast_params *p, __u64 now_us, __u32 acked,
			       int cwnd_limited)
{
	lh_fast_cong_avoid(f, w, p, now_us, acked, cwnd_limited);
}
__u32 lh_native_fast_ssthresh(struct lh_fast *f, __u32 cwnd) { return lh_fast_ssthresh(f, cwnd); }
void lh_native_fast_timeout(struct lh_fast *f) { lh_fast_timeout(f); }
__u64 lh_native_fast_target_q10(const struct lh_fast *f, const struct lh_fast_params *p,
				__u64 w_q10, __u64 w_old_q10)
{
	return lh_fast_target_q10(f, p, w_q10, w_old_q10);
}

void lh_native_lion_init(struct lh_lion *l, const struct lh_lion_params *p, __u32 snd_nxt,
			 __u32 init_cwnd, __u64 now_us)
{
	lh_lion_init(l, p, snd_nxt, init_cwnd, now_us);
}
void lh_native_lion_ack(struct lh_lion *l, const struct lh_lion_params *p, __u32 ack,
			__u32 snd_nxt, __u64 now_us, __s64 rtt_us, __u64 delivered,
			__u64 interval_us, int app_limited, int cwnd_limited, __u64 acked_bytes,
			__u32 mss, __u32 clamp)
{
	lh_lion_ack(l, p, ack, snd_nxt, now_us, rtt_us, delivered, interval_us, app_limited,
		    cwnd_limited, acked_bytes, mss, clamp);
}
void lh_native_lion_loss(struct lh_lion *l, const struct lh_lion_params *p, __u32 lost,
			 __u32 mss, __u32 clamp)
{
	lh_lion_loss(l, p, lost, mss, clamp);
}
void lh_native_lion_rto(struct lh_lion *l, const struct lh_lion_params *p, __u32 mss, __u32 clamp)
{
	lh_lion_rto(l, p, mss, clamp);
}
__u32 lh_native_lion_cwnd(const struct lh_lion *l, const struct lh_lion_params *p, __u32 mss,
			  __u32 clamp)
{
	return lh_lion_cwnd(l, p, mss, clamp);
}
__u32 lh_native_lion_burst(const struct lh_lion *l) { return lh_lion_burst(l); }
__u64 lh_native_lion_shuffle_half_bits(__u64 rate_bytes)
{
	return lh_lion_shuffle_half_bits(rate_bytes);
}
