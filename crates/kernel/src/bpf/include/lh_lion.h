/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Lion: rate-based packet-drop avoidance with maximum-burst-size pacing (seed 002, LBNL
 * "Network Lion"; G. Jin, B. Tierney, "Netest", ITRE 2003; M. Jain, C. Dovrolis, SLoPS,
 * SIGCOMM 2002). The algorithm, its reading of the seed and every rule's reason are in the
 * reference, crates/cc/src/algorithms/lion.rs; this header is that state machine in integers,
 * rule for rule:
 *  - once per round trip (a round ends when data sent after it began is acknowledged) the
 *    standing queue q = round's smallest RTT − smallest RTT ever, the peak queue (largest RTT −
 *    smallest ever), the burst queue (largest − smallest RTT of the round), the delivered rate
 *    (largest delivery-rate sample of the round, else acknowledged bytes over the round) and
 *    the available bandwidth drive four phases: startup (rate and MBS double per clear round,
 *    the rate up to half the initial window's train capacity), drop_avoidance (probe a step
 *    from the rate, or from abw when the path has not delivered the rate, a quarter step near
 *    the full rate, the most delivered in a round with a standing queue; step back on a
 *    warning unless another host's burst built it; drain to d·base/(base+q) on a standing
 *    queue, then send d for the round after; table yield to new traffic),
 *    yield (watch the newcomer for yield_rounds) and balance (raise 10 % per round to the
 *    fair share of the path's rate, which becomes a floor), entered from yield or after a
 *    queue stood through more than 2 · yield_rounds drop-avoidance rounds; the floor goes
 *    (for good) when the buffer overflows at it yield_rounds drop-avoidance rounds in a row;
 *  - per ACK with an RTT sample, a rise since the last sample of more than 4 packets beyond
 *    the ACK's own bytes, faster than the link drains, marks the round's peak as another
 *    host's burst;
 *  - the effective queue q_eff, learned at a congestion loss, sets the thresholds (a quarter
 *    and an eighth of it), the warning level (0.35 of it), the burst cap and the probe step;
 *  - a loss is congestion if a standing queue or the warning level preceded it, or 4 losses
 *    and 2 % of the round's packets were lost: then (once per round) q_eff is learned, the
 *    rate cut to max(min(rate, abw)·loss_decrease, floor) and the MBS capped; any other loss
 *    (and any before the first round ends) is random: the rate stays, the MBS shrinks once per
 *    round; losses while yielding or balancing change nothing;
 *  - a retransmission timeout halves the rate, restarts the MBS and forgets floor, capacity
 *    and the last round's queue, and whether the floor was given up;
 *  - cwnd is only a safety cap, cwnd_gain · rate · srtt (at least 4 packets); the rate stays
 *    within [4 packets, clamp packets] per base RTT.
 *
 * Fixed point: times in µs; rates in bytes/s (u64, at most LH_LION_RATE_MAX); the MBS in
 * packets Q10 (it shrinks by fractions); every fractional parameter in Q16 (0.2 is 13107,
 * 0.19999695); srtt in µs·8. Products of a rate and a time or fraction go through
 * lh_lion_mul_div(), which never overflows for such operands.
 *
 * Deviations from the reference, all below its precision or outside its range:
 *  - RTT samples are whole microseconds (the kernel's), at least 1 µs: on loopback a 0 µs
 *    sample would otherwise leave the base RTT undefined; the reference sees nanoseconds.
 *  - the rate never exceeds LH_LION_RATE_MAX (2^40 B/s, 8.8 Tb/s), so that every product
 *    above fits in 64 bits; the reference stops only at clamp packets per base RTT.
 *  - the window is whole packets (round to nearest), the reference's is fractional.
 *  - rounds are counted in sequence space (snd_una passing the snd_nxt recorded when the
 *    round began), as FAST's; the reference counts packet numbers.
 *  - the per-round sample counters are flags: the reference only ever tests them for zero.
 *  - yield_round counts the rounds of yield, and in drop_avoidance those with a standing
 *    queue (the reference's two counters; each is zeroed on entering its phase); it and
 *    overflowing are 8 bits (saturating; the reference compares them with 2 · yield_rounds).
 *  - the fixed shares are integer fractions (the warning level 7/20 of q_eff, the step 1/16
 *    of it, the loss share 1/50); the train's rate, the capacity, the full rate and the floor
 *    are kept in units of 64 B/s (rounded down; saturating at 2^38 B/s, 2.2 Tb/s); q and the
 *    peak are whole µs (the reference's whole ns); random_losses,
 *    r_lost and init_cwnd are 16 bits (saturating): the state must fit icsk_ca_priv.
 *  - the kernel cannot send bursts of exactly the MBS: see lion.bpf.c for what bounds a burst.
 */
#ifndef LH_LION_H
#define LH_LION_H

#include "lh_types.h"

#define LH_Q16_SHIFT 16
#define LH_Q16_ONE (1U << LH_Q16_SHIFT)
#define LH_USEC_PER_SEC 1000000U
#define LH_LION_RATE_MAX (1ULL << 40)
/* The rate never falls below this many packets per base RTT (nor the window below this many). */
#define LH_LION_MIN_PIPE 4
/* No RTT sample in the round yet. */
#define LH_LION_NO_RTT 0xffffffffU
/* The smallest queueing delay taken as a signal, µs. */
#define LH_LION_MIN_QUEUE_SIGNAL 20
/* A queue standing this many times yield_rounds drop-avoidance rounds is a competitor's. */
#define LH_LION_STANDING_FACTOR 2
/* Startup doubles up to half the train's capacity. */
#define LH_LION_STARTUP_TRAIN_DIV 2
/* In startup a burst queues at most 1/8 of queue_threshold at the path's rate. */
#define LH_LION_STARTUP_BURST_DIV 8
/* In startup, a peak queue above one of our bursts by 1/4 of the queue threshold is cross
 * traffic's. */
#define LH_LION_CROSS_PEAK_DIV 4
/* The warning level: 7/20 (0.35) of the effective queue. */
#define LH_LION_WARN_NUM 7
#define LH_LION_WARN_DEN 20
/* A probe step queues at most 1/16 of the effective queue per round. */
#define LH_LION_STEP_DIV 16
/* A round with at least 4 losses and at least 1/50 of its packets lost is congestion. */
#define LH_LION_RANDOM_LOSS_BURST 4
#define LH_LION_RANDOM_LOSS_DIV 50
/* The train's rate, the capacity, the full rate and the floor are kept in units of 64 B/s. */
#define LH_LION_TRAIN_SHIFT 6
/* Near the full rate a probe step is probe_gain >> 2 of the rate. */
#define LH_LION_NEAR_SHIFT 2
/* A rise of the queue between two RTT samples, beyond our own bytes, of more than this many
 * packets at the path's rate (and faster than the link drains) is other traffic's burst. */
#define LH_LION_FOREIGN_RISE 4
/* No warning level (the effective queue is not known). */
#define LH_LION_NO_LEVEL 0xffffffffU

struct lh_lion_params {
	__u32 queue_threshold_us; /* queueing delay above which a queue exists */
	__u32 rise_threshold_us;  /* growth of q per round that counts as rising */
	__u32 mbs_initial_q10;    /* packets, Q10 */
	__u32 mbs_max_q10;        /* packets, Q10 */
	__u32 mbs_step_q10;       /* packets, Q10 */
	__u32 mbs_decrease_q16;
	__u32 startup_gain_q16;
	__u32 probe_gain_q16;
	__u32 compete_drop_q16;
	__u32 loss_decrease_q16;
	__u32 shuffle_scale_q16;
	__u32 yield_rounds;
	__u32 balance_gain_q16;
	__u32 balance_share_q16;
	__u32 cwnd_gain_q16;
};

#define LH_LION_STARTUP 0
#define LH_LION_DROP_AVOIDANCE 1
#define LH_LION_YIELD 2
#define LH_LION_BALANCE 3

/* Round flags. */
#define LH_LION_R_RATE_SAMPLE 1 /* a delivery-rate sample arrived */
#define LH_LION_R_FULL_SAMPLE 2 /* ... one not application-limited */
#define LH_LION_R_CWND_LIMITED 4 /* an ACK was sent while window-limited */
#define LH_LION_R_REDUCED 8     /* a congestion loss already cut the rate */
#define LH_LION_R_BURST_CUT 16  /* a random loss already shrank the burst */
#define LH_LION_R_FOREIGN 32    /* other traffic's burst grew the queue faster than it drains */

/* Connection flags. */
#define LH_LION_F_HAS_Q_PREV 1   /* q_prev and peak_prev hold a completed round's */
#define LH_LION_F_SETTLED 2      /* a round has completed: the base RTT is measured */
#define LH_LION_F_TRAIN 4        /* the initial window's train was measured */
#define LH_LION_F_CUT 8          /* the rate was cut since the last round ended */
#define LH_LION_F_UNRESPONSIVE 16 /* balancing gave up: the traffic beside us ignores loss */
#define LH_LION_F_DRAINED 32     /* the last round set the rate to drain its queue */
#define LH_LION_F_DRAINING 64    /* this round sets it (LH_LION_F_DRAINED << 1) */

struct lh_lion {
	__u64 rate;     /* pacing rate, bytes/s; 0 until the first RTT sample */
	__u64 abw;      /* available-bandwidth estimate, bytes/s */
	__u64 r_max_rate;   /* round: largest delivery-rate sample, bytes/s */
	__u32 r_start_us;   /* round: when it began (low 32 bits of the µs clock) */
	__u32 r_min_rtt;    /* round: smallest RTT sample, µs (LH_LION_NO_RTT: none) */
	__u32 r_max_rtt;    /* round: largest RTT sample, µs */
	__u32 r_acked;      /* round: bytes acknowledged (saturating) */
	__u32 mbs_q10;      /* maximum burst size, packets Q10 */
	__u32 base_rtt;     /* smallest RTT sample, µs; 0 before the first */
	__u32 srtt_q3;      /* EWMA (1/8) of the samples, µs·8; 0 before the first */
	__u32 q_prev;       /* queueing delay of the last completed round, µs */
	__u32 round_end;    /* ACKing beyond this sequence ends the round */
	__u32 q_eff;        /* effective queue, µs; 0 until a congestion loss */
	__u32 peak_prev;    /* largest queueing delay of the last completed round, µs */
	__u32 train;        /* the initial window's train, bytes/s >> LH_LION_TRAIN_SHIFT */
	__u32 r_last_us;    /* round: when its last ACK came (low 32 bits of the µs clock) */
	__u32 floor;        /* balancing's floor, bytes/s >> LH_LION_TRAIN_SHIFT (0: none) */
	__u32 last_rtt;     /* the last RTT sample, µs (0: none yet) */
	__u32 capacity;     /* largest delivered rate seen, bytes/s >> LH_LION_TRAIN_SHIFT */
	__u32 full;         /* most delivered in a round a queue stood, >> LH_LION_TRAIN_SHIFT */
	__u16 random_losses; /* saturating */
	__u16 init_cwnd;    /* packets per first RTT */
	__u16 r_lost;       /* round: packets declared lost (saturating) */
	__u8 yield_round;   /* yield: rounds spent in it; drop_avoidance: rounds a queue stood */
	__u8 overflowing;   /* drop_avoidance rounds in a row the buffer overflowed at the floor */
	__u8 phase;         /* LH_LION_* */
	__u8 r_flags;       /* LH_LION_R_* */
	__u8 flags;         /* LH_LION_F_* */
};

/*
 * a·b/c without overflow for b, c < 2^32: (a/c)·b + (a%c)·b/c. A result of 2^63 or more
 * saturates to 2^64 − 1. (The overflow test is written on the high half: `q > ~0 / b` would
 * compile to a 128-bit multiply, which BPF does not have.)
 */
LH_INLINE __u64 lh_lion_mul_div(__u64 a, __u64 b, __u64 c)
{
	__u64 q, r;

	if (c == 0)
		return ~0ULL;
	q = a / c;
	r = a % c;
	if (((q >> 32) * b) >> 31)
		return ~0ULL;
	return q * b + r * b / c;
}

/* x·f for a Q16 fraction f. */
LH_INLINE __u64 lh_lion_scale(__u64 x, __u32 f_q16)
{
	return lh_lion_mul_div(x, f_q16, LH_Q16_ONE);
}

LH_INLINE void lh_lion_new_round(struct lh_lion *l, __u64 now_us)
{
	l->r_max_rate = 0;
	l->r_start_us = (__u32)now_us;
	l->r_min_rtt = LH_LION_NO_RTT;
	l->r_max_rtt = 0;
	l->r_acked = 0;
	l->r_last_us = (__u32)now_us;
	l->r_lost = 0;
	l->r_flags = 0;
}

LH_INLINE void lh_lion_init(struct lh_lion *l, const struct lh_lion_params *p, __u32 snd_nxt,
			    __u32 init_cwnd, __u64 now_us)
{
	l->rate = 0;
	l->abw = 0;
	l->capacity = 0;
	l->full = 0;
	l->floor = 0;
	l->last_rtt = 0;
	l->overflowing = 0;
	l->mbs_q10 = p->mbs_initial_q10;
	l->base_rtt = 0;
	l->srtt_q3 = 0;
	l->q_prev = 0;
	l->q_eff = 0;
	l->peak_prev = 0;
	l->train = 0;
	l->flags = 0;
	l->round_end = snd_nxt;
	l->random_losses = 0;
	l->init_cwnd = init_cwnd == 0 ? 1 : init_cwnd > 0xffff ? 0xffff : (__u16)init_cwnd;
	l->yield_round = 0;
	l->phase = LH_LION_STARTUP;
	lh_lion_new_round(l, now_us);
}

/* The rate within [4 packets, clamp packets] per base RTT (base unknown: 1 s and 1 µs). */
LH_INLINE void lh_lion_set_rate(struct lh_lion *l, __u64 rate, __u32 mss, __u32 clamp)
{
	__u64 lo_base = l->base_rtt ? l->base_rtt : LH_USEC_PER_SEC;
	__u64 hi_base = l->base_rtt ? l->base_rtt : 1;
	__u64 lo = lh_lion_mul_div((__u64)LH_LION_MIN_PIPE * mss, LH_USEC_PER_SEC, lo_base);
	__u64 hi = lh_lion_mul_div((__u64)clamp * mss, LH_USEC_PER_SEC, hi_base);

	if (hi > LH_LION_RATE_MAX)
		hi = LH_LION_RATE_MAX;
	if (rate < lo)
		rate = lo;
	if (rate > hi)
		rate = hi;
	l->rate = rate;
}

/* The bottleneck's rate as far as we know it: the largest delivered rate or the train's. */
LH_INLINE __u64 lh_lion_path_rate(const struct lh_lion *l)
{
	__u64 t = (__u64)l->train << LH_LION_TRAIN_SHIFT;
	__u64 c = (__u64)l->capacity << LH_LION_TRAIN_SHIFT;

	return c > t ? c : t;
}

/* Balancing's floor, bytes/s (0: none). */
LH_INLINE __u64 lh_lion_floor(const struct lh_lion *l)
{
	return (__u64)l->floor << LH_LION_TRAIN_SHIFT;
}

/* A rate in units of 64 B/s, saturating at 2^38 B/s. */
LH_INLINE __u32 lh_lion_units(__u64 rate)
{
	rate >>= LH_LION_TRAIN_SHIFT;
	return rate > 0xffffffffULL ? 0xffffffffU : (__u32)rate;
}

LH_INLINE void lh_lion_set_floor(struct lh_lion *l, __u64 floor)
{
	l->floor = lh_lion_units(floor);
}

/* x/div clamped to [LH_LION_MIN_QUEUE_SIGNAL, cap]: the learned thresholds. */
LH_INLINE __u32 lh_lion_learned(__u32 x, __u32 div, __u32 cap)
{
	__u32 t = x / div;

	if (t < LH_LION_MIN_QUEUE_SIGNAL)
		t = LH_LION_MIN_QUEUE_SIGNAL;
	return t > cap ? cap : t;
}

/* Standing queueing delay that counts as a queue, µs. */
LH_INLINE __u32 lh_lion_queue_thr(const struct lh_lion *l, const struct lh_lion_params *p)
{
	return l->q_eff ? lh_lion_learned(l->q_eff, 4, p->queue_threshold_us)
			: p->queue_threshold_us;
}

/* Growth of the standing queue per round that counts as rising, µs. */
LH_INLINE __u32 lh_lion_rise_thr(const struct lh_lion *l, const struct lh_lion_params *p)
{
	return l->q_eff ? lh_lion_learned(l->q_eff, 8, p->rise_threshold_us)
			: p->rise_threshold_us;
}

/* Queueing delay that warns of losses to come, µs (LH_LION_NO_LEVEL before q_eff). */
LH_INLINE __u32 lh_lion_warn_thr(const struct lh_lion *l)
{
	__u64 w;

	if (!l->q_eff)
		return LH_LION_NO_LEVEL;
	w = (__u64)l->q_eff * LH_LION_WARN_NUM / LH_LION_WARN_DEN;
	return w < LH_LION_MIN_QUEUE_SIGNAL ? LH_LION_MIN_QUEUE_SIGNAL : (__u32)w;
}

/* The queueing delay one of our bursts causes at the bottleneck, µs (0: rate unknown). */
LH_INLINE __u32 lh_lion_own_burst_us(const struct lh_lion *l, __u32 mss)
{
	__u64 c = lh_lion_path_rate(l), us;

	if (c == 0)
		return 0;
	us = lh_lion_mul_div(((__u64)l->mbs_q10 * mss) >> LH_Q10_SHIFT, LH_USEC_PER_SEC, c);
	return us > 0xfffffffeULL ? 0xfffffffeU : (__u32)us;
}

/* The largest burst the queue takes without worry, packets Q10 (~0: no cap). */
LH_INLINE __u64 lh_lion_mbs_cap_q10(const struct lh_lion *l, const struct lh_lion_params *p,
				    __u32 mss)
{
	__u64 c = lh_lion_path_rate(l), bytes, q10;

	if (c == 0 || mss == 0)
		return ~0ULL;
	if (l->q_eff) {
		bytes = lh_lion_mul_div(c, (__u64)l->q_eff * LH_LION_WARN_NUM,
					2ULL * LH_LION_WARN_DEN * LH_USEC_PER_SEC);
		q10 = lh_lion_mul_div(bytes, LH_Q10_ONE, mss);
		return q10 < LH_Q10_ONE ? LH_Q10_ONE : q10;
	}
	bytes = lh_lion_mul_div(c, p->queue_threshold_us, 2ULL * LH_USEC_PER_SEC);
	q10 = lh_lion_mul_div(bytes, LH_Q10_ONE, mss);
	return q10 < p->mbs_initial_q10 ? p->mbs_initial_q10 : q10;
}

/* Grow the burst to `to`, never beyond mbs_max, the queue's cap nor one base RTT at the pacing
 * rate; at least one packet. */
LH_INLINE void lh_lion_grow_mbs(struct lh_lion *l, const struct lh_lion_params *p, __u64 to_q10,
				__u32 mss)
{
	__u64 cap = lh_lion_mbs_cap_q10(l, p, mss);

	if (l->base_rtt && mss) {
		__u64 pipe = lh_lion_mul_div(l->rate, l->base_rtt, LH_USEC_PER_SEC);
		__u64 pipe_q10 = lh_lion_mul_div(pipe, LH_Q10_ONE, mss);

		if (pipe_q10 < l->mbs_q10)
			pipe_q10 = l->mbs_q10;
		if (to_q10 > pipe_q10)
			to_q10 = pipe_q10;
	}
	if (to_q10 > p->mbs_max_q10)
		to_q10 = p->mbs_max_q10;
	if (to_q10 > cap)
		to_q10 = cap;
	l->mbs_q10 = to_q10 < LH_Q10_ONE ? LH_Q10_ONE : (__u32)to_q10;
}

/* The largest burst startup grows to, packets Q10: the path's rate for 1/8 of
 * queue_threshold, at least mbs_initial. No overflow: the rate is below 2^41 B/s and the
 * threshold below 2^20 µs. Plain arithmetic, no branches: the verifier's budget for the
 * cong_control program is nearly spent. */
LH_INLINE __u64 lh_lion_startup_mbs_cap_q10(const struct lh_lion *l,
					    const struct lh_lion_params *p, __u32 mss)
{
	__u64 bytes = lh_lion_path_rate(l) * p->queue_threshold_us /
		      ((__u64)LH_LION_STARTUP_BURST_DIV * LH_USEC_PER_SEC);

	__u64 q10 = (bytes << 10) / (mss + !mss);

	return q10 > p->mbs_initial_q10 ? q10 : p->mbs_initial_q10;
}

LH_INLINE void lh_lion_shrink_mbs(struct lh_lion *l, const struct lh_lion_params *p)
{
	__u64 m = lh_lion_scale(l->mbs_q10, p->mbs_decrease_q16);

	l->mbs_q10 = m < LH_Q10_ONE ? LH_Q10_ONE : (__u32)m;
}

/* The rate one clear round adds, bytes/s: probe_gain of the rate, at least a packet per base
 * RTT, and once q_eff is known at most what queues 1/16 of it in one round. */
LH_INLINE __u64 lh_lion_probe_step(const struct lh_lion *l, const struct lh_lion_params *p,
				   __u32 mss, int near)
{
	__u64 step = lh_lion_scale(l->rate, p->probe_gain_q16), one;

	if (near)
		step >>= LH_LION_NEAR_SHIFT;

	if (!l->base_rtt)
		return step;
	if (l->q_eff) {
		__u64 cap = lh_lion_mul_div(lh_lion_path_rate(l), l->q_eff,
					    (__u64)LH_LION_STEP_DIV * l->base_rtt);

		if (cap < step)
			step = cap;
	}
	one = lh_lion_mul_div(mss, LH_USEC_PER_SEC, l->base_rtt);
	return step > one ? step : one;
}

/* A round with a standing queue, not application-limited, that delivered more than the full
 * rate raises it. Not inlined: a branch on queued and app ahead of the decisions lets the
 * compiler duplicate them per outcome, past the verifier's limit. */
LH_NOINLINE void lh_lion_note_full(struct lh_lion *l, __u64 delivered, int queued, int app)
{
	if (queued && !app && delivered > (__u64)l->full << LH_LION_TRAIN_SHIFT)
		l->full = lh_lion_units(delivered);
}

/* Near the most the path delivered with a queue standing (within probe_gain below it) a probe
 * step is fine, unless the round delivered more than that by more than a fine step. */
LH_INLINE int lh_lion_near(const struct lh_lion *l, const struct lh_lion_params *p,
			   __u64 delivered)
{
	__u64 full = (__u64)l->full << LH_LION_TRAIN_SHIFT, g;

	if (!full)
		return 0;
	g = lh_lion_scale(full, p->probe_gain_q16);
	return l->rate >= full - g && delivered <= full + (g >> LH_LION_NEAR_SHIFT);
}

/* Lower the rate to factor of min(rate, abw) (not below the floor), take that as abw, mark the
 * cut and shrink the burst. */
LH_INLINE void lh_lion_back_off(struct lh_lion *l, const struct lh_lion_params *p,
				__u32 factor_q16, __u32 mss, __u32 clamp)
{
	__u64 from = l->abw > 0 && l->abw < l->rate ? l->abw : l->rate;

	from = lh_lion_scale(from, factor_q16);
	lh_lion_set_rate(l, from > lh_lion_floor(l) ? from : lh_lion_floor(l), mss, clamp);
	l->abw = l->rate;
	l->flags |= LH_LION_F_CUT;
	lh_lion_shrink_mbs(l, p);
}

/* The initial window's train: bytes after the round's first ACK over their spread, if at least
 * two packets within a quarter of the RTT; else 0. */
LH_INLINE void lh_lion_measure_train(struct lh_lion *l, __u32 mss)
{
	__u32 span = l->r_last_us - l->r_start_us;
	__u64 t = 0;

	/* Nothing to measure yet (the handshake's round, or a train cut short): the next round
	 * tries. */
	if ((__u64)l->r_acked < 2ULL * mss)
		return;
	if (span > 0 && 4ULL * span <= l->r_min_rtt)
		t = lh_lion_mul_div(l->r_acked, LH_USEC_PER_SEC, span) >> LH_LION_TRAIN_SHIFT;
	l->train = t > 0xffffffffULL ? 0xffffffffU : (__u32)t;
	l->flags |= LH_LION_F_TRAIN;
}

/* One step of the shuffle table's decade search: no loop on the per-ACK path. */
#define LH_LION_DECADE_STEP(decade, bits)                                  \
	do {                                                               \
		if ((decade) <= (bits) / 10)                               \
			(decade) *= 10;                                    \
	} while (0)

/*
 * The shuffle table (reference: shuffle_yield): within the decade [1, 10)·10^k b/s of the
 * rate, mantissa >= 5 yields 2·10^k, >= 1.5 yields 10^k, below 0.5·10^k. In half bits/s, so
 * that the 0.5 of the lowest row is whole. 2^40 B/s is below 10^13 b/s: 13 steps suffice.
 */
LH_INLINE __u64 lh_lion_shuffle_half_bits(__u64 rate_bytes)
{
	__u64 bits = rate_bytes * 8, decade = 1;

	if (bits == 0)
		return 0;
	LH_LION_DECADE_STEP(decade, bits);
	LH_LION_DECADE_STEP(decade, bits);
	LH_LION_DECADE_STEP(decade, bits);
	LH_LION_DECADE_STEP(decade, bits);
	LH_LION_DECADE_STEP(decade, bits);
	LH_LION_DECADE_STEP(decade, bits);
	LH_LION_DECADE_STEP(decade, bits);
	LH_LION_DECADE_STEP(decade, bits);
	LH_LION_DECADE_STEP(decade, bits);
	LH_LION_DECADE_STEP(decade, bits);
	LH_LION_DECADE_STEP(decade, bits);
	LH_LION_DECADE_STEP(decade, bits);
	LH_LION_DECADE_STEP(decade, bits);
	LH_LION_DECADE_STEP(decade, bits);
	if (bits >= 5 * decade)
		return 4 * decade;
	if (2 * bits >= 3 * decade)
		return 2 * decade;
	return decade;
}

/* Bytes/s to yield to new traffic at the current rate: the table scaled by shuffle_scale. */
LH_INLINE __u64 lh_lion_yield_amount(const struct lh_lion *l, const struct lh_lion_params *p)
{
	return lh_lion_mul_div(lh_lion_shuffle_half_bits(l->rate), p->shuffle_scale_q16,
			       16ULL << LH_Q16_SHIFT);
}

/* Whether the last round, or the current one so far, showed a standing queue. */
LH_INLINE int lh_lion_queue_seen(const struct lh_lion *l, const struct lh_lion_params *p)
{
	__u32 thr = lh_lion_queue_thr(l, p);

	if ((l->flags & LH_LION_F_HAS_Q_PREV) && l->q_prev > thr)
		return 1;
	return l->r_min_rtt != LH_LION_NO_RTT && l->base_rtt && l->r_min_rtt > l->base_rtt &&
	       l->r_min_rtt - l->base_rtt > thr;
}

/* The largest queueing delay of the last round and the current one so far, µs. */
LH_INLINE __u32 lh_lion_recent_peak(const struct lh_lion *l)
{
	__u32 now = l->r_max_rtt > l->base_rtt ? l->r_max_rtt - l->base_rtt : 0;

	return now > l->peak_prev ? now : l->peak_prev;
}

/* Whether a loss now is congestion: a standing queue, a queue at the warning level (before
 * q_eff: beyond one of our bursts), or more losses in the round than random loss explains. */
LH_INLINE int lh_lion_loss_is_congestion(const struct lh_lion *l, const struct lh_lion_params *p,
					 __u32 mss)
{
	__u64 level = l->q_eff ? lh_lion_warn_thr(l)
			       : (__u64)lh_lion_own_burst_us(l, mss) + LH_LION_MIN_QUEUE_SIGNAL;
	int many = l->r_lost >= LH_LION_RANDOM_LOSS_BURST &&
		   (__u64)l->r_lost * LH_LION_RANDOM_LOSS_DIV * mss >= l->r_acked;

	return lh_lion_queue_seen(l, p) || lh_lion_recent_peak(l) >= level || many;
}

/* The sender did not use its rate in this round (every rate sample application-limited, or
 * without rate samples no ACK window-limited). */
LH_INLINE int lh_lion_app_limited(const struct lh_lion *l)
{
	if (l->r_flags & LH_LION_R_RATE_SAMPLE)
		return !(l->r_flags & LH_LION_R_FULL_SAMPLE);
	return !(l->r_flags & LH_LION_R_CWND_LIMITED);
}

/* Enter a phase: its round counter starts at 0. */
LH_INLINE void lh_lion_enter(struct lh_lion *l, __u8 phase)
{
	l->phase = phase;
	l->yield_round = 0;
}

/* The once-per-round decisions of the state machine. */
LH_INLINE void lh_lion_end_round(struct lh_lion *l, const struct lh_lion_params *p,
				 __u64 now_us, __u32 mss, __u32 clamp)
{
	__u64 base = l->base_rtt, delivered, drain, fair, cd_keep, warn_at, own;
	__u32 q, peak, secs_us, thr, rise_thr, burst_thr;
	int queued, warned, burst_queue, rising, squeezed, app, stale;

	if (l->r_min_rtt == LH_LION_NO_RTT)
		return;
	q = l->r_min_rtt > l->base_rtt ? l->r_min_rtt - l->base_rtt : 0;
	peak = l->r_max_rtt > l->base_rtt ? l->r_max_rtt - l->base_rtt : 0;
	secs_us = (__u32)now_us - l->r_start_us;
	if (l->r_max_rate > 0)
		delivered = l->r_max_rate;
	else if (secs_us > 0)
		delivered = lh_lion_mul_div(l->r_acked, LH_USEC_PER_SEC, secs_us);
	else
		delivered = 0;
	if (delivered > LH_LION_RATE_MAX)
		delivered = LH_LION_RATE_MAX;
	if (!(l->flags & LH_LION_F_TRAIN))
		lh_lion_measure_train(l, mss);
	thr = lh_lion_queue_thr(l, p);
	rise_thr = lh_lion_rise_thr(l, p);
	own = lh_lion_own_burst_us(l, mss);
	warn_at = l->q_eff ? (__u64)lh_lion_warn_thr(l) + own : ~0ULL;
	queued = q > thr;
	/* The queue reached the warning level at some moment of the round. */
	warned = peak >= warn_at;
	/* Queueing that builds and drains within the round beyond what one of our bursts
	 * explains. */
	burst_thr = own > thr ? (__u32)own : thr;
	burst_queue = l->r_max_rtt > l->r_min_rtt && l->r_max_rtt - l->r_min_rtt > burst_thr;
	rising = queued && (l->flags & LH_LION_F_HAS_Q_PREV) && q > l->q_prev &&
		 q - l->q_prev > rise_thr;
	cd_keep = LH_Q16_ONE - (p->compete_drop_q16 < LH_Q16_ONE ? p->compete_drop_q16 : 0);
	squeezed = (delivered << LH_Q16_SHIFT) < cd_keep * l->rate;
	drain = lh_lion_mul_div(delivered, base, base + q);
	app = lh_lion_app_limited(l);
	/* A round right after a cut still delivers what was sent before it. */
	stale = l->flags & LH_LION_F_CUT;
	l->flags &= ~LH_LION_F_CUT;
	/* A loss cut the rate during this round: the next round's ACKs still acknowledge what
	 * left before the cut. */
	if (l->r_flags & LH_LION_R_REDUCED)
		l->flags |= LH_LION_F_CUT;
	if (delivered > (__u64)l->capacity << LH_LION_TRAIN_SHIFT)
		l->capacity = lh_lion_units(delivered);
	/* The full rate changes only in a round with a queue; lh_lion_near() reads it only in
	 * one without. */
	lh_lion_note_full(l, delivered, queued, app);

	if (queued)
		l->abw = delivered;
	else if (!stale && delivered > l->abw)
		l->abw = delivered;
	fair = lh_lion_scale(lh_lion_path_rate(l), p->balance_share_q16);
	if (l->phase == LH_LION_DROP_AVOIDANCE)
		l->yield_round = queued ? (l->yield_round == 0xff ? 0xff : l->yield_round + 1) : 0;
	/* Drop-avoidance rounds in a row in which the buffer overflowed at the floor: a
	 * loss-based competitor backs off after its overflow; traffic that keeps it overflowing
	 * while we hold our share ignores loss, and the share is not ours to defend. */
	if (l->floor && l->phase == LH_LION_DROP_AVOIDANCE && queued &&
	    (l->r_flags & LH_LION_R_REDUCED))
		l->overflowing = l->overflowing == 0xff ? 0xff : l->overflowing + 1;
	else
		l->overflowing = 0;
	if ((__u32)l->overflowing >= p->yield_rounds) {
		l->floor = 0;
		l->flags |= LH_LION_F_UNRESPONSIVE;
		l->overflowing = 0;
		lh_lion_set_rate(l, l->rate < drain ? l->rate : drain, mss, clamp);
		goto done;
	}

	switch (l->phase) {
	case LH_LION_STARTUP:
		if (queued) {
			lh_lion_enter(l, LH_LION_DROP_AVOIDANCE);
			l->flags |= LH_LION_F_DRAINING;
			lh_lion_set_rate(l, drain, mss, clamp);
		} else if (warned) {
			lh_lion_enter(l, LH_LION_DROP_AVOIDANCE);
			lh_lion_back_off(l, p, LH_Q16_ONE - p->probe_gain_q16, mss, clamp);
		} else if (!app) {
			/* Double, but only up to half the train's capacity; not at all once a
			 * round after the first (whose peak is the initial window's train) peaked
			 * above one of our bursts: cross traffic's bursts queue at moments. Read
			 * here, where it is used: a flag kept live across the whole round would
			 * double the verifier's states. */
			__u64 target = l->train ? ((__u64)l->train << LH_LION_TRAIN_SHIFT) /
							  LH_LION_STARTUP_TRAIN_DIV
						: ~0ULL;
			__u64 doubled = lh_lion_scale(l->rate, p->startup_gain_q16);

			if ((l->flags & LH_LION_F_SETTLED) &&
			    (__u64)peak > own + thr / LH_LION_CROSS_PEAK_DIV)
				target = 0;

			if (doubled >= target) {
				lh_lion_enter(l, LH_LION_DROP_AVOIDANCE);
				lh_lion_set_rate(l, l->rate > target ? l->rate : target, mss, clamp);
			} else {
				lh_lion_set_rate(l, doubled, mss, clamp);
			}
			{
				__u64 to = burst_queue ? (__u64)l->mbs_q10 + p->mbs_step_q10
						       : 2ULL * l->mbs_q10;
				__u64 cap = lh_lion_startup_mbs_cap_q10(l, p, mss);

				lh_lion_grow_mbs(l, p, to < cap ? to : cap, mss);
			}
		}
		break;
	case LH_LION_DROP_AVOIDANCE:
		if (!queued && !warned) {
			if (!app) {
				/* Back to the available bandwidth after a drain, else probe from our
				 * rate if the path delivered it, from abw if not. An abw within 2^-10
				 * above the rate is the rate: whole-µs sample intervals measure a
				 * rate only that well. Below half the path's rate the round answers the
				 * rate before the last step. */
				__u64 next, from = l->rate, answered = l->rate;
				__u64 step = lh_lion_probe_step(l, p, mss,
								lh_lion_near(l, p, delivered));

				if (l->rate < lh_lion_path_rate(l) / LH_LION_STARTUP_TRAIN_DIV)
					answered = l->rate > step ? l->rate - step : 0;
				if (l->rate < l->abw - (l->abw >> 10)) {
					next = l->abw;
				} else {
					if ((delivered << LH_Q16_SHIFT) <
						    (__u64)(LH_Q16_ONE - p->probe_gain_q16) * answered &&
					    l->abw < l->rate)
						from = l->abw;
					next = from + step;
				}
				lh_lion_set_rate(l, next, mss, clamp);
			}
			if (burst_queue)
				lh_lion_shrink_mbs(l, p);
			else if (!app)
				lh_lion_grow_mbs(l, p, (__u64)l->mbs_q10 + p->mbs_step_q10, mss);
		} else if (!queued) {
			/* Warned: step back before the queue overflows, unless other traffic's
			 * burst built the peak faster than the link drains it. */
			if (!(l->r_flags & LH_LION_R_FOREIGN))
				lh_lion_back_off(l, p, LH_Q16_ONE - p->probe_gain_q16, mss, clamp);
		} else if (l->floor && (delivered << LH_Q16_SHIFT) < cd_keep * fair) {
			/* The known aggressive competitor pushed us below our share again. */
			lh_lion_enter(l, LH_LION_BALANCE);
		} else if ((__u32)l->yield_round > LH_LION_STANDING_FACTOR * p->yield_rounds &&
			   l->floor == 0 && !(l->flags & LH_LION_F_UNRESPONSIVE) && delivered < fair &&
			   !app) {
			/* We drained for many rounds and the queue still stands: a competitor keeps
			 * it full and does not share by delay. */
			lh_lion_set_floor(l, fair);
			lh_lion_enter(l, LH_LION_BALANCE);
		} else if (rising && squeezed && !app && l->floor == 0) {
			__u64 y = lh_lion_yield_amount(l, p);

			lh_lion_set_rate(l, l->rate > y ? l->rate - y : 0, mss, clamp);
			lh_lion_shrink_mbs(l, p);
			lh_lion_enter(l, LH_LION_YIELD);
		} else if (rising) {
			l->flags |= LH_LION_F_DRAINING;
			lh_lion_set_rate(l, drain > lh_lion_floor(l) ? drain : lh_lion_floor(l), mss,
					 clamp);
		} else if (l->flags & LH_LION_F_DRAINED) {
			/* The last round's drain empties the queue its round showed; this round's
			 * samples left before it took effect: send what the path delivers. */
			lh_lion_set_rate(l, delivered > lh_lion_floor(l) ? delivered : lh_lion_floor(l),
					 mss, clamp);
		} else {
			/* A queue stands: send what is delivered, less what drains it. */
			__u64 held = l->rate < drain ? l->rate : drain;

			l->flags |= LH_LION_F_DRAINING;
			lh_lion_set_rate(l, held > lh_lion_floor(l) ? held : lh_lion_floor(l), mss,
					 clamp);
		}
		if (queued && burst_queue)
			lh_lion_shrink_mbs(l, p);
		break;
	case LH_LION_YIELD:
		if (l->yield_round == 0) {
			/* This round still carried the queue built before the yield took effect. */
			l->yield_round = 1;
		} else if (!queued) {
			lh_lion_enter(l, LH_LION_DROP_AVOIDANCE);
		} else if ((rising || squeezed) && !(l->flags & LH_LION_F_UNRESPONSIVE)) {
			lh_lion_set_floor(l, fair);
			lh_lion_enter(l, LH_LION_BALANCE);
		} else if ((__u32)l->yield_round >= p->yield_rounds) {
			lh_lion_enter(l, LH_LION_DROP_AVOIDANCE);
		} else {
			l->yield_round++;
		}
		break;
	default: /* LH_LION_BALANCE */
		if (delivered >= fair) {
			lh_lion_enter(l, LH_LION_DROP_AVOIDANCE);
		} else {
			__u64 raised = l->rate + lh_lion_scale(l->rate, p->balance_gain_q16);

			if (raised > lh_lion_path_rate(l))
				raised = lh_lion_path_rate(l);
			lh_lion_set_rate(l, raised > l->rate ? raised : l->rate, mss, clamp);
			lh_lion_grow_mbs(l, p, (__u64)l->mbs_q10 + p->mbs_step_q10, mss);
		}
		break;
	}
done:
	l->q_prev = q;
	l->peak_prev = peak;
	l->flags |= LH_LION_F_HAS_Q_PREV | LH_LION_F_SETTLED;
	/* This round's drain is the next round's "drained", without a branch (a flag live across
	 * the decisions would double the verifier's states). */
	l->flags = (l->flags & ~(LH_LION_F_DRAINED | LH_LION_F_DRAINING)) |
		   ((l->flags & LH_LION_F_DRAINING) >> 1);
}

/*
 * The safety window in packets: cwnd_gain · rate · srtt, at least 4, at most clamp, rounded
 * to nearest; 0 while there is no rate or no RTT (the window stays as it is).
 */
LH_INLINE __u32 lh_lion_cwnd(const struct lh_lion *l, const struct lh_lion_params *p, __u32 mss,
			     __u32 clamp)
{
	__u64 bytes, w;

	if (l->rate == 0 || l->srtt_q3 == 0 || mss == 0)
		return 0;
	bytes = lh_lion_mul_div(l->rate, l->srtt_q3, 8ULL * LH_USEC_PER_SEC);
	/* packets · 2, for rounding */
	w = lh_lion_mul_div(bytes, p->cwnd_gain_q16, (__u64)mss << (LH_Q16_SHIFT - 1));
	w = (w + 1) >> 1;
	if (w < LH_LION_MIN_PIPE)
		w = LH_LION_MIN_PIPE;
	if (w > clamp)
		w = clamp;
	return (__u32)w;
}

/*
 * Marks the round LH_LION_R_FOREIGN if the queue grew between the last RTT sample and this one
 * (`s`, µs) by more than LH_LION_FOREIGN_RISE packets beyond the bytes this ACK acknowledged,
 * and faster than the link drains it: twice the growth exceeds the time between the ACKs plus
 * our own bytes' time. r_last_us is still the previous ACK's time.
 */
LH_INLINE void lh_lion_note_foreign_rise(struct lh_lion *l, __u64 now_us, __u32 s,
					 __u64 acked_bytes, __u32 mss)
{
	__u64 c = lh_lion_path_rate(l), grew, own, k, gap;

	if (!l->last_rtt || s <= l->last_rtt || !c)
		return;
	grew = s - l->last_rtt;
	own = lh_lion_mul_div(acked_bytes, LH_USEC_PER_SEC, c);
	/* Most ACKs rise by no more than their own bytes: skip the second division for them. */
	if (grew <= own)
		return;
	k = lh_lion_mul_div((__u64)LH_LION_FOREIGN_RISE * mss, LH_USEC_PER_SEC, c);
	gap = (__u32)now_us - l->r_last_us;
	if (grew > own + k && 2 * grew > gap + own)
		l->r_flags |= LH_LION_R_FOREIGN;
}

/*
 * One ACK that acknowledges data. `ack` is snd_una after it; rtt_us < 0: no RTT sample;
 * interval_us == 0: no delivery-rate sample (else `delivered` bytes over `interval_us`).
 */
LH_INLINE void lh_lion_ack(struct lh_lion *l, const struct lh_lion_params *p, __u32 ack,
			   __u32 snd_nxt, __u64 now_us, __s64 rtt_us, __u64 delivered,
			   __u64 interval_us, int app_limited, int cwnd_limited, __u64 acked_bytes,
			   __u32 mss, __u32 clamp)
{
	/* An ACK of data sent after the round began closes it and opens the next one. */
	int opens = lh_after(ack, l->round_end);

	if (opens) {
		lh_lion_end_round(l, p, now_us, mss, clamp);
		l->round_end = lh_after(snd_nxt, ack) ? snd_nxt : ack;
		lh_lion_new_round(l, now_us);
	}
	if (rtt_us >= 0) {
		__u32 s = rtt_us > 0xfffffffeLL ? 0xfffffffeU : rtt_us < 1 ? 1 : (__u32)rtt_us;

		lh_lion_note_foreign_rise(l, now_us, s, acked_bytes, mss);
		l->last_rtt = s;
		if (l->base_rtt == 0 || s < l->base_rtt)
			l->base_rtt = s;
		if (s < l->r_min_rtt)
			l->r_min_rtt = s;
		if (s > l->r_max_rtt)
			l->r_max_rtt = s;
		if (l->srtt_q3 == 0)
			l->srtt_q3 = s > 0x1fffffffU ? 0xffffffffU : s << 3;
		else
			l->srtt_q3 = l->srtt_q3 - (l->srtt_q3 >> 3) + (s > 0x1fffffffU ? 0x1fffffffU : s);
		if (l->rate == 0)
			/* First RTT: start at the initial window per round trip. */
			lh_lion_set_rate(l, lh_lion_mul_div((__u64)l->init_cwnd * mss,
							    LH_USEC_PER_SEC, s),
					 mss, clamp);
	}
	if (interval_us > 0) {
		__u64 r = lh_lion_mul_div(delivered, LH_USEC_PER_SEC, interval_us);

		if (r > l->r_max_rate)
			l->r_max_rate = r;
		l->r_flags |= LH_LION_R_RATE_SAMPLE;
		if (!app_limited)
			l->r_flags |= LH_LION_R_FULL_SAMPLE;
	}
	if (cwnd_limited)
		l->r_flags |= LH_LION_R_CWND_LIMITED;
	/* The opening ACK's data left before the round began. The initial window's train ends
	 * at the first gap of more than an eighth of the RTT, or with the first round. */
	if (!opens) {
		__u32 gap = (__u32)now_us - l->r_last_us;

		if (!(l->flags & LH_LION_F_TRAIN) && l->base_rtt && 8ULL * gap > l->base_rtt)
			lh_lion_measure_train(l, mss);
		acked_bytes += l->r_acked;
		l->r_acked = acked_bytes > 0xffffffffULL ? 0xffffffffU : (__u32)acked_bytes;
		l->r_last_us = (__u32)now_us;
	}
}

/* A loss of `lost` packets (the kernel: an ACK that marked packets lost; 0 for an ECN echo). */
LH_INLINE void lh_lion_loss(struct lh_lion *l, const struct lh_lion_params *p, __u32 lost,
			    __u32 mss, __u32 clamp)
{
	__u64 cap;
	__u32 n;

	/* While yielding or balancing the rate was just set on purpose. */
	if (l->phase == LH_LION_YIELD || l->phase == LH_LION_BALANCE)
		return;
	n = (__u32)l->r_lost + lost;
	l->r_lost = n > 0xffff || n < lost ? 0xffff : (__u16)n;
	/* Before the first round ends the base RTT is not known, and a loss in the initial
	 * window's train says the burst, not the rate, was too large. */
	if (!(l->flags & LH_LION_F_SETTLED) || !lh_lion_loss_is_congestion(l, p, mss)) {
		/* Random to the rate; the burst that met the cross traffic's shrinks, once a round. */
		if (l->random_losses < 0xffff)
			l->random_losses++;
		if (!(l->r_flags & LH_LION_R_BURST_CUT)) {
			l->r_flags |= LH_LION_R_BURST_CUT;
			lh_lion_shrink_mbs(l, p);
		}
		return;
	}
	if (l->r_flags & LH_LION_R_REDUCED)
		return;
	l->r_flags |= LH_LION_R_REDUCED;
	/* The queue had reached the buffer's end: that is the effective queue. */
	l->q_eff = lh_lion_recent_peak(l);
	if (l->q_eff < LH_LION_MIN_QUEUE_SIGNAL)
		l->q_eff = LH_LION_MIN_QUEUE_SIGNAL;
	lh_lion_back_off(l, p, p->loss_decrease_q16, mss, clamp);
	cap = lh_lion_mbs_cap_q10(l, p, mss);
	if (l->mbs_q10 > cap)
		l->mbs_q10 = cap < LH_Q10_ONE ? LH_Q10_ONE : (__u32)cap;
	if (l->phase == LH_LION_STARTUP)
		lh_lion_enter(l, LH_LION_DROP_AVOIDANCE);
}

/* A retransmission timeout. */
LH_INLINE void lh_lion_rto(struct lh_lion *l, const struct lh_lion_params *p, __u32 mss,
			   __u32 clamp)
{
	if (l->rate > 0)
		lh_lion_set_rate(l, l->rate / 2, mss, clamp);
	l->mbs_q10 = p->mbs_initial_q10;
	l->phase = LH_LION_STARTUP;
	l->floor = 0;
	l->flags &= ~(LH_LION_F_UNRESPONSIVE | LH_LION_F_DRAINED | LH_LION_F_DRAINING);
	l->capacity = 0;
	l->full = 0;
	l->flags &= ~LH_LION_F_HAS_Q_PREV;
}

/* The burst size in whole packets, rounded (at least 1); before the first rate the initial
 * window leaves as one train. */
LH_INLINE __u32 lh_lion_burst(const struct lh_lion *l)
{
	__u32 b = (l->mbs_q10 + (LH_Q10_ONE >> 1)) >> LH_Q10_SHIFT;

	if (l->rate == 0 && b < l->init_cwnd)
		b = l->init_cwnd;
	return b ? b : 1;
}

#endif /* LH_LION_H */
