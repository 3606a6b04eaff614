// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * TCP Vegas as a struct_ops congestion control. The algorithm and its sources are described in
 * include/lh_vegas.h; this file binds it to the kernel's callbacks, as tcp_vegas.c does:
 * Vegas runs only in TCP_CA_Open and restarts its RTT estimate after idle.
 */
#include "lh_bpf.h"
#include "lh_vegas.h"

char _license[] SEC("license") = "GPL";

const volatile struct lh_vegas_params lh_params = {
	.alpha = 2,
	.beta = 4,
	.gamma = 1,
	.linux_compat = 0,
};

_Static_assert(sizeof(struct lh_vegas) <= sizeof(((struct inet_connection_sock *)0)->icsk_ca_priv),
	       "Vegas state must fit in icsk_ca_priv");

static __always_inline __u32 lh_ssthresh_for(struct sock *sk, __u32 cwnd)
{
	return lh_reno_ssthresh(cwnd);
}

SEC("struct_ops")
void BPF_PROG(lh_vegas_init_op, struct sock *sk)
{
	lh_vegas_init(lh_ca_priv(sk), lh_tcp_sk(sk)->snd_nxt);
}

SEC("struct_ops")
void BPF_PROG(lh_vegas_pkts_acked_op, struct sock *sk, const struct ack_sample *sample)
{
	struct lh_vegas *v = lh_ca_priv(sk);
	int open = lh_ca_state(sk) == TCP_CA_Open;

	/* Follow the kernel's state here too, in case its set_state call was skipped. */
	if (open && !v->doing_vegas_now)
		lh_vegas_enable(v, lh_tcp_sk(sk)->snd_nxt);
	else if (!open)
		v->doing_vegas_now = 0;
	lh_vegas_rtt_sample(v, sample->rtt_us);
}

SEC("struct_ops")
void BPF_PROG(lh_vegas_set_state_op, struct sock *sk, __u8 ca_state)
{
	struct lh_vegas *v = lh_ca_priv(sk);

	if (ca_state == TCP_CA_Open)
		lh_vegas_enable(v, lh_tcp_sk(sk)->snd_nxt);
	else
		v->doing_vegas_now = 0;
}

SEC("struct_ops")
void BPF_PROG(lh_vegas_cwnd_event_op, struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_CWND_RESTART || event == CA_EVENT_TX_START)
		lh_vegas_init(lh_ca_priv(sk), lh_tcp_sk(sk)->snd_nxt);
}

SEC("struct_ops")
void BPF_PROG(lh_vegas_cong_avoid_op, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = lh_tcp_sk(sk);
	struct lh_vegas_params p = lh_params;
	struct lh_window w;

	lh_window_load(tp, &w);
	lh_vegas_cong_avoid(lh_ca_priv(sk), &w, &p, ack, tp->snd_nxt, acked,
			    lh_is_cwnd_limited(tp));
	lh_window_store(tp, &w);
}

SEC("struct_ops")
__u32 BPF_PROG(lh_vegas_ssthresh_op, struct sock *sk)
{
	return lh_bounded(lh_ssthresh_for(sk, lh_tcp_sk(sk)->snd_cwnd), 2);
}

SEC("struct_ops")
__u32 BPF_PROG(lh_vegas_undo_cwnd_op, struct sock *sk)
{
	return lh_undo_cwnd(lh_tcp_sk(sk));
}

/* Every incoming ACK, in every state: the repair of a skipped callback (lh_bpf.h). */
SEC("struct_ops")
void BPF_PROG(lh_vegas_in_ack_event_op, struct sock *sk, __u32 flags)
{
	lh_repair_if_skipped(sk);
}

SEC(".struct_ops.link")
struct tcp_congestion_ops lh_vegas = {
	.init = (void *)lh_vegas_init_op,
	.pkts_acked = (void *)lh_vegas_pkts_acked_op,
	.in_ack_event = (void *)lh_vegas_in_ack_event_op,
	.set_state = (void *)lh_vegas_set_state_op,
	.cwnd_event = (void *)lh_vegas_cwnd_event_op,
	.cong_avoid = (void *)lh_vegas_cong_avoid_op,
	.ssthresh = (void *)lh_vegas_ssthresh_op,
	.undo_cwnd = (void *)lh_vegas_undo_cwnd_op,
	.name = "vegas",
};
