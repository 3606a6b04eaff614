// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * HighSpeed TCP as a struct_ops congestion control. The algorithm, its table and its sources
 * are in include/lh_highspeed.h; this file binds it to the kernel's callbacks.
 */
#include "lh_bpf.h"
#include "lh_highspeed.h"

char _license[] SEC("license") = "GPL";

const volatile struct lh_hstcp_params lh_params = {
	.ignore_acked = 1,
};

static __always_inline __u32 lh_ssthresh_for(struct sock *sk, __u32 cwnd)
{
	return lh_hstcp_ssthresh(cwnd);
}

/* Every incoming ACK: only the repair of a skipped callback (lh_bpf.h). */
SEC("struct_ops")
void BPF_PROG(lh_hstcp_in_ack_event_op, struct sock *sk, __u32 flags)
{
	lh_repair_if_skipped(sk);
}

SEC("struct_ops")
void BPF_PROG(lh_hstcp_cong_avoid_op, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = lh_tcp_sk(sk);
	struct lh_hstcp_params p = lh_params;
	struct lh_window w;

	if (!lh_is_cwnd_limited(tp))
		return;
	lh_window_load(tp, &w);
	w.clamp = lh_min_u32(w.clamp, LH_HSTCP_MAX_CLAMP);
	lh_hstcp_cong_avoid(&w, &p, acked);
	lh_window_store(tp, &w);
}

SEC("struct_ops")
__u32 BPF_PROG(lh_hstcp_ssthresh_op, struct sock *sk)
{
	return lh_bounded(lh_ssthresh_for(sk, lh_tcp_sk(sk)->snd_cwnd), 2);
}

SEC("struct_ops")
__u32 BPF_PROG(lh_hstcp_undo_cwnd_op, struct sock *sk)
{
	return lh_undo_cwnd(lh_tcp_sk(sk));
}

SEC(".struct_ops.link")
struct tcp_congestion_ops lh_highspeed = {
	.in_ack_event = (void *)lh_hstcp_in_ack_event_op,
	.cong_avoid = (void *)lh_hstcp_cong_avoid_op,
	.ssthresh = (void *)lh_hstcp_ssthresh_op,
	.undo_cwnd = (void *)lh_hstcp_undo_cwnd_op,
	.name = "highspeed",
};
