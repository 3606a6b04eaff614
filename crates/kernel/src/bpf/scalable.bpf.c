// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Scalable TCP as a struct_ops congestion control. The algorithm and its sources are described
 * in include/lh_scalable.h; this file only binds it to the kernel's callbacks. Parameters are
 * read-only globals the loader sets before the program is loaded.
 */
#include "lh_bpf.h"
#include "lh_scalable.h"

char _license[] SEC("license") = "GPL";

const volatile struct lh_scalable_params lh_params = {
	.ai_cnt = 100,
	.md_q10 = 128,
	.legacy_cwnd = 100,
	.legacy_decrease = 0,
};

static __always_inline __u32 lh_ssthresh_for(struct sock *sk, __u32 cwnd)
{
	struct lh_scalable_params p = lh_params;

	return lh_scalable_ssthresh(cwnd, &p);
}

/* Every incoming ACK: only the repair of a skipped callback (lh_bpf.h). */
SEC("struct_ops")
void BPF_PROG(lh_scalable_in_ack_event_op, struct sock *sk, __u32 flags)
{
	lh_repair_if_skipped(sk);
}

SEC("struct_ops")
void BPF_PROG(lh_scalable_cong_avoid_op, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = lh_tcp_sk(sk);
	struct lh_scalable_params p = lh_params;
	struct lh_window w;

	if (!lh_is_cwnd_limited(tp))
		return;
	lh_window_load(tp, &w);
	lh_scalable_cong_avoid(&w, &p, acked);
	lh_window_store(tp, &w);
}

SEC("struct_ops")
__u32 BPF_PROG(lh_scalable_ssthresh_op, struct sock *sk)
{
	return lh_bounded(lh_ssthresh_for(sk, lh_tcp_sk(sk)->snd_cwnd), 2);
}

SEC("struct_ops")
__u32 BPF_PROG(lh_scalable_undo_cwnd_op, struct sock *sk)
{
	return lh_undo_cwnd(lh_tcp_sk(sk));
}

SEC(".struct_ops.link")
struct tcp_congestion_ops lh_scalable = {
	.in_ack_event = (void *)lh_scalable_in_ack_event_op,
	.cong_avoid = (void *)lh_scalable_cong_avoid_op,
	.ssthresh = (void *)lh_scalable_ssthresh_op,
	.undo_cwnd = (void *)lh_scalable_undo_cwnd_op,
	.name = "scalable",
};
