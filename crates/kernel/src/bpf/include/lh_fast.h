/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * FAST TCP (C. Jin, D. X. Wei, S. H. Low, "FAST TCP: Motivation, Architecture, Algorithms,
 * Performance", IEEE INFOCOM 2004; Wei, Jin, Low, Hegde, IEEE/ACM ToN 14(6), 2006; the ns-2
 * FastTcpAgent of Cui and Andrew, v1.1.3, 2007; seed 001, "FAST TCP in Linux").
 *
 * FAST is a delay-based window control. Queueing delay q = avgRTT - baseRTT, with baseRTT the
 * smallest RTT seen (the propagation delay) and avgRTT an EWMA of the samples, tells the flow how
 * many of its own packets sit in the bottleneck queue: by Little's law w·q/RTT. FAST steers that
 * backlog to a constant α packets with the periodic update
 *
 *     w <- min{ 2w, (1-γ)·w + γ·(baseRTT/avgRTT · w_old + α) }
 *
 * whose fixed point is w·q/RTT = α, i.e. rate·q = α: each flow keeps α packets queued, whatever
 * the link rate or propagation delay, and flows sharing a bottleneck get proportionally fair
 * rates. Each update closes the fraction γ of the gap to the target, so convergence is geometric
 * rather than one packet per RTT as in Vegas. w_old is the window the packets now being
 * acknowledged were sent with: the baseRTT/avgRTT term compensates w(t-RTT), as ns-2 does with
 * its per-packet record; here it is the window at the start of the previous round.
 *
 * Phases, as the ns-2 module and the Linux prototype:
 *  - MI (multiplicative increase): while q is below mi_threshold (no queue of our own yet) the
 *    window grows by the packets acknowledged, doubling per round trip, to find the pipe fast.
 *    The first exit from MI sets ssthresh to the window so the kernel reports avoidance.
 *  - Convergence/equilibrium: the update above, on every other round trip (the rounds between
 *    let the previous change show in the RTT) and at most once per update_period.
 *  - Loss: halve, as Reno (ssthresh = max(cwnd/2, 2)); the kernel's recovery (PRR) carries it out.
 *
 * RTT averaging follows the ToN paper: avg <- avg + η·(sample - avg) with η = min(3/w, 1/4), on
 * every sample, which averages over about a third of a window of samples.
 *
 * Fixed point: RTTs in µs (+1, as Vegas, so a 0 µs sample on a fast path is still a sample); the
 * average in µs·256 (Q8); baseRTT/avgRTT in Q20; γ and the window's fractional part in Q10. The
 * window keeps a Q10 fraction between updates, so γ·α = 0.5 packet is not lost to truncation.
 * The Q20 ratio has a relative error below 2^-20·(avgRTT/baseRTT), under 0.01 packet for windows
 * up to 10,000 packets at any delay ratio below 100.
 *
 * Deviations: no window pacing of the increase (the kernel's own pacing, if enabled by fq,
 * spreads the sending); no α/β dead band (ns-2's default α = β makes it empty anyway); the
 * update period is a lower bound on the spacing of updates, not a timer.
 */
#ifndef LH_FAST_H
#define LH_FAST_H

#include "lh_window.h"

struct lh_fast_params {
	__u32 alpha;            /* packets the flow keeps queued in equilibrium */
	__u32 gamma_q10;        /* γ in Q10 (0.5 = 512), 1..1024 */
	__u32 update_period_us; /* minimum spacing of window updates */
	__u32 mi_threshold_us;  /* queueing delay below which the window doubles per RTT */
};

#define LH_FAST_PHASE_MI 0
#define LH_FAST_PHASE_CONVERGE 1

struct lh_fast {
	__u64 avg_rtt_q8;     /* EWMA of RTT samples, µs·256; 0 before the first sample */
	__u64 last_update_us; /* time of the last window update */
	__u32 base_rtt;       /* smallest sample, µs + 1; 0 before the first sample */
	__u32 round_end;      /* snd_nxt when the current round began */
	__u32 round_parity;   /* toggles every round: updates on odd rounds only */
	__u32 w_round_start;  /* cwnd at the start of the current round */
	__u32 w_prev_round;   /* cwnd at the start of the previous round */
	__u32 cwnd_frac_q10;  /* fractional part of the window the last update computed */
	__u32 phase;          /* LH_FAST_PHASE_* */
	__u32 updates;        /* number of window updates applied */
};

LH_INLINE void lh_fast_init(struct lh_fast *f, __u32 snd_nxt, __u32 cwnd, __u64 now_us)
{
	f->avg_rtt_q8 = 0;
	f->last_update_us = now_us;
	f->base_rtt = 0;
	f->round_end = snd_nxt;
	f->round_parity = 0;
	f->w_round_start = cwnd;
	f->w_prev_round = cwnd;
	f->cwnd_frac_q10 = 0;
	f->phase = LH_FAST_PHASE_MI;
	f->updates = 0;
}

/* pkts_acked: fold one RTT sample (µs; negative: none) into baseRTT and avgRTT. */
LH_INLINE void lh_fast_rtt_sample(struct lh_fast *f, __s32 rtt_us, __u32 cwnd)
{
	__u32 vrtt;
	__u64 s, d;

	if (rtt_us < 0)
		return;
	vrtt = (__u32)rtt_us + 1;
	if (f->base_rtt == 0 || vrtt < f->base_rtt)
		f->base_rtt = vrtt;
	s = (__u64)vrtt << 8;
	if (f->avg_rtt_q8 == 0) {
		f->avg_rtt_q8 = s;
		return;
	}
	/* η = min(3/cwnd, 1/4): 3/cwnd is the smaller once cwnd > 12. */
	if (s >= f->avg_rtt_q8) {
		d = s - f->avg_rtt_q8;
		f->avg_rtt_q8 += cwnd > 12 ? d * 3 / cwnd : d >> 2;
	} else {
		d = f->avg_rtt_q8 - s;
		f->avg_rtt_q8 -= cwnd > 12 ? d * 3 / cwnd : d >> 2;
	}
}

/* Queueing delay in µs: avgRTT - baseRTT (0 before the first sample). */
LH_INLINE __u32 lh_fast_qdelay_us(const struct lh_fast *f)
{
	__u64 avg = f->avg_rtt_q8 >> 8;

	return avg > f->base_rtt ? (__u32)(avg - f->base_rtt) : 0;
}

/* The window law, in Q10: (1-γ)·w + γ·(baseRTT/avgRTT·w_old + α), capped at 2w, floor 2. */
LH_INLINE __u64 lh_fast_target_q10(const struct lh_fast *f, const struct lh_fast_params *p,
				   __u32 cwnd, __u32 w_old)
{
	__u64 base_q8 = (__u64)f->base_rtt << 8;
	__u64 ratio_q20 = f->avg_rtt_q8 ? (base_q8 << 20) / f->avg_rtt_q8 : (1ULL << 20);
	__u64 cwnd_q10 = ((__u64)cwnd << LH_Q10_SHIFT) | f->cwnd_frac_q10;
	__u64 g = p->gamma_q10 > LH_Q10_ONE ? LH_Q10_ONE : p->gamma_q10;
	__u64 goal_q10, target;

	if (ratio_q20 > (1ULL << 20))
		ratio_q20 = 1ULL << 20;
	/* Rounded, not truncated: the equilibrium w = base/avg·w + α must map onto itself. */
	goal_q10 = (((__u64)w_old * ratio_q20 + (1U << 9)) >> 10) + ((__u64)p->alpha << LH_Q10_SHIFT);
	target = ((LH_Q10_ONE - g) * cwnd_q10 + g * goal_q10) >> LH_Q10_SHIFT;
	if (target > ((__u64)cwnd << (LH_Q10_SHIFT + 1)))
		target = (__u64)cwnd << (LH_Q10_SHIFT + 1);
	if (target < (2ULL << LH_Q10_SHIFT))
		target = 2ULL << LH_Q10_SHIFT;
	return target;
}

/*
 * cong_avoid: the caller has checked that the flow is cwnd-limited and not in recovery.
 * `ack` is the cumulative ACK, `snd_nxt` the next sequence to send, `now_us` the time.
 */
LH_INLINE void lh_fast_cong_avoid(struct lh_fast *f, struct lh_window *w,
				  const struct lh_fast_params *p, __u32 ack, __u32 snd_nxt,
				  __u64 now_us, __u32 acked)
{
	int new_round = 0;
	__u64 target;

	if (lh_after(ack, f->round_end)) {
		f->round_end = snd_nxt;
		f->w_prev_round = f->w_round_start;
		f->w_round_start = w->cwnd;
		f->round_parity ^= 1;
		new_round = 1;
	}

	/* MI: no queue of our own yet (or no sample yet): double per round trip. */
	if (f->avg_rtt_q8 == 0 || lh_fast_qdelay_us(f) < p->mi_threshold_us) {
		w->cwnd = lh_min_u32(w->cwnd + acked, w->clamp);
		w->cwnd_cnt = 0;
		f->cwnd_frac_q10 = 0;
		return;
	}
	if (f->phase == LH_FAST_PHASE_MI) {
		f->phase = LH_FAST_PHASE_CONVERGE;
		w->ssthresh = lh_min_u32(w->ssthresh, w->cwnd);
	}

	if (!new_round || !f->round_parity || now_us - f->last_update_us < p->update_period_us)
		return;
	f->last_update_us = now_us;
	f->updates++;
	target = lh_fast_target_q10(f, p, w->cwnd, f->w_prev_round ? f->w_prev_round : w->cwnd);
	if (target > ((__u64)w->clamp << LH_Q10_SHIFT))
		target = (__u64)w->clamp << LH_Q10_SHIFT;
	w->cwnd = (__u32)(target >> LH_Q10_SHIFT);
	f->cwnd_frac_q10 = (__u32)(target & (LH_Q10_ONE - 1));
}

/* ssthresh on loss: halve, at least two packets (Reno). */
LH_INLINE __u32 lh_fast_ssthresh(__u32 cwnd) { return lh_reno_ssthresh(cwnd); }

#endif /* LH_FAST_H */
