/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Scalable TCP (T. Kelly, "Scalable TCP: Improving Performance in HighSpeed Wide Area
 * Networks", PFLDnet 2003 / CCR 33(2); Linux net/ipv4/tcp_scalable.c).
 *
 * Reno adds one packet per round trip and halves on loss, so the time to regain the window
 * after a loss grows with the window. Scalable TCP adds a fixed `a` packets per acknowledged
 * packet (the window grows by the factor 1+a per round trip) and removes the fraction `b` on a
 * loss, so recovery takes ln(1/(1-b))/ln(1+a) ≈ 13.4 round trips at any rate for the suggested
 * a = 0.01, b = 0.125. At or below a *legacy window* the algorithm behaves as standard TCP, so it
 * is no more aggressive than Reno where Reno's response is the better one. Kelly's kernel patch
 * made a, b and the legacy window /proc knobs (seed 003); here they are load-time parameters.
 *
 * Fixed point. The increase of `a` per acknowledged packet is the kernel's credit counter with
 * step 1/a: ai_cnt = round(1/a) acknowledged packets add one packet (exact for a = 0.01, the
 * default, and for any a that is the reciprocal of an integer). The decrease b is carried in Q10
 * (b = 0.125 is 128/1024), so cwnd - (cwnd·b_q10 >> 10) equals Linux's cwnd - (cwnd >> 3).
 *
 * Linux (tcp_scalable.c) is the preset legacy_cwnd = 100 = 1/a with legacy_decrease off:
 * tcp_cong_avoid_ai(tp, min(cwnd, 100), acked) and ssthresh = max(cwnd - cwnd>>3, 2) at every
 * window. Kelly's rule (legacy_cwnd = 16, legacy_decrease on) halves at or below the legacy
 * window and grows by acked/cwnd there.
 */
#ifndef LH_SCALABLE_H
#define LH_SCALABLE_H

#include "lh_window.h"

struct lh_scalable_params {
	__u32 ai_cnt;          /* 1/a: acknowledged packets per one-packet increase above legacy */
	__u32 md_q10;          /* b in Q10: fraction of the window removed on a loss */
	__u32 legacy_cwnd;     /* at or below this window, grow as Reno */
	__u32 legacy_decrease; /* nonzero: halve (Reno) on a loss at or below legacy_cwnd */
};

/* cong_avoid: the caller has checked that the flow is cwnd-limited. */
LH_INLINE void lh_scalable_cong_avoid(struct lh_window *w, const struct lh_scalable_params *p,
				      __u32 acked)
{
	if (lh_in_slow_start(w)) {
		acked = lh_slow_start(w, acked);
		if (!acked)
			return;
	}
	lh_cong_avoid_ai(w, w->cwnd <= p->legacy_cwnd ? w->cwnd : p->ai_cnt, acked);
}

/* ssthresh: the window after a congestion signal at `cwnd`, at least two packets. */
LH_INLINE __u32 lh_scalable_ssthresh(__u32 cwnd, const struct lh_scalable_params *p)
{
	if (p->legacy_decrease && cwnd <= p->legacy_cwnd)
		return lh_reno_ssthresh(cwnd);
	return lh_max_u32(cwnd - (__u32)(((__u64)cwnd * p->md_q10) >> LH_Q10_SHIFT), 2);
}

#endif /* LH_SCALABLE_H */
