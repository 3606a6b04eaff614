/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * HighSpeed TCP (S. Floyd, RFC 3649; Linux net/ipv4/tcp_highspeed.c).
 *
 * HighSpeed TCP changes Reno's response function only above Low_Window = 38 packets: there
 * the window obeys w = 0.12/p^0.835 instead of 1.2/√p, reaching 83,000 packets at a loss rate
 * of 1e-7. It does so with a window-dependent increase a(w) (packets per round trip) and
 * decrease b(w) (fraction removed on a loss): a grows from 1 to ~72 and b falls from 0.5 to 0.1
 * as w goes from 38 to 83,000 packets. RFC 3649 Appendix B tabulates both; Linux keeps that
 * table (72 rows: the upper window bound of each row and b·256), and so does this header.
 *
 * Row i covers windows vals[i-1].cwnd < w <= vals[i].cwnd (row 0: w <= 38) and gives
 * a(w) = i + 1 and b(w) = md/256. Per ACK, Linux adds ai+1 to the credit counter and moves one
 * packet from it to cwnd for every cwnd collected: cwnd grows by (ai+1)/cwnd per ACK whatever
 * the ACK covers, so stretch and delayed ACKs slow it down, and in slow start the leftover of
 * a stretch ACK is not carried into avoidance. That is the `ignore_acked` mode (the default,
 * as Linux). With ignore_acked = 0 the increase is (ai+1)·acked/cwnd, as RFC 3649 intends per
 * acknowledged packet, and a slow-start leftover is carried into avoidance.
 *
 * Deviations from Linux:
 *  - Linux walks the row index up or down one row at a time with while loops. Here the row is
 *    found by a binary search of fixed depth 7 (2^7 = 128 > 72 rows), which gives the same
 *    row (the unique i with vals[i-1] < w <= vals[i], capped at 71) without a loop on the
 *    per-ACK path.
 *  - Linux's ssthresh uses the row remembered at the last congestion-avoidance ACK, so a loss
 *    that ends slow start (row still 0) halves the window whatever its size. Here ssthresh
 *    looks up the row of the window at the loss, as RFC 3649 defines b(w).
 */
#ifndef LH_HIGHSPEED_H
#define LH_HIGHSPEED_H

#include "lh_window.h"

#define LH_HSTCP_ROWS 72

struct lh_hstcp_row {
	__u32 cwnd; /* upper window bound of the row, packets */
	__u32 md;   /* decrease b(w) scaled by 256 */
};

static const struct lh_hstcp_row lh_hstcp_table[LH_HSTCP_ROWS] = {
	{ 38, 128 }, { 118, 112 }, { 221, 104 }, { 347, 98 }, { 495, 93 }, { 663, 89 },
	{ 851, 86 }, { 1058, 83 }, { 1284, 81 }, { 1529, 78 }, { 1793, 76 }, { 2076, 74 },
	{ 2378, 72 }, { 2699, 71 }, { 3039, 69 }, { 3399, 68 }, { 3778, 66 }, { 4177, 65 },
	{ 4596, 64 }, { 5036, 62 }, { 5497, 61 }, { 5979, 60 }, { 6483, 59 }, { 7009, 58 },
	{ 7558, 57 }, { 8130, 56 }, { 8726, 55 }, { 9346, 54 }, { 9991, 53 }, { 10661, 52 },
	{ 11358, 52 }, { 12082, 51 }, { 12834, 50 }, { 13614, 49 }, { 14424, 48 }, { 15265, 48 },
	{ 16137, 47 }, { 17042, 46 }, { 17981, 45 }, { 18955, 45 }, { 19965, 44 }, { 21013, 43 },
	{ 22101, 43 }, { 23230, 42 }, { 24402, 41 }, { 25618, 41 }, { 26881, 40 }, { 28193, 39 },
	{ 29557, 39 }, { 30975, 38 }, { 32450, 38 }, { 33986, 37 }, { 35586, 36 }, { 37253, 36 },
	{ 38992, 35 }, { 40808, 35 }, { 42707, 34 }, { 44694, 33 }, { 46776, 33 }, { 48961, 32 },
	{ 51258, 32 }, { 53677, 31 }, { 56230, 30 }, { 58932, 30 }, { 61799, 29 }, { 64851, 28 },
	{ 68113, 28 }, { 71617, 27 }, { 75401, 26 }, { 79517, 26 }, { 84035, 25 }, { 89053, 24 },
};

/* Linux caps snd_cwnd_clamp at 2^32/128 so that cwnd·md cannot overflow 32 bits. */
#define LH_HSTCP_MAX_CLAMP (0xffffffffU / 128)

/* The row for `cwnd`: the smallest i with cwnd <= table[i].cwnd, or 71 above the table. */
LH_INLINE __u32 lh_hstcp_row(__u32 cwnd)
{
	__u32 lo = 0, span = 64;

	/* Invariant: the answer is in [lo, 71]; each step halves the span. Unrolled, no loop. */
#define LH_HSTCP_STEP                                                                      \
	do {                                                                               \
		__u32 probe = lo + span - 1;                                               \
		if (probe < LH_HSTCP_ROWS - 1 && lh_hstcp_table[probe & 127].cwnd < cwnd) \
			lo = probe + 1;                                                    \
		span >>= 1;                                                                \
	} while (0)
	LH_HSTCP_STEP; /* 64 */
	LH_HSTCP_STEP; /* 32 */
	LH_HSTCP_STEP; /* 16 */
	LH_HSTCP_STEP; /* 8 */
	LH_HSTCP_STEP; /* 4 */
	LH_HSTCP_STEP; /* 2 */
	LH_HSTCP_STEP; /* 1 */
#undef LH_HSTCP_STEP
	return lo < LH_HSTCP_ROWS ? lo : LH_HSTCP_ROWS - 1;
}

struct lh_hstcp_params {
	__u32 ignore_acked; /* nonzero: one increment per ACK, no slow-start carry (Linux) */
	__u32 reserved[3];
};

/* cong_avoid: the caller has checked that the flow is cwnd-limited. Returns the row used. */
LH_INLINE __u32 lh_hstcp_cong_avoid(struct lh_window *w, const struct lh_hstcp_params *p,
				    __u32 acked)
{
	__u32 ai;

	if (lh_in_slow_start(w)) {
		acked = lh_slow_start(w, acked);
		if (p->ignore_acked || !acked)
			return 0;
	}
	ai = lh_hstcp_row(w->cwnd);
	if (w->cwnd >= w->clamp)
		return ai;
	if (p->ignore_acked) {
		/* cwnd += (ai + 1) / cwnd, through the credit counter (Linux). */
		w->cwnd_cnt += ai + 1;
		if (w->cwnd_cnt >= w->cwnd) {
			w->cwnd_cnt -= w->cwnd;
			w->cwnd++;
		}
	} else {
		/* cwnd += (ai + 1)·acked / cwnd. */
		__u64 cnt = (__u64)w->cwnd_cnt + (__u64)(ai + 1) * acked;
		__u32 delta = (__u32)(cnt / w->cwnd);

		w->cwnd_cnt = (__u32)(cnt - (__u64)delta * w->cwnd);
		w->cwnd = lh_min_u32(w->cwnd + delta, w->clamp);
	}
	return ai;
}

/* ssthresh: cwnd - cwnd·b(cwnd), at least two packets. */
LH_INLINE __u32 lh_hstcp_ssthresh(__u32 cwnd)
{
	__u32 row = lh_hstcp_row(cwnd) & 127;
	__u32 md = row < LH_HSTCP_ROWS ? lh_hstcp_table[row].md : 128;

	return lh_max_u32(cwnd - (__u32)(((__u64)cwnd * md) >> 8), 2);
}

#endif /* LH_HIGHSPEED_H */
