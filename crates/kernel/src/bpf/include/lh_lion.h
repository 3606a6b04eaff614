/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Lion: rate-based packet-drop avoidance with maximum-burst-size pacing (seed 002, LBNL
 * "Network Lion"; G. Jin, B. Tierney, "Netest", ITRE 2003; M. Jain, C. Dovrolis, SLoPS,
 * SIGCOMM 2002). The algorithm, its reading of the seed and every rule's reason are in the
 * reference, crates/cc/src/algorithms/lion.rs; this header is that state machine in integers,
 * rule for rule:
 *  - once per round trip (a round ends when data sent after it began is acknowledged) the
 *    standing queue q = round's smallest RTT − smallest RTT ever, the burst queue (largest −
 *    smallest RTT of the round), the delivered rate (largest delivery-rate sample of the round,
 *    else acknowledged bytes over the round) and the available bandwidth drive four phases:
 *    startup (rate and MBS double per clear round), drop_avoidance (probe 5 % above abw, drain
 *    to d·base/(base+q) when the queue grows, table yield to new traffic), yield (watch the
 *    newcomer for yield_rounds) and balance (raise 10 % per round to the fair share, which
 *    becomes a floor);
 *  - a loss after queueing cuts the rate to max(min(rate, abw)·loss_decrease, floor) and the
 *    MBS by mbs_decrease, once per round; any other loss is random: the rate stays, the MBS
 *    shrinks once per round; losses while yielding or balancing change nothing;
 *  - a retransmission timeout halves the rate, restarts the MBS and forgets floor, capacity
 *    and the last round's queue;
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
 *  - drop_avoidance returns to abw only when the rate is more than 2^-10 below it, else it
 *    probes: the kernel's delivery-rate samples have whole-µs intervals (one part in 10^4 of
 *    a 10 ms sample), so a rate delivered in full can measure a hair above itself, which the
 *    reference (nanoseconds) would read as "probe" and a literal port as "return to abw".
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

struct lh_lion {
	__u64 rate;     /* pacing rate, bytes/s; 0 until the first RTT sample */
	__u64 abw;      /* available-bandwidth estimate, bytes/s */
	__u64 capacity; /* largest delivered rate seen, bytes/s */
	__u64 floor;    /* balancing's floor, bytes/s (0: none) */
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
	__u32 random_losses;
	__u32 init_cwnd;    /* packets per first RTT */
	__u16 yield_round;  /* rounds spent in yield */
	__u8 phase;         /* LH_LION_* */
	__u8 has_q_prev;
	__u8 r_flags;       /* LH_LION_R_* */
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
	l->r_flags = 0;
}

LH_INLINE void lh_lion_init(struct lh_lion *l, const struct lh_lion_params *p, __u32 snd_nxt,
			    __u32 init_cwnd, __u64 now_us)
{
	l->rate = 0;
	l->abw = 0;
	l->capacity = 0;
	l->floor = 0;
	l->mbs_q10 = p->mbs_initial_q10;
	l->base_rtt = 0;
	l->srtt_q3 = 0;
	l->q_prev = 0;
	l->has_q_prev = 0;
	l->round_end = snd_nxt;
	l->random_losses = 0;
	l->init_cwnd = init_cwnd ? init_cwnd : 1;
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

/* Grow the burst to `to`, never beyond mbs_max nor one base RTT at the pacing rate. */
LH_INLINE void lh_lion_grow_mbs(struct lh_lion *l, const struct lh_lion_params *p, __u64 to_q10,
				__u32 mss)
{
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
	l->mbs_q10 = (__u32)to_q10;
}

LH_INLINE void lh_lion_shrink_mbs(struct lh_lion *l, const struct lh_lion_params *p)
{
	__u64 m = lh_lion_scale(l->mbs_q10, p->mbs_decrease_q16);

	l->mbs_q10 = m < LH_Q10_ONE ? LH_Q10_ONE : (__u32)m;
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

/* Whether the last round, or the current one so far, showed a queue. */
LH_INLINE int lh_lion_queue_seen(const struct lh_lion *l, const struct lh_lion_params *p)
{
	__u32 thr = p->queue_threshold_us;

	if (l->has_q_prev && l->q_prev > thr)
		return 1;
	return l->r_min_rtt != LH_LION_NO_RTT && l->base_rtt && l->r_min_rtt > l->base_rtt &&
	       l->r_min_rtt - l->base_rtt > thr;
}

/* The sender did not use its rate in this round (every rate sample application-limited, or
 * without rate samples no ACK window-limited). */
LH_INLINE int lh_lion_app_limited(const struct lh_lion *l)
{
	if (l->r_flags & LH_LION_R_RATE_SAMPLE)
		return !(l->r_flags & LH_LION_R_FULL_SAMPLE);
	return !(l->r_flags & LH_LION_R_CWND_LIMITED);
}

/* The once-per-round decisions of the state machine. */
LH_INLINE void lh_lion_end_round(struct lh_lion *l, const struct lh_lion_params *p,
				 __u64 now_us, __u32 mss, __u32 clamp)
{
	__u64 base = l->base_rtt, delivered, drain, fair, cd_keep;
	__u32 q, secs_us, thr = p->queue_threshold_us;
	int queued, burst_queue, rising, squeezed, app;

	if (l->r_min_rtt == LH_LION_NO_RTT)
		return;
	q = l->r_min_rtt > l->base_rtt ? l->r_min_rtt - l->base_rtt : 0;
	secs_us = (__u32)now_us - l->r_start_us;
	if (l->r_max_rate > 0)
		delivered = l->r_max_rate;
	else if (secs_us > 0)
		delivered = lh_lion_mul_div(l->r_acked, LH_USEC_PER_SEC, secs_us);
	else
		delivered = 0;
	if (delivered > LH_LION_RATE_MAX)
		delivered = LH_LION_RATE_MAX;
	queued = q > thr;
	/* Queueing that builds and drains within the round: our bursts overflow what the path
	 * absorbs at once. */
	burst_queue = l->r_max_rtt > l->r_min_rtt && l->r_max_rtt - l->r_min_rtt > thr;
	rising = queued && l->has_q_prev && q > l->q_prev &&
		 q - l->q_prev > p->rise_threshold_us;
	cd_keep = LH_Q16_ONE - (p->compete_drop_q16 < LH_Q16_ONE ? p->compete_drop_q16 : 0);
	squeezed = (delivered << LH_Q16_SHIFT) < cd_keep * l->rate;
	drain = lh_lion_mul_div(delivered, base, base + q);
	app = lh_lion_app_limited(l);
	if (delivered > l->capacity)
		l->capacity = delivered;
	if (queued || delivered > l->abw)
		l->abw = delivered;
	fair = lh_lion_scale(l->capacity, p->balance_share_q16);

	switch (l->phase) {
	case LH_LION_STARTUP:
		if (!queued) {
			if (!app) {
				lh_lion_set_rate(l, lh_lion_scale(l->rate, p->startup_gain_q16), mss,
						 clamp);
				if (burst_queue)
					lh_lion_grow_mbs(l, p, (__u64)l->mbs_q10 + p->mbs_step_q10, mss);
				else
					lh_lion_grow_mbs(l, p, 2ULL * l->mbs_q10, mss);
			}
		} else {
			l->phase = LH_LION_DROP_AVOIDANCE;
			lh_lion_set_rate(l, drain, mss, clamp);
		}
		break;
	case LH_LION_DROP_AVOIDANCE:
		if (!queued) {
			if (!app) {
				/* Back to the available bandwidth after a drain, then probe above. An
				 * abw within 2^-10 above the rate is the rate: whole-µs sample
				 * intervals measure a rate only that well. */
				__u64 next = l->rate < l->abw - (l->abw >> 10)
						     ? l->abw
						     : l->rate + lh_lion_scale(l->rate, p->probe_gain_q16);

				lh_lion_set_rate(l, next, mss, clamp);
			}
			if (burst_queue)
				lh_lion_shrink_mbs(l, p);
			else if (!app)
				lh_lion_grow_mbs(l, p, (__u64)l->mbs_q10 + p->mbs_step_q10, mss);
		} else if (l->floor > 0 && (delivered << LH_Q16_SHIFT) < cd_keep * fair) {
			/* The known aggressive competitor pushed us below our share again. */
			l->phase = LH_LION_BALANCE;
		} else if (rising && squeezed && !app && l->floor == 0) {
			__u64 y = lh_lion_yield_amount(l, p);

			lh_lion_set_rate(l, l->rate > y ? l->rate - y : 0, mss, clamp);
			lh_lion_shrink_mbs(l, p);
			l->phase = LH_LION_YIELD;
			l->yield_round = 0;
		} else if (rising) {
			lh_lion_set_rate(l, drain > l->floor ? drain : l->floor, mss, clamp);
		} else {
			__u64 held = l->rate < delivered ? l->rate : delivered;

			lh_lion_set_rate(l, held > l->floor ? held : l->floor, mss, clamp);
		}
		if (queued && burst_queue)
			lh_lion_shrink_mbs(l, p);
		break;
	case LH_LION_YIELD:
		if (l->yield_round == 0) {
			/* This round still carried the queue built before the yield took effect. */
			l->yield_round = 1;
		} else if (!queued) {
			l->phase = LH_LION_DROP_AVOIDANCE;
		} else if (rising || squeezed) {
			l->floor = fair;
			l->phase = LH_LION_BALANCE;
		} else if ((__u32)l->yield_round >= p->yield_rounds) {
			l->phase = LH_LION_DROP_AVOIDANCE;
		} else {
			l->yield_round++;
		}
		break;
	default: /* LH_LION_BALANCE */
		if (delivered >= fair) {
			l->phase = LH_LION_DROP_AVOIDANCE;
		} else {
			__u64 raised = l->rate + lh_lion_scale(l->rate, p->balance_gain_q16);

			if (raised > l->capacity)
				raised = l->capacity;
			lh_lion_set_rate(l, raised > l->rate ? raised : l->rate, mss, clamp);
			lh_lion_grow_mbs(l, p, (__u64)l->mbs_q10 + p->mbs_step_q10, mss);
		}
		break;
	}
	l->q_prev = q;
	l->has_q_prev = 1;
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
 * One ACK that acknowledges data. `ack` is snd_una after it; rtt_us < 0: no RTT sample;
 * interval_us == 0: no delivery-rate sample (else `delivered` bytes over `interval_us`).
 */
LH_INLINE void lh_lion_ack(struct lh_lion *l, const struct lh_lion_params *p, __u32 ack,
			   __u32 snd_nxt, __u64 now_us, __s64 rtt_us, __u64 delivered,
			   __u64 interval_us, int app_limited, int cwnd_limited, __u64 acked_bytes,
			   __u32 mss, __u32 clamp)
{
	/* An ACK of data sent after the round began closes it and opens the next one. */
	if (lh_after(ack, l->round_end)) {
		lh_lion_end_round(l, p, now_us, mss, clamp);
		l->round_end = lh_after(snd_nxt, ack) ? snd_nxt : ack;
		lh_lion_new_round(l, now_us);
	}
	if (rtt_us >= 0) {
		__u32 s = rtt_us > 0xfffffffeLL ? 0xfffffffeU : rtt_us < 1 ? 1 : (__u32)rtt_us;

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
	acked_bytes += l->r_acked;
	l->r_acked = acked_bytes > 0xffffffffULL ? 0xffffffffU : (__u32)acked_bytes;
}

/* A loss (the kernel: an ACK that marked packets lost). */
LH_INLINE void lh_lion_loss(struct lh_lion *l, const struct lh_lion_params *p, __u32 mss,
			    __u32 clamp)
{
	__u64 from;

	/* While yielding or balancing the rate was just set on purpose. */
	if (l->phase == LH_LION_YIELD || l->phase == LH_LION_BALANCE)
		return;
	if (!lh_lion_queue_seen(l, p)) {
		/* Random to the rate; the burst that met the cross traffic's shrinks, once a round. */
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
	from = l->abw > 0 && l->abw < l->rate ? l->abw : l->rate;
	from = lh_lion_scale(from, p->loss_decrease_q16);
	lh_lion_set_rate(l, from > l->floor ? from : l->floor, mss, clamp);
	lh_lion_shrink_mbs(l, p);
	if (l->phase == LH_LION_STARTUP)
		l->phase = LH_LION_DROP_AVOIDANCE;
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
	l->capacity = 0;
	l->has_q_prev = 0;
}

/* The burst size in whole packets, rounded (at least 1). */
LH_INLINE __u32 lh_lion_burst(const struct lh_lion *l)
{
	__u32 b = (l->mbs_q10 + (LH_Q10_ONE >> 1)) >> LH_Q10_SHIFT;

	return b ? b : 1;
}

#endif /* LH_LION_H */
