// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * FAST TCP as a struct_ops congestion control. The algorithm and its sources are described in
 * include/lh_fast.h; this file binds it to the kernel's callbacks: RTT samples arrive through
 * pkts_acked (Karn-clean, from the most recently acknowledged never-retransmitted segment), the
 * window law runs in cong_avoid (never called in CWR, Recovery or Loss), and the kernel's
 * recovery carries out the halving ssthresh returns.
 */
#include "lh_bpf.h"
#include "lh_fast.h"

char _license[] SEC("license") = "GPL";

const volatile struct lh_fast_params lh_params = {
	.alpha = 20,
	.gamma_q10 = 512,
	.update_period_us = 10000,
	.mi_threshold_us = 750,
};

_Static_assert(sizeof(struct lh_fast) <= sizeof(((struct inet_connection_sock *)0)->icsk_ca_priv),
	       "FAST state must fit in icsk_ca_priv");

SEC("struct_ops")
void BPF_PROG(lh_fast_init_op, struct sock *sk)
{
	struct tcp_sock *tp = lh_tcp_sk(sk);

	lh_fast_init(lh_ca_priv(sk), tp->snd_nxt, tp->snd_cwnd, tp->tcp_mstamp);
}

SEC("struct_ops")
void BPF_PROG(lh_fast_pkts_acked_op, struct sock *sk, const struct ack_sample *sample)
{
	lh_fast_rtt_sample(lh_ca_priv(sk), sample->rtt_us, lh_tcp_sk(sk)->snd_cwnd);
}

SEC("struct_ops")
void BPF_PROG(lh_fast_cong_avoid_op, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = lh_tcp_sk(sk);
	struct lh_fast_params p = lh_params;
	struct lh_window w;

	if (!lh_is_cwnd_limited(tp))
		return;
	lh_window_load(tp, &w);
	lh_fast_cong_avoid(lh_ca_priv(sk), &w, &p, ack, tp->snd_nxt, tp->tcp_mstamp, acked);
	lh_window_store(tp, &w);
}

SEC("struct_ops")
__u32 BPF_PROG(lh_fast_ssthresh_op, struct sock *sk)
{
	return lh_fast_ssthresh(lh_tcp_sk(sk)->snd_cwnd);
}

SEC("struct_ops")
__u32 BPF_PROG(lh_fast_undo_cwnd_op, struct sock *sk)
{
	return lh_undo_cwnd(lh_tcp_sk(sk));
}

SEC(".struct_ops.link")
struct tcp_congestion_ops lh_fast = {
	.init = (void *)lh_fast_init_op,
	.pkts_acked = (void *)lh_fast_pkts_acked_op,
	.cong_avoid = (void *)lh_fast_cong_avoid_op,
	.ssthresh = (void *)lh_fast_ssthresh_op,
	.undo_cwnd = (void *)lh_fast_undo_cwnd_op,
	.name = "fast",
};
