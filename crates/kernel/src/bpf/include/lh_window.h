/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The kernel's window primitives as pure functions on a copy of the four tcp_sock fields a
 * congestion control may write (snd_cwnd, snd_cwnd_cnt, snd_ssthresh) or must respect
 * (snd_cwnd_clamp).
 *
 * lh_slow_start() and lh_cong_avoid_ai() restate tcp_slow_start() and tcp_cong_avoid_ai() from
 * net/ipv4/tcp_cong.c. They are re-stated rather than called as kfuncs so that the very same
 * arithmetic runs in the native test build, where there is no kernel.
 *
 *  - Slow start adds the packets acknowledged, up to ssthresh, and returns the leftover so that
 *    a stretch ACK crossing ssthresh feeds congestion avoidance (RFC 3465 without the L limit).
 *  - Congestion avoidance is a credit counter: snd_cwnd_cnt collects acknowledged packets and
 *    every `w` of them add one packet to cwnd, i.e. cwnd grows by acked/w per ACK. With w = cwnd
 *    this is Reno's one packet per round trip.
 */
#ifndef LH_WINDOW_H
#define LH_WINDOW_H

#include "lh_types.h"

struct lh_window {
	__u32 cwnd;     /* packets */
	__u32 cwnd_cnt; /* additive-increase credit, in acknowledged packets */
	__u32 ssthresh; /* packets; LH_INFINITE_SSTHRESH before the first congestion signal */
	__u32 clamp;    /* snd_cwnd_clamp: the window never grows beyond it */
};

LH_INLINE int lh_in_slow_start(const struct lh_window *w) { return w->cwnd < w->ssthresh; }

/* tcp_slow_start(): returns the acknowledged packets not used up below ssthresh. */
LH_INLINE __u32 lh_slow_start(struct lh_window *w, __u32 acked)
{
	__u32 cwnd = lh_min_u32(w->cwnd + acked, w->ssthresh);

	acked -= cwnd - w->cwnd;
	w->cwnd = lh_min_u32(cwnd, w->clamp);
	return acked;
}

/* tcp_cong_avoid_ai(): cwnd += acked / step, carried exactly in the credit counter. */
LH_INLINE void lh_cong_avoid_ai(struct lh_window *w, __u32 step, __u32 acked)
{
	if (step == 0)
		step = 1;
	/* Credit collected at a larger step is applied gently: one packet, not a burst. */
	if (w->cwnd_cnt >= step) {
		w->cwnd_cnt = 0;
		w->cwnd++;
	}
	w->cwnd_cnt += acked;
	if (w->cwnd_cnt >= step) {
		__u32 delta = w->cwnd_cnt / step;

		w->cwnd_cnt -= delta * step;
		w->cwnd += delta;
	}
	w->cwnd = lh_min_u32(w->cwnd, w->clamp);
}

/* tcp_reno_cong_avoid() without the cwnd-limited test, which the caller makes. */
LH_INLINE void lh_reno_cong_avoid(struct lh_window *w, __u32 acked)
{
	if (lh_in_slow_start(w)) {
		acked = lh_slow_start(w, acked);
		if (!acked)
			return;
	}
	lh_cong_avoid_ai(w, w->cwnd, acked);
}

/* tcp_reno_ssthresh(): half the window, at least two packets. */
LH_INLINE __u32 lh_reno_ssthresh(__u32 cwnd) { return lh_max_u32(cwnd >> 1, 2); }

#endif /* LH_WINDOW_H */
