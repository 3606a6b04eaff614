/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * TCP Vegas (L. Brakmo, L. Peterson, "TCP Vegas: End to End Congestion Avoidance on a Global
 * Internet", IEEE JSAC 13(8), 1995; Linux net/ipv4/tcp_vegas.c).
 *
 * Vegas compares the rate it expects, cwnd/baseRTT, with the rate it gets, cwnd/RTT. The
 * difference, expressed in packets, is the flow's own backlog in the bottleneck queue:
 *
 *     diff = (Expected - Actual)·baseRTT = cwnd·(RTT - baseRTT)/RTT
 *
 * Once per round trip (the first ACK beyond the snd_nxt recorded at the previous decision) the
 * window moves by one packet: up if diff < α, down if diff > β, unchanged in between. In slow
 * start, a backlog above γ ends slow start: cwnd drops to the window that would have no
 * backlog (cwnd·baseRTT/RTT + 1) and ssthresh follows it. RTT here is the smallest sample of
 * the last round (it filters delayed-ACK noise), baseRTT the smallest ever seen. Rounds with two
 * samples or fewer carry no trustworthy delay signal and fall back to Reno, as do the Disorder,
 * CWR, Recovery and Loss states (the BPF program turns Vegas off outside TCP_CA_Open).
 *
 * Deviation (default): since 2008 (commit 8d3a564da34e) Linux divides by baseRTT instead of
 * RTT, which makes the equilibrium rate α/delay·baseRTT/RTT rather than α/delay and breaks the
 * proportional fairness Vegas is known for (netdev 2025, "Potential bug in Linux TCP vegas
 * implementation"). The paper's form is the default; linux_compat selects the Linux one.
 * RTTs are in microseconds plus one, as Linux (a 0 µs sample on a fast path would otherwise
 * read as "no sample").
 */
#ifndef LH_VEGAS_H
#define LH_VEGAS_H

#include "lh_window.h"

struct lh_vegas_params {
	__u32 alpha;        /* packets: grow while the backlog is below α */
	__u32 beta;         /* packets: shrink while the backlog is above β */
	__u32 gamma;        /* packets: leave slow start once the backlog exceeds γ */
	__u32 linux_compat; /* nonzero: diff = cwnd·(rtt - baseRTT)/baseRTT, as Linux */
};

struct lh_vegas {
	__u32 beg_snd_nxt; /* right edge of the current round */
	__u32 doing_vegas_now;
	__u32 cnt_rtt;  /* samples in this round */
	__u32 min_rtt;  /* smallest sample of this round, µs + 1 */
	__u32 base_rtt; /* smallest sample ever, µs + 1 */
};

#define LH_VEGAS_NO_RTT 0x7fffffffU

/* tcp_vegas_init / vegas_enable: start a fresh round at snd_nxt. */
LH_INLINE void lh_vegas_init(struct lh_vegas *v, __u32 snd_nxt)
{
	v->base_rtt = LH_VEGAS_NO_RTT;
	v->doing_vegas_now = 1;
	v->beg_snd_nxt = snd_nxt;
	v->cnt_rtt = 0;
	v->min_rtt = LH_VEGAS_NO_RTT;
}

LH_INLINE void lh_vegas_enable(struct lh_vegas *v, __u32 snd_nxt)
{
	v->doing_vegas_now = 1;
	v->beg_snd_nxt = snd_nxt;
	v->cnt_rtt = 0;
	v->min_rtt = LH_VEGAS_NO_RTT;
}

/* pkts_acked: one RTT sample in µs (negative: none). */
LH_INLINE void lh_vegas_rtt_sample(struct lh_vegas *v, __s32 rtt_us)
{
	__u32 vrtt;

	if (rtt_us < 0)
		return;
	vrtt = (__u32)rtt_us + 1;
	if (vrtt < v->base_rtt)
		v->base_rtt = vrtt;
	if (vrtt < v->min_rtt)
		v->min_rtt = vrtt;
	v->cnt_rtt++;
}

/* The flow's backlog in packets from this round's minimum RTT. */
LH_INLINE __u32 lh_vegas_diff(__u32 cwnd, __u32 rtt, __u32 base_rtt, const struct lh_vegas_params *p)
{
	__u64 queued = (__u64)cwnd * (rtt - base_rtt);
	__u32 den = p->linux_compat ? base_rtt : rtt;

	return den ? (__u32)(queued / den) : 0;
}

/* tcp_current_ssthresh() in TCP_CA_Open: max(ssthresh, 3/4·cwnd). */
LH_INLINE __u32 lh_current_ssthresh(const struct lh_window *w)
{
	return lh_max_u32(w->ssthresh, (w->cwnd >> 1) + (w->cwnd >> 2));
}

/*
 * cong_avoid. `ack` is the cumulative ACK, `snd_nxt` the next sequence to send. `cwnd_limited`
 * gates only the Reno fallback, exactly as tcp_reno_cong_avoid() does in Linux; the per-round
 * Vegas decision runs whenever the core calls cong_avoid.
 */
LH_INLINE void lh_vegas_cong_avoid(struct lh_vegas *v, struct lh_window *w,
				   const struct lh_vegas_params *p, __u32 ack, __u32 snd_nxt,
				   __u32 acked, int cwnd_limited)
{
	if (!v->doing_vegas_now) {
		if (cwnd_limited)
			lh_reno_cong_avoid(w, acked);
		return;
	}
	if (lh_after(ack, v->beg_snd_nxt)) {
		v->beg_snd_nxt = snd_nxt;
		if (v->cnt_rtt <= 2) {
			if (cwnd_limited)
				lh_reno_cong_avoid(w, acked);
		} else {
			__u32 rtt = v->min_rtt;
			__u32 diff = lh_vegas_diff(w->cwnd, rtt, v->base_rtt, p);
			__u32 target = (__u32)((__u64)w->cwnd * v->base_rtt / rtt);

			if (diff > p->gamma && lh_in_slow_start(w)) {
				/* Going too fast: drop to the window with no backlog, leave slow start. */
				w->cwnd = lh_min_u32(w->cwnd, target + 1);
				w->ssthresh = lh_min_u32(w->ssthresh, w->cwnd);
			} else if (lh_in_slow_start(w)) {
				lh_slow_start(w, acked);
			} else if (diff > p->beta) {
				w->cwnd--;
				w->ssthresh = lh_min_u32(w->ssthresh, w->cwnd);
			} else if (diff < p->alpha) {
				w->cwnd++;
			}
			if (w->cwnd < 2)
				w->cwnd = 2;
			else if (w->cwnd > w->clamp)
				w->cwnd = w->clamp;
			w->ssthresh = lh_current_ssthresh(w);
		}
		v->cnt_rtt = 0;
		v->min_rtt = LH_VEGAS_NO_RTT;
	} else if (lh_in_slow_start(w)) {
		lh_slow_start(w, acked);
	}
}

#endif /* LH_VEGAS_H */
