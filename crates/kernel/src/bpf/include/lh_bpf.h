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

/*
 * The kernel keeps snd_cwnd in a u32 but treats it as a positive int: tcp_snd_cwnd_set()
 * warns on (int)cwnd <= 0, and PRR and undo do signed arithmetic on it. No algorithm here
 * reaches 2^24 packets (24 GB of 1448-byte segments, 2 s at 100 Gb/s) on a real path; every
 * window, threshold and undo value handed back to the kernel is bounded to [floor, 2^24] so
 * that no arithmetic slip of ours, and no implausible kernel input (an ack_sample computed
 * without a rate sample), can become a window the kernel would misread.
 */
#define LH_CWND_MAX (1U << 24)

static __always_inline __u32 lh_bounded(__u32 v, __u32 floor)
{
	return v < floor ? floor : v > LH_CWND_MAX ? LH_CWND_MAX : v;
}

static __always_inline void lh_window_store(struct tcp_sock *tp, struct lh_window *w)
{
	w->cwnd = lh_bounded(w->cwnd, 1);
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
	return lh_bounded(lh_max_u32(tp->snd_cwnd, tp->prior_cwnd), 2);
}

/* icsk_ca_state: TCP_CA_Open, Disorder, CWR, Recovery or Loss. */
static __always_inline __u8 lh_ca_state(const struct sock *sk)
{
	return BPF_CORE_READ_BITFIELD((const struct inet_connection_sock *)sk, icsk_ca_state);
}

/*
 * Skipped callbacks. On some hosts the kernel now and then calls a struct_ops callback without
 * the program running: on Linux 6.18 in a VM, when the network softirq ran on top of one
 * particular user thread, the tracepoint tcp:tcp_cong_state_set fired while the set_state
 * program's run_cnt did not move (recursion_misses 0). A skipped callback that returns a value
 * hands the kernel an uninitialised one; for ssthresh that was a threshold of 48 million to
 * 3 billion packets, which the end of the recovery then turned into the window, and for
 * undo_cwnd a window the kernel warns about (tcp_snd_cwnd_set: (int)cwnd <= 0).
 *
 * So on every incoming ACK (in_ack_event, called in every state) each program checks the
 * window for that signature — a threshold or window above LH_CWND_MAX, or, during a
 * reduction, a threshold above the window the reduction started from (prior_cwnd; no
 * algorithm here raises it) — and restores what the skipped callback would have produced:
 * ssthresh from prior_cwnd by the algorithm's own rule (lh_ssthresh_for(), which each program
 * defines), the window at ssthresh when the threshold was the bad value (the end of recovery
 * copied it) and at prior_cwnd otherwise (an undo). A stale value that happens to be
 * plausible cannot be told apart and is left alone. Repairs
 * are counted in lh_repairs, which `longhaul kernel list` reports.
 */
__u64 lh_repairs = 0;

static __always_inline __u32 lh_ssthresh_for(struct sock *sk, __u32 cwnd);

static __always_inline void lh_repair_if_skipped(struct sock *sk)
{
	struct tcp_sock *tp = lh_tcp_sk(sk);
	__u8 state = lh_ca_state(sk);
	__u32 ss = tp->snd_ssthresh, cwnd = tp->snd_cwnd, prior = tp->prior_cwnd;
	int reducing = state == TCP_CA_CWR || state == TCP_CA_Recovery;
	int bad_ss = ss != LH_INFINITE_SSTHRESH &&
		     (ss > LH_CWND_MAX || (reducing && prior >= 2 && ss > prior));
	int bad_cwnd = cwnd == 0 || cwnd > LH_CWND_MAX;
	__u32 base;

	if (!bad_ss && !bad_cwnd)
		return;
	base = prior >= 2 && prior <= LH_CWND_MAX ? prior : 2;
	if (bad_ss) {
		ss = lh_bounded(lh_ssthresh_for(sk, base), 2);
		tp->snd_ssthresh = ss;
	}
	if (bad_cwnd)
		tp->snd_cwnd = bad_ss ? ss : base;
	__sync_fetch_and_add(&lh_repairs, 1);
}

#endif /* LH_BPF_H */
