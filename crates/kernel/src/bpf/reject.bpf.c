// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * A congestion control the verifier must refuse: it writes tcp_sock.snd_una, which BPF
 * congestion controls may not write (net/ipv4/bpf_tcp_ca.c). It exists only so the tests can
 * check that a rejection reaches the user with the verifier's log; it is never registered.
 */
#include "lh_bpf.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops")
void BPF_PROG(lh_reject_cong_avoid_op, struct sock *sk, __u32 ack, __u32 acked)
{
	lh_tcp_sk(sk)->snd_una = ack;
}

SEC("struct_ops")
__u32 BPF_PROG(lh_reject_ssthresh_op, struct sock *sk)
{
	return lh_reno_ssthresh(lh_tcp_sk(sk)->snd_cwnd);
}

SEC("struct_ops")
__u32 BPF_PROG(lh_reject_undo_cwnd_op, struct sock *sk)
{
	return lh_undo_cwnd(lh_tcp_sk(sk));
}

SEC(".struct_ops.link")
struct tcp_congestion_ops lh_reject = {
	.cong_avoid = (void *)lh_reject_cong_avoid_op,
	.ssthresh = (void *)lh_reject_ssthresh_op,
	.undo_cwnd = (void *)lh_reject_undo_cwnd_op,
	.name = "lh_reject",
};
