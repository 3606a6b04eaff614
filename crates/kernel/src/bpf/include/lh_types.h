/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Integer types and small helpers shared by the congestion-control arithmetic headers.
 *
 * Every lh_<algorithm>.h header is compiled twice: into the eBPF object (clang -target bpf,
 * after vmlinux.h, which defines __u32/__u64/__s32) and natively into the test library (where
 * this header defines the same names from <stdint.h>). The headers hold pure functions only:
 * no kernel structures, no helpers, no loops on the per-ACK path, no floating point.
 */
#ifndef LH_TYPES_H
#define LH_TYPES_H

#ifndef __bpf__
#include <stdint.h>
typedef uint8_t __u8;
typedef uint16_t __u16;
typedef uint32_t __u32;
typedef int32_t __s32;
typedef uint64_t __u64;
typedef int64_t __s64;
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define LH_INLINE static __always_inline
/* A call the compiler keeps: it cannot specialise the caller's code on the callee's branches
 * (which can multiply the paths the eBPF verifier walks). */
#define LH_NOINLINE static __attribute__((noinline))

LH_INLINE __u32 lh_min_u32(__u32 a, __u32 b) { return a < b ? a : b; }
LH_INLINE __u32 lh_max_u32(__u32 a, __u32 b) { return a > b ? a : b; }
LH_INLINE __u64 lh_min_u64(__u64 a, __u64 b) { return a < b ? a : b; }

/* Sequence-space comparison, as the kernel's after(): true when seq1 is later than seq2. */
LH_INLINE int lh_after(__u32 seq1, __u32 seq2) { return (__s32)(seq2 - seq1) < 0; }

/* The kernel's TCP_INFINITE_SSTHRESH. */
#define LH_INFINITE_SSTHRESH 0x7fffffffU

/* Fixed-point fractions (γ, b) are carried in Q10: 1024 is 1.0. */
#define LH_Q10_SHIFT 10
#define LH_Q10_ONE (1U << LH_Q10_SHIFT)

#endif /* LH_TYPES_H */
