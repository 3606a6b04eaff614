// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Lion as a struct_ops congestion control. The algorithm and its sources are described in
 * include/lh_lion.h (the reference is crates/cc/src/algorithms/lion.rs); this file binds it to
 * the kernel's callbacks:
 *  - init: the state, and pacing requested (sk_pacing_status = SK_PACING_NEEDED, as
 *    tcp_bbr.c's bbr_init does), so that TCP's internal pacing (tcp_internal_pacing, an
 *    hrtimer per socket) spaces the packets without the fq qdisc;
 *  - cong_control (every ACK, in every state; it replaces cong_avoid, PRR and the kernel's own
 *    pacing-rate update): for an ACK that delivered data, the round bookkeeping, the RTT sample
 *    (rate_sample.rtt_us) and the delivery-rate sample (rate_sample.delivered packets over
 *    interval_us); for an ACK that marked packets lost (rate_sample.losses > 0), Lion's loss
 *    rule; then sk_pacing_rate = min(rate, sk_max_pacing_rate) and snd_cwnd = the safety cap;
 *  - set_state(TCP_CA_Loss), once per retransmission timeout: the timeout rule;
 *  - ssthresh: infinite (Lion has no slow-start threshold; the kernel's recovery then never
 *    copies a threshold into the window), undo_cwnd: the window as it is (the rate, not the
 *    window, is what a loss changed);
 *  - min_tso_segs: the MBS in packets.
 *
 * What bounds a burst. A paced TCP socket sends one skb per pacing slot: tcp_write_xmit() stops
 * when tcp_pacing_check() finds the next departure time in the future, and the skb that leaves
 * is split in software (GSO) into packets sent back to back. Its size is tcp_tso_segs():
 *     max(min_tso_segs, min(gso_max_size, (sk_pacing_rate >> sk_pacing_shift) + a term that
 *         is 0 once min_rtt >= 8 ms)) / mss, at most sk_gso_max_segs,
 * and tcp_mss_split_point() cuts it to the window left. So the only lever a congestion control
 * has is min_tso_segs, a lower bound: Lion returns its MBS there, and a burst is
 *     max(MBS, about 1 ms of the pacing rate) packets, at most one 64 KB skb (45 packets of
 *     1448 bytes) and at most the window left;
 * the 1 ms is sk_pacing_shift = 10, which a struct_ops program cannot change: bpf_tcp_ca.c
 * lets it write only sk_pacing_rate and sk_pacing_status of struct sock (besides snd_cwnd,
 * snd_cwnd_cnt, snd_ssthresh, ecn_flags, app_limited of tcp_sock, icsk_ack.pending and its
 * own icsk_ca_priv), and no socket option sets the shift. An MBS above 1 ms of the rate (8.6
 * packets of 1448 bytes at 100 Mb/s) is the burst; a smaller one is raised to that 1 ms. An skb
 * leaves early when the pacing timer fired late (tcp_update_skb_after_send credits up to half a
 * slot of jitter), so bursts seen on the wire can be two skbs now and then. Measured at the
 * emulator's queue: tests/root_emulated.rs, crates/kernel/README.md ("Lion").
 */
#include "lh_bpf.h"
#include "lh_lion.h"

char _license[] SEC("license") = "GPL";

const volatile struct lh_lion_params lh_params = {
	.queue_threshold_us = 1000,
	.rise_threshold_us = 500,
	.mbs_initial_q10 = 4 << 10,
	.mbs_max_q10 = 4096 << 10,
	.mbs_step_q10 = 1 << 10,
	.mbs_decrease_q16 = 49152,
	.startup_gain_q16 = 131072,
	.probe_gain_q16 = 3277,
	.compete_drop_q16 = 13107,
	.loss_decrease_q16 = 55706,
	.shuffle_scale_q16 = 65536,
	.yield_rounds = 4,
	.balance_gain_q16 = 6554,
	.balance_share_q16 = 32768,
	.cwnd_gain_q16 = 131072,
};

_Static_assert(sizeof(struct lh_lion) <=
		       sizeof(((struct inet_connection_sock *)0)->icsk_ca_priv),
	       "Lion state must fit in icsk_ca_priv");

/* Declared by lh_bpf.h for its repair, which Lion does not need: cong_control rewrites the
 * window on every ACK and the threshold never reaches the window. */
static __always_inline __u32 lh_ssthresh_for(struct sock *sk, __u32 cwnd)
{
	return LH_INFINITE_SSTHRESH;
}

/* snd_cwnd_clamp, at least the 4 packets Lion's window never goes below. */
static __always_inline __u32 lh_lion_clamp(const struct tcp_sock *tp)
{
	return lh_bounded(tp->snd_cwnd_clamp, LH_LION_MIN_PIPE);
}

/* Hand Lion's rate and window to the kernel. */
static __always_inline void lh_lion_apply(struct sock *sk, const struct lh_lion *l,
					  const struct lh_lion_params *p, __u32 mss, __u32 clamp)
{
	struct tcp_sock *tp = lh_tcp_sk(sk);
	__u32 cwnd = lh_lion_cwnd(l, p, mss, clamp);

	if (l->rate > 0) {
		__u64 rate = l->rate, max = sk->sk_max_pacing_rate;

		sk->sk_pacing_rate = rate < max ? rate : max;
	}
	if (cwnd)
		tp->snd_cwnd = lh_bounded(cwnd, LH_LION_MIN_PIPE);
}

SEC("struct_ops")
void BPF_PROG(lh_lion_init_op, struct sock *sk)
{
	struct tcp_sock *tp = lh_tcp_sk(sk);
	struct lh_lion *l = lh_ca_priv(sk);
	struct lh_lion_params p = lh_params;

	lh_lion_init(l, &p, tp->snd_nxt, tp->snd_cwnd, tp->tcp_mstamp);
	/* Pacing without fq: TCP's internal pacing. An fq qdisc sets SK_PACING_FQ; keep it. */
	if (sk->sk_pacing_status == SK_PACING_NONE)
		sk->sk_pacing_status = SK_PACING_NEEDED;
}

SEC("struct_ops")
void BPF_PROG(lh_lion_cong_control_op, struct sock *sk, __u32 ack, int flag,
	     const struct rate_sample *rs)
{
	struct tcp_sock *tp = lh_tcp_sk(sk);
	struct lh_lion *l = lh_ca_priv(sk);
	struct lh_lion_params p = lh_params;
	__u32 mss = tp->mss_cache, clamp = lh_lion_clamp(tp);
	long rtt_us = rs->rtt_us, interval_us = rs->interval_us;
	__s32 delivered = rs->delivered;
	int has_rate = delivered >= 0 && interval_us > 0;

	/* The reference hears of ACKs that acknowledge data (cumulatively or by SACK). */
	if (rs->acked_sacked > 0)
		lh_lion_ack(l, &p, tp->snd_una, tp->snd_nxt, tp->tcp_mstamp, rtt_us,
			    has_rate ? (__u64)delivered * mss : 0, has_rate ? interval_us : 0,
			    rs->is_app_limited, lh_is_cwnd_limited(tp),
			    (__u64)rs->acked_sacked * mss, mss, clamp);
	if (rs->losses > 0)
		lh_lion_loss(l, &p, rs->losses, mss, clamp);
	lh_lion_apply(sk, l, &p, mss, clamp);
}

SEC("struct_ops")
void BPF_PROG(lh_lion_set_state_op, struct sock *sk, __u8 new_state)
{
	struct tcp_sock *tp = lh_tcp_sk(sk);
	struct lh_lion *l = lh_ca_priv(sk);
	struct lh_lion_params p = lh_params;
	__u32 mss = tp->mss_cache, clamp = lh_lion_clamp(tp);

	/* tcp_enter_loss() calls this on every timeout, backoffs included, after setting the
	 * window to the packets in flight + 1. */
	if (new_state == TCP_CA_Loss) {
		lh_lion_rto(l, &p, mss, clamp);
		lh_lion_apply(sk, l, &p, mss, clamp);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(lh_lion_ssthresh_op, struct sock *sk)
{
	return LH_INFINITE_SSTHRESH;
}

SEC("struct_ops")
__u32 BPF_PROG(lh_lion_undo_cwnd_op, struct sock *sk)
{
	return lh_bounded(lh_tcp_sk(sk)->snd_cwnd, LH_LION_MIN_PIPE);
}

SEC("struct_ops")
__u32 BPF_PROG(lh_lion_min_tso_segs_op, struct sock *sk)
{
	return lh_lion_burst(lh_ca_priv(sk));
}

SEC(".struct_ops.link")
struct tcp_congestion_ops lh_lion = {
	.init = (void *)lh_lion_init_op,
	.cong_control = (void *)lh_lion_cong_control_op,
	.set_state = (void *)lh_lion_set_state_op,
	.ssthresh = (void *)lh_lion_ssthresh_op,
	.undo_cwnd = (void *)lh_lion_undo_cwnd_op,
	.min_tso_segs = (void *)lh_lion_min_tso_segs_op,
	.name = "lion",
};
