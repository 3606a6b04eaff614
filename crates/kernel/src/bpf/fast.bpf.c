// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * FAST TCP as a struct_ops congestion control. The algorithm and its sources are described in
 * include/lh_fast.h; this file binds it to the kernel's callbacks:
 *  - pkts_acked (every ACK that acknowledges data, before cong_avoid): round-trip bookkeeping,
 *    the RTT sample (Karn-clean: from the latest never-retransmitted segment acknowledged), and
 *    the window the acknowledged packet was sent with (ack_sample.in_flight, when the ACK
 *    carries a delivery-rate sample);
 *  - cong_avoid (not called in CWR or Recovery): MI growth, the window law, paced increases;
 *  - set_state: remembers whether the kernel is reducing the window (CWR/Recovery), and after a
 *    timeout (TCP_CA_Loss) restarts from rto_cwnd packets;
 *  - ssthresh: halving; the kernel's PRR carries it out.
 *
 * pace (an option, on by default as in the reference; seed 001's "burstiness control"): init asks for TCP's
 * internal pacing (SK_PACING_NEEDED, as tcp_bbr.c does without fq), and the kernel paces at
 * tcp_update_pacing_rate()'s rate, a ratio of cwnd·mss/srtt. That ratio is the slow-start one
 * (tcp_pacing_ss_ratio, 200 %) while cwnd < ssthresh/2, which for FAST, whose ssthresh only
 * records losses, would be always; so when MI ends the binding sets ssthresh to the window, as
 * tcp_vegas.c does when it leaves slow start, and TCP paces at tcp_pacing_ca_ratio (120 %).
 * The reference has no such option: its transports decide pacing (docs/lab.md).
 */
#include "lh_bpf.h"
#include "lh_fast.h"

char _license[] SEC("license") = "GPL";

const volatile struct lh_fast_params lh_params = {
	.alpha = 200,
	.gamma_q10 = 512,
	.update_period_us = 20000,
	.mi_threshold_us = 750,
	.eta_cap_den = 4,
	.min2w_cap = 1,
	.every_other_rtt = 1,
	.pace_increments = 1,
	.rto_cwnd = 2,
	.beta = 0,
	.period_min = 1,
	.pace = 1,
	.climb_q10 = 128,
	.mi_backlog = 4,
};

/* FAST's state plus what the binding needs. */
struct lh_fast_sock {
	struct lh_fast f;
	__u32 reducing; /* in TCP_CA_CWR or TCP_CA_Recovery */
};

_Static_assert(sizeof(struct lh_fast_sock) <=
		       sizeof(((struct inet_connection_sock *)0)->icsk_ca_priv),
	       "FAST state must fit in icsk_ca_priv");

static __always_inline __u32 lh_packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

static __always_inline __u32 lh_ssthresh_for(struct sock *sk, __u32 cwnd)
{
	return lh_reno_ssthresh(cwnd);
}

SEC("struct_ops")
void BPF_PROG(lh_fast_init_op, struct sock *sk)
{
	struct lh_fast_sock *s = lh_ca_priv(sk);

	lh_fast_init(&s->f, lh_tcp_sk(sk)->snd_nxt);
	s->reducing = 0;
	/* Burstiness control by pacing (seed 001): TCP's internal pacing, as tcp_bbr.c asks for
	 * it; an fq qdisc sets SK_PACING_FQ, keep it. */
	if (lh_params.pace && sk->sk_pacing_status == SK_PACING_NONE)
		sk->sk_pacing_status = SK_PACING_NEEDED;
}

SEC("struct_ops")
void BPF_PROG(lh_fast_pkts_acked_op, struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = lh_tcp_sk(sk);
	struct lh_fast_sock *s = lh_ca_priv(sk);
	struct lh_fast_params p = lh_params;
	__u8 state = lh_ca_state(sk);

	/* From the kernel's state rather than only from set_state, which can be skipped. */
	s->reducing = state == TCP_CA_CWR || state == TCP_CA_Recovery;
	lh_fast_ack_begin(&s->f, tp->snd_una, tp->snd_nxt);
	lh_fast_rtt_sample(&s->f, &p, sample->rtt_us, lh_packets_in_flight(tp),
			   sample->pkts_acked, tp->tcp_mstamp);
	/* The kernel computes in_flight as mss·(delivered − the rate sample's prior_delivered);
	 * an ACK without a rate sample (it only cumulatively acknowledges segments SACKed
	 * earlier, whose delivery was already counted) leaves prior_delivered at 0, so in_flight
	 * is mss·delivered: every byte of the connection so far. Such an ACK says nothing about
	 * the window at send; keep the last estimate rather than let it double the window. */
	if (sample->in_flight != tp->mss_cache * tp->delivered)
		lh_fast_window_at_send(&s->f, sample->in_flight, tp->mss_cache);
	if (s->reducing)
		lh_fast_recovery_ack(&s->f, tp->tcp_mstamp);
}

SEC("struct_ops")
void BPF_PROG(lh_fast_set_state_op, struct sock *sk, __u8 new_state)
{
	struct tcp_sock *tp = lh_tcp_sk(sk);
	struct lh_fast_sock *s = lh_ca_priv(sk);
	__u32 rto_cwnd = lh_params.rto_cwnd;

	s->reducing = new_state == TCP_CA_CWR || new_state == TCP_CA_Recovery;
	if (new_state == TCP_CA_Loss) {
		/* tcp_enter_loss() has just set cwnd to the packets in flight + 1. */
		lh_fast_timeout(&s->f);
		if (tp->snd_cwnd < rto_cwnd)
			tp->snd_cwnd = rto_cwnd;
	}
}

SEC("struct_ops")
void BPF_PROG(lh_fast_cong_avoid_op, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = lh_tcp_sk(sk);
	struct lh_fast_sock *s = lh_ca_priv(sk);
	struct lh_fast_params p = lh_params;
	struct lh_window w;

	lh_window_load(tp, &w);
	/* With pace, this also marks the end of MI in ssthresh (lh_fast.h). */
	lh_fast_cong_avoid(&s->f, &w, &p, tp->tcp_mstamp, acked, lh_is_cwnd_limited(tp));
	lh_window_store(tp, &w);
}

SEC("struct_ops")
__u32 BPF_PROG(lh_fast_ssthresh_op, struct sock *sk)
{
	struct lh_fast_sock *s = lh_ca_priv(sk);

	return lh_bounded(lh_fast_ssthresh(&s->f, lh_tcp_sk(sk)->snd_cwnd), 2);
}

SEC("struct_ops")
__u32 BPF_PROG(lh_fast_undo_cwnd_op, struct sock *sk)
{
	return lh_undo_cwnd(lh_tcp_sk(sk));
}

/* Every incoming ACK, in every state: the repair of a skipped callback (lh_bpf.h). */
SEC("struct_ops")
void BPF_PROG(lh_fast_in_ack_event_op, struct sock *sk, __u32 flags)
{
	lh_repair_if_skipped(sk);
}

SEC(".struct_ops.link")
struct tcp_congestion_ops lh_fast = {
	.init = (void *)lh_fast_init_op,
	.pkts_acked = (void *)lh_fast_pkts_acked_op,
	.in_ack_event = (void *)lh_fast_in_ack_event_op,
	.set_state = (void *)lh_fast_set_state_op,
	.cong_avoid = (void *)lh_fast_cong_avoid_op,
	.ssthresh = (void *)lh_fast_ssthresh_op,
	.undo_cwnd = (void *)lh_fast_undo_cwnd_op,
	.name = "fast",
};
