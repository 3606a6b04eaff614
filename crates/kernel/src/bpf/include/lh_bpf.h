/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Glue between the kernel's struct tcp_sock and the pure arithmetic headers, for the
 * struct_ops programs only (never compiled natively).
 *
 * BPF congestion controls may write only snd_cwnd, snd_cwnd_cnt, snd_ssthresh (and a few
 * others) of tcp_sock, and their own state in icsk_ca_priv (net/ipv4/bpf_tcp_ca.c). Every
 * callback copies the window fields into a struct lh_window, runs the shared arithmetic and
 * writes back only what changed.
 */
#ifndef LH_BPF_H
#define LH_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "lh_window.h"

#define LH_CA_STATE_OPEN 0 /* TCP_CA_Open */

static __always_inline struct tcp_sock *lh_tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline void *lh_ca_priv(const struct sock *sk)
{
	return (void *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline void lh_window_load(const struct tcp_sock *tp, struct lh_window *w)
{
	w->cwnd = tp->snd_cwnd;
	w->cwnd_cnt = tp->snd_cwnd_cnt;
	w->ssthresh = tp->snd_ssthresh;
	w->clamp = tp->snd_cwnd_clamp;
}

static __always_inline void lh_window_store(struct tcp_sock *tp, const struct lh_window *w)
{
	if (tp->snd_cwnd != w->cwnd)
		tp->snd_cwnd = w->cwnd;
	if (tp->snd_cwnd_cnt != w->cwnd_cnt)
		tp->snd_cwnd_cnt = w->cwnd_cnt;
	if (tp->snd_ssthresh != w->ssthresh)
		tp->snd_ssthresh = w->ssthresh;
}

/* tcp_is_cwnd_limited() from include/net/tcp.h. */
static __always_inline int lh_is_cwnd_limited(const struct tcp_sock *tp)
{
	if (tp->snd_cwnd < tp->snd_ssthresh)
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited);
}

/* tcp_reno_undo_cwnd(): restore the window an undone reduction took away. */
static __always_inline __u32 lh_undo_cwnd(const struct tcp_sock *tp)
{
	return lh_max_u32(tp->snd_cwnd, tp->prior_cwnd);
}

#endif /* LH_BPF_H */
