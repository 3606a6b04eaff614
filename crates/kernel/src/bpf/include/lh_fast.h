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
 * its per-packet record; here it is the kernel's per-ACK estimate of it (below).
 *
 * The same rules as the longhaul-cc reference (crates/cc/src/algorithms/fast.rs), phase by
 * phase, as the ns-2 module and the Linux prototype:
 *  - MI (multiplicative increase): while q is below mi_threshold (no queue of our own yet) the
 *    window grows by the packets acknowledged, doubling per round trip, to find the pipe fast.
 *    There is no Reno slow start; ssthresh only records losses.
 *  - Convergence/equilibrium: the update above, at most once per update_period and only in
 *    every other round trip (the rounds between let the previous change show in the RTT).
 *    The window a packet was sent with (w_old) is the kernel's ack_sample in_flight: bytes
 *    delivered while that packet was in flight. An update never raises the window of a sender
 *    that is not cwnd-limited.
 *  - Window pacing: when baseRTT >= 4 ms an increase is released in equal steps over the ACKs
 *    one update period is expected to bring (ns-2 fast_pace), so it does not leave as a burst.
 *  - Loss: halve, as Reno (ssthresh = max(cwnd/2, 2)); the kernel's recovery (PRR) carries it
 *    out and the window law waits a full period after recovery. After a timeout the window
 *    restarts from rto_cwnd packets (ns-2: 2).
 *
 * RTT averaging follows the ToN paper: avg <- avg + η·(sample - avg) with η = min(3/w, cap) on
 * every sample, w the packets in flight, cap 1/4 (paper) or 1/256 (ns-2).
 *
 * period_min (an option, on by default as in the reference; 0 gives the papers' EWMA): avgRTT is instead the smallest sample of the last
 * update period, taken on the first sample at or after the period's end (which counts in the
 * period it ends); the first sample stands until then. Delay a host or a burst adds to some
 * packets of a period does not count, a queue every packet of the period waits in does: Linux
 * tcp_vegas.c filters its per-RTT estimate the same way (minRTT, "the min of RTTs measured
 * within last RTT"). A period's minimum falls below mi_threshold whenever the queue empties for
 * one sample, which on a bursty host happens every few periods, and MI's doubling then
 * overshoots by up to a period of ACKs each time; so with period_min MI runs only from the start
 * or a timeout until the first ACK that finds a queue, and after a loss the window law, not MI,
 * refills the window. Why and what it changes: docs/lab.md, "FAST at 1 Gb/s × 180 ms".
 *
 * climb (with period_min; 1/8 by default as in the reference, 0 = off): after MI, once a whole
 * round trip (avgRTT) passed without an ACK that found a queue, each ACK adds climb × the
 * packets it acknowledges, as MI does with 1:
 * the paper's α(w, q) = a·w while q = 0 with a gentler a, so the window refills the path after
 * MI's early end or a loss in a few round trips instead of α per two. Below the window a loss
 * halved (loss_w_q10) it grows at MI's pace instead: that window was carried a moment ago.
 *
 * mi_backlog (4 packets by default as in the reference, 0 = the papers' rule): MI ends only at
 * a queue that holds at least this many of the flow's packets, w_old·q/avgRTT (the backlog
 * the window law uses). Under a small window a host's stall or a lone delayed ACK fakes a
 * queueing delay but not a backlog of several packets; a queue MI makes itself holds
 * thousands at this path's scale.
 *
 * Fixed point: RTTs in µs (+1, as Vegas, so a 0 µs sample on a fast path is still a sample); the
 * average in µs·256 (Q8); baseRTT/avgRTT in Q20; γ, windows and paced steps in Q10 (the window's
 * fraction below one packet is kept here, the kernel's snd_cwnd holds the integer part). The
 * Q20 ratio is rounded, so the equilibrium w = base/avg·w + α maps onto itself exactly. On a
 * loss the half packet an odd window would lose is kept as a fraction, so the window after
 * recovery is exactly half.
 *
 * Dead band (ns-2's alpha_/beta_, the reference's `beta`): with β > α, an update that finds
 * the flow's backlog w_old·(avgRTT - baseRTT)/avgRTT in [α, β) holds the window instead of
 * moving it, as Vegas does; outside the band, or with β = α (β = 0 means α, ns-2's default and
 * ours), the law above runs. The backlog is computed from the same rounded Q20 ratio as the
 * law, so a window at the law's fixed point has a backlog of exactly α (in the band's lower
 * edge when β > α, the law's own target when β = α).
 *
 * Deviations from the reference: rounds are counted in sequence space (snd_una passing the
 * snd_nxt recorded at the round's start) where the reference counts packet numbers; the two
 * agree except with partial-segment ACKs. The reference also names a fourth phase
 * (`equilibrium`: backlog within fc_threshold·α of the band, versus `fast_convergence`); it
 * changes no window, and the kernel has no channel to report phases, so the programs keep one
 * LH_FAST_PHASE_CONVERGE for both and have no fc_threshold parameter.
 */
#ifndef LH_FAST_H
#define LH_FAST_H

#include "lh_window.h"

struct lh_fast_params {
	__u32 alpha;            /* packets the flow keeps queued in equilibrium */
	__u32 gamma_q10;        /* γ in Q10 (0.5 = 512), 1..1024 */
	__u32 update_period_us; /* minimum spacing of window updates */
	__u32 mi_threshold_us;  /* queueing delay below which the window doubles per RTT */
	__u32 eta_cap_den;      /* η = min(3/w, 1/eta_cap_den): 4 (paper) or 256 (ns-2) */
	__u32 min2w_cap;        /* nonzero: an update at most doubles the window (paper) */
	__u32 every_other_rtt;  /* nonzero: updates only in every other round trip */
	__u32 pace_increments;  /* nonzero: spread increases over an update period */
	__u32 rto_cwnd;         /* window after a retransmission timeout, packets */
	__u32 beta;             /* dead band [alpha, beta) in packets; 0 (or alpha): no band */
	__u32 period_min;       /* nonzero: avgRTT is the smallest sample of the last period */
	__u32 pace;             /* nonzero: ask for TCP's internal pacing (the binding's job) */
	__u32 climb_q10;        /* period_min: growth per packet acked once an RTT found no queue */
	__u32 mi_backlog;       /* packets of ours a queue must hold to end MI; 0: any queue */
};


#define LH_FAST_PHASE_MI 0
#define LH_FAST_PHASE_CONVERGE 1
#define LH_FAST_PHASE_RECOVERY 2
/* Below this base RTT increases are applied at once (ns-2: pacing only when baseRTT >= 4 ms). */
#define LH_FAST_PACE_MIN_BASE_US 4000
/* While the window is this small a paced increase is released at once, at most doubling. */
#define LH_FAST_PACE_SMALL_CWND 4

struct lh_fast {
	__u64 avg_rtt_q8;     /* EWMA of RTT samples, µs·256; 0 before the first sample */
	__u64 last_update_us; /* when the window was last set by an update, MI or recovery */
	__u64 pending_q10;    /* increase decided but not yet released by pacing */
	__u64 step_q10;       /* released per ACK while pending */
	__u64 period_start_us; /* period_min: when the current period began */
	__u64 queue_seen_us;  /* the last ACK that found a queue (q >= mi_threshold) */
	__u64 loss_w_q10;     /* the window the last loss halved; 0: none since start or timeout */
	__u32 base_rtt;       /* smallest sample, µs + 1; 0 before the first sample */
	__u32 round_end;      /* ACKing beyond this sequence ends the round trip */
	__u32 acks_this_round;
	__u32 acks_last_round;
	__u32 w_old_q10;     /* window the last acknowledged packet was sent with; 0: unknown */
	__u32 cwnd_frac_q10; /* fraction of a packet the kernel's integer window does not hold */
	__u32 updates;       /* window-law updates applied */
	__u32 period_low;    /* period_min: smallest sample of this period, µs + 1; 0: none */
	/* Flags in bytes: the state with the binding's must fit ICSK_CA_PRIV_SIZE (104 bytes). */
	__u8 update_round;   /* nonzero in the round trips in which an update may happen */
	__u8 has_update;     /* last_update_us is valid */
	__u8 phase;          /* LH_FAST_PHASE_* (reporting) */
	__u8 mi_done;        /* an ACK found a queue since the start or the last timeout */
};

LH_INLINE void lh_fast_init(struct lh_fast *f, __u32 snd_nxt)
{
	f->avg_rtt_q8 = 0;
	f->last_update_us = 0;
	f->pending_q10 = 0;
	f->step_q10 = 0;
	f->base_rtt = 0;
	f->round_end = snd_nxt;
	f->update_round = 0;
	f->acks_this_round = 0;
	f->acks_last_round = 0;
	f->w_old_q10 = 0;
	f->cwnd_frac_q10 = 0;
	f->has_update = 0;
	f->phase = LH_FAST_PHASE_MI;
	f->updates = 0;
	f->period_start_us = 0;
	f->queue_seen_us = 0;
	f->loss_w_q10 = 0;
	f->period_low = 0;
	f->mi_done = 0;
}

/* Every ACK that acknowledges data: round-trip bookkeeping. `ack` is snd_una after the ACK. */
LH_INLINE void lh_fast_ack_begin(struct lh_fast *f, __u32 ack, __u32 snd_nxt)
{
	if (lh_after(ack, f->round_end)) {
		f->round_end = lh_after(snd_nxt, ack) ? snd_nxt : ack;
		f->acks_last_round = f->acks_this_round;
		f->acks_this_round = 0;
		f->update_round = !f->update_round;
	}
	f->acks_this_round++;
}

/* An ACK for more packets than this moves the average as if it were for this many. */
#define LH_FAST_MAX_SAMPLES_PER_ACK 64
#define LH_Q30_ONE (1ULL << 30)

/* One squaring step of keep^n: multiply the result in when bit `b` of n is set. */
#define LH_FAST_POW_STEP(pow, base, n, b)                                  \
	do {                                                               \
		if ((n) & (1U << (b)))                                     \
			(pow) = ((pow) * (base)) >> 30;                    \
		(base) = ((base) * (base)) >> 30;                          \
	} while (0)

/* One RTT sample (µs; negative: none) from an ACK of `acked` packets, with `in_flight` packets
 * outstanding. The ACK weighs as `acked` per-packet samples of the same RTT: the average moves
 * by the reference's weight 1 − (1 − η)^acked (with delayed ACKs, one η per ACK would make the
 * average lag two thirds of a window instead of a third). (1 − η)^acked is computed in Q30 by
 * square-and-multiply over the 7 bits of acked ≤ 64, written out: no loop on the per-ACK path. */
LH_INLINE void lh_fast_rtt_sample(struct lh_fast *f, const struct lh_fast_params *p,
				  __s32 rtt_us, __u32 in_flight, __u32 acked, __u64 now_us)
{
	__u32 vrtt;
	__u64 s, d, eta_q30, base, pow = LH_Q30_ONE, weight_q20;
	__u64 den = p->eta_cap_den ? p->eta_cap_den : 4;

	if (rtt_us < 0)
		return;
	if (in_flight == 0)
		in_flight = 1;
	vrtt = (__u32)rtt_us + 1;
	if (f->base_rtt == 0 || vrtt < f->base_rtt)
		f->base_rtt = vrtt;
	s = (__u64)vrtt << 8;
	if (p->period_min) {
		/* The first sample stands until the first period ends. */
		if (f->period_low == 0 || vrtt < f->period_low)
			f->period_low = vrtt;
		if (f->avg_rtt_q8 == 0) {
			f->avg_rtt_q8 = s;
			f->period_start_us = now_us;
		} else if (now_us >= f->period_start_us + p->update_period_us) {
			f->avg_rtt_q8 = (__u64)f->period_low << 8;
			f->period_low = 0;
			f->period_start_us = now_us;
		}
		return;
	}
	if (f->avg_rtt_q8 == 0) {
		f->avg_rtt_q8 = s;
		return;
	}
	if (acked == 0)
		acked = 1;
	if (acked > LH_FAST_MAX_SAMPLES_PER_ACK)
		acked = LH_FAST_MAX_SAMPLES_PER_ACK;
	/* η = min(3/in_flight, 1/den): 3/in_flight is the smaller once in_flight >= 3·den. */
	eta_q30 = in_flight >= 3 * den ? (3 * LH_Q30_ONE) / in_flight : LH_Q30_ONE / den;
	base = LH_Q30_ONE - eta_q30;
	LH_FAST_POW_STEP(pow, base, acked, 0);
	LH_FAST_POW_STEP(pow, base, acked, 1);
	LH_FAST_POW_STEP(pow, base, acked, 2);
	LH_FAST_POW_STEP(pow, base, acked, 3);
	LH_FAST_POW_STEP(pow, base, acked, 4);
	LH_FAST_POW_STEP(pow, base, acked, 5);
	LH_FAST_POW_STEP(pow, base, acked, 6);
	/* Q20 for the product, rounded to nearest (the Q30 steps truncate): d (µs·256) stays far
	 * below 2^43 for any RTT a socket reports. */
	weight_q20 = (LH_Q30_ONE - pow) >> 10;
	if (s >= f->avg_rtt_q8) {
		d = s - f->avg_rtt_q8;
		f->avg_rtt_q8 += (d * weight_q20 + (1 << 19)) >> 20;
	} else {
		d = f->avg_rtt_q8 - s;
		f->avg_rtt_q8 -= (d * weight_q20 + (1 << 19)) >> 20;
	}
}

/* The window the acknowledged packet was sent with, in bytes (0: unknown). */
LH_INLINE void lh_fast_window_at_send(struct lh_fast *f, __u64 bytes, __u32 mss)
{
	__u64 q10 = mss ? (bytes << LH_Q10_SHIFT) / mss : 0;

	f->w_old_q10 = q10 > 0xffffffffULL ? 0xffffffffU : (__u32)q10;
}

/* An ACK during CWR/Recovery: the window is the kernel's; the next update waits a period. */
LH_INLINE void lh_fast_recovery_ack(struct lh_fast *f, __u64 now_us)
{
	f->pending_q10 = 0;
	f->last_update_us = now_us;
	f->has_update = 1;
	f->phase = LH_FAST_PHASE_RECOVERY;
}

/* Queueing delay in µs: avgRTT - baseRTT (0 before the first sample). */
LH_INLINE __u32 lh_fast_qdelay_us(const struct lh_fast *f)
{
	__u64 avg = f->avg_rtt_q8 >> 8;

	return avg > f->base_rtt ? (__u32)(avg - f->base_rtt) : 0;
}

/* w_old·baseRTT/avgRTT in Q10: the part of the window not queued. Rounded, not truncated: the
 * equilibrium must map onto itself. */
LH_INLINE __u64 lh_fast_kept_q10(const struct lh_fast *f, __u64 w_old_q10)
{
	__u64 base_q8 = (__u64)f->base_rtt << 8;
	__u64 ratio_q20 = f->avg_rtt_q8 ? (base_q8 << 20) / f->avg_rtt_q8 : (1ULL << 20);

	if (ratio_q20 > (1ULL << 20))
		ratio_q20 = 1ULL << 20;
	return (w_old_q10 * ratio_q20 + (1ULL << 19)) >> 20;
}

/*
 * The window law in Q10: (1-γ)·w + γ·(baseRTT/avgRTT·w_old + α), [2w cap], floor 2; the
 * window itself (floor 2) while the backlog is in the dead band [α, β).
 */
LH_INLINE __u64 lh_fast_target_q10(const struct lh_fast *f, const struct lh_fast_params *p,
				   __u64 w_q10, __u64 w_old_q10)
{
	__u64 g = p->gamma_q10 > LH_Q10_ONE ? LH_Q10_ONE : p->gamma_q10;
	__u64 alpha_q10 = (__u64)p->alpha << LH_Q10_SHIFT;
	__u64 beta_q10 = p->beta > p->alpha ? (__u64)p->beta << LH_Q10_SHIFT : alpha_q10;
	__u64 kept_q10 = lh_fast_kept_q10(f, w_old_q10), backlog_q10, target;

	/* By Little's law, w_old·q/avgRTT = w_old·(1 - baseRTT/avgRTT) packets queued. */
	backlog_q10 = w_old_q10 - kept_q10;
	if (backlog_q10 >= alpha_q10 && backlog_q10 < beta_q10)
		target = w_q10;
	else
		target = ((LH_Q10_ONE - g) * w_q10 + g * (kept_q10 + alpha_q10) + (1ULL << 9)) >>
			 LH_Q10_SHIFT;
	if (p->min2w_cap && target > 2 * w_q10)
		target = 2 * w_q10;
	if (target < (2ULL << LH_Q10_SHIFT))
		target = 2ULL << LH_Q10_SHIFT;
	return target;
}

LH_INLINE __u64 lh_fast_w_q10(const struct lh_fast *f, const struct lh_window *w)
{
	return ((__u64)w->cwnd << LH_Q10_SHIFT) | f->cwnd_frac_q10;
}

LH_INLINE void lh_fast_set_w_q10(struct lh_fast *f, struct lh_window *w, __u64 w_q10)
{
	__u64 clamp_q10 = (__u64)w->clamp << LH_Q10_SHIFT;

	if (w_q10 > clamp_q10)
		w_q10 = clamp_q10;
	if (w_q10 < LH_Q10_ONE)
		w_q10 = LH_Q10_ONE;
	w->cwnd = (__u32)(w_q10 >> LH_Q10_SHIFT);
	f->cwnd_frac_q10 = (__u32)(w_q10 & (LH_Q10_ONE - 1));
}

/* The window the acknowledged packet was sent with, Q10; the current window while unknown. */
LH_INLINE __u64 lh_fast_w_old_q10(const struct lh_fast *f, const struct lh_window *w)
{
	return f->w_old_q10 ? f->w_old_q10 : lh_fast_w_q10(f, w);
}

/* Release one ACK's share of a paced increase (ns-2 fast_pace). */
LH_INLINE void lh_fast_release_paced(struct lh_fast *f, struct lh_window *w)
{
	__u64 w_q10 = lh_fast_w_q10(f, w), step;

	if (f->pending_q10 == 0)
		return;
	if (w_q10 <= ((__u64)LH_FAST_PACE_SMALL_CWND << LH_Q10_SHIFT))
		step = f->pending_q10 < w_q10 ? f->pending_q10 : w_q10;
	else
		step = f->step_q10 < f->pending_q10 ? f->step_q10 : f->pending_q10;
	f->pending_q10 -= step;
	lh_fast_set_w_q10(f, w, w_q10 + step);
}

/* The periodic update: the window law, then pacing of an increase. */
LH_INLINE void lh_fast_update(struct lh_fast *f, struct lh_window *w,
			      const struct lh_fast_params *p, int cwnd_limited)
{
	__u64 w_q10 = lh_fast_w_q10(f, w);
	__u64 w_old_q10 = lh_fast_w_old_q10(f, w);
	__u64 target = lh_fast_target_q10(f, p, w_q10, w_old_q10);

	f->updates++;
	f->phase = LH_FAST_PHASE_CONVERGE;
	if (target > w_q10 && !cwnd_limited)
		target = w_q10;
	if (target > w_q10 && p->pace_increments && f->base_rtt > LH_FAST_PACE_MIN_BASE_US) {
		/* ACKs per period = acks_per_rtt · period / avgRTT; step = pending / that (>= 1). */
		__u64 acks_per_rtt = f->acks_last_round ? f->acks_last_round : w->cwnd;
		__u64 num = acks_per_rtt * p->update_period_us << 8;

		f->pending_q10 = target - w_q10;
		f->step_q10 = num > f->avg_rtt_q8 ? f->pending_q10 * f->avg_rtt_q8 / num
						  : f->pending_q10;
		lh_fast_release_paced(f, w);
	} else {
		f->pending_q10 = 0;
		lh_fast_set_w_q10(f, w, target);
	}
}

/* cong_avoid (TCP_CA_Open, Disorder or Loss). */
LH_INLINE void lh_fast_cong_avoid(struct lh_fast *f, struct lh_window *w,
				  const struct lh_fast_params *p, __u64 now_us, __u32 acked,
				  int cwnd_limited)
{
	int no_queue, ends_mi, mi, climb;

	if (f->avg_rtt_q8 == 0 || f->base_rtt == 0)
		return;
	no_queue = lh_fast_qdelay_us(f) < p->mi_threshold_us;
	if (!no_queue)
		f->queue_seen_us = now_us;
	/* MI ends at a queue holding mi_backlog of our packets; with period_min, MI only until
	 * the first such queue, then climb once a whole round trip found none (module header).
	 * avgRTT in µs is the sample's, without Vegas's + 1. */
	ends_mi = !no_queue;
	if (ends_mi && p->mi_backlog) {
		__u64 w_old_q10 = lh_fast_w_old_q10(f, w);

		ends_mi = w_old_q10 - lh_fast_kept_q10(f, w_old_q10) >=
			  ((__u64)p->mi_backlog << LH_Q10_SHIFT);
	}
	mi = !ends_mi && !(p->period_min && f->mi_done);
	climb = p->period_min && f->mi_done && p->climb_q10 && no_queue &&
		now_us >= f->queue_seen_us + (f->avg_rtt_q8 >> 8) - 1;
	if (mi || climb) {
		/* MI: no queue of our own yet: grow by what is acknowledged (climb: a share). */
		__u64 w_q10 = lh_fast_w_q10(f, w);
		int full = mi || w_q10 < f->loss_w_q10;

		if (cwnd_limited)
			lh_fast_set_w_q10(f, w, w_q10 + (full ? (__u64)acked << LH_Q10_SHIFT
							     : (__u64)acked * p->climb_q10));
		f->pending_q10 = 0;
		f->phase = LH_FAST_PHASE_MI;
		f->last_update_us = now_us;
		f->has_update = 1;
	} else {
		f->mi_done = 1;
		if ((!f->has_update || now_us >= f->last_update_us + p->update_period_us) &&
		    (f->update_round || !p->every_other_rtt)) {
			lh_fast_update(f, w, p, cwnd_limited);
			f->last_update_us = now_us;
			f->has_update = 1;
		} else {
			if (f->phase != LH_FAST_PHASE_CONVERGE)
				f->phase = LH_FAST_PHASE_CONVERGE;
			lh_fast_release_paced(f, w);
		}
	}
	/* Paced, mark the end of MI in ssthresh, as tcp_vegas.c marks the end of slow start: TCP
	 * paces at tcp_pacing_ca_ratio (120 %) of cwnd/srtt from then on instead of the slow-start
	 * ratio (200 %), which a window below ssthresh/2 gets. */
	if (p->pace && f->mi_done && w->ssthresh == LH_INFINITE_SSTHRESH)
		w->ssthresh = w->cwnd;
}

/*
 * ssthresh on a loss: halve, at least two packets (Reno); drop the unreleased increase. The
 * kernel's recovery ends with cwnd = ssthresh, an integer; the half packet an odd window (and
 * half the fraction) would lose is kept in cwnd_frac_q10, so the window after recovery is
 * exactly half the window before, as the reference's.
 */
LH_INLINE __u32 lh_fast_ssthresh(struct lh_fast *f, __u32 cwnd)
{
	__u32 ssthresh = lh_reno_ssthresh(cwnd);

	f->loss_w_q10 = ((__u64)cwnd << LH_Q10_SHIFT) + f->cwnd_frac_q10;
	f->pending_q10 = 0;
	f->cwnd_frac_q10 = ssthresh == (cwnd >> 1) ? ((cwnd & 1) << 9) | (f->cwnd_frac_q10 >> 1) : 0;
	return ssthresh;
}

/* A retransmission timeout (set_state TCP_CA_Loss, after tcp_enter_loss() set the window): MI
 * again from the window the binding restarts at, no loss window to restore. */
LH_INLINE void lh_fast_timeout(struct lh_fast *f)
{
	f->pending_q10 = 0;
	f->cwnd_frac_q10 = 0;
	f->phase = LH_FAST_PHASE_MI;
	f->mi_done = 0;
	f->loss_w_q10 = 0;
}

#endif /* LH_FAST_H */
