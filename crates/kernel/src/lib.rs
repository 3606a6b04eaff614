//! longhaul-kernel: FAST TCP, Scalable TCP, HighSpeed TCP, TCP Vegas and Lion as Linux
//! congestion controls, written as eBPF `struct_ops` programs that any TCP program can use
//! (`sysctl net.ipv4.tcp_congestion_control`, or `setsockopt(TCP_CONGESTION)`) without
//! rebuilding the kernel.
//!
//! The main types: [`Algorithm`] names a program and its parameters ([`ParamValues`]);
//! [`load`] registers one under a name and returns what it [`Loaded`]; [`KernelError`] says
//! what went wrong and what to do about it.
//!
//! Layout:
//! - `src/bpf/include/lh_<algorithm>.h`: each algorithm's arithmetic as pure C functions
//!   (fixed point, loop-free), with the header comment that explains the algorithm and its
//!   sources. The same headers are compiled into the eBPF objects and natively ([`native`]).
//! - `src/bpf/<algorithm>.bpf.c`: the `tcp_congestion_ops` binding of each algorithm.
//! - [`catalog`]: the algorithms, their load-time parameters and how those map onto the
//!   programs' read-only globals.
//! - [`loader`]: load (register and pin), list and unload.
//! - [`sockets`]: which sockets use which congestion control (sock_diag).
//! - [`status`]: what `longhaul kernel list` shows of them, as a table or JSON.
//!
//! Kernel requirements: BTF (`/sys/kernel/btf/vmlinux`), `struct_ops` links (Linux 6.4 or later)
//! and root (CAP_BPF + CAP_NET_ADMIN) to load.

#![warn(missing_docs)]

pub mod catalog;
pub mod error;
pub mod loader;
pub mod native;
mod skel;
pub mod sockets;
pub mod status;

pub use catalog::{Algorithm, ParamValues};
pub use error::KernelError;
pub use loader::{list, load, unload, LoadOptions, Loaded};
