//! What can go wrong when loading, listing or unloading, each with what to do about it.

use std::path::PathBuf;

/// Why loading, listing or unloading a congestion control failed; each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// The action needs CAP_BPF and CAP_NET_ADMIN.
    #[error("{action} needs root (CAP_BPF and CAP_NET_ADMIN); run it with sudo")]
    NotRoot {
        /// What was attempted, for the message.
        action: &'static str,
    },

    /// The running kernel exposes no BTF, which struct_ops programs need.
    #[error(
        "this kernel has no BTF ({path} is missing); eBPF congestion controls need a kernel \
         built with CONFIG_DEBUG_INFO_BTF=y"
    )]
    NoBtf {
        /// The BTF file that is missing (`/sys/kernel/btf/vmlinux`).
        path: PathBuf,
    },

    /// The running kernel predates struct_ops links.
    #[error(
        "kernel {release} is too old: eBPF congestion controls registered through struct_ops \
         links need Linux {needed} or later"
    )]
    UnsupportedKernel {
        /// The running kernel's release (`uname -r`).
        release: String,
        /// The oldest release that works.
        needed: &'static str,
    },

    /// A name that is not one of the eBPF algorithms.
    #[error("unknown algorithm `{name}` (available: {available})")]
    UnknownAlgorithm {
        /// The name asked for.
        name: String,
        /// The eBPF algorithms' names, comma-separated.
        available: String,
    },

    /// A parameter that is unknown, out of range or malformed.
    #[error("{algorithm}: {message}")]
    BadParam {
        /// The algorithm whose parameter it is.
        algorithm: &'static str,
        /// What is wrong with it.
        message: String,
    },

    /// A registration name the kernel cannot hold.
    #[error(
        "congestion-control name `{0}` is longer than 15 bytes (the kernel's TCP_CA_NAME_MAX is 16 \
         with the terminating NUL)"
    )]
    NameTooLong(String),

    /// The kernel already has a congestion control of that name.
    #[error(
        "the kernel already has a congestion control named `{name}` ({owner}); choose another \
         name with --name (for example lh_{name})"
    )]
    NameTaken {
        /// The name asked for.
        name: String,
        /// Who holds it: the kernel's own module or a program loaded by longhaul.
        owner: String,
    },

    /// The verifier refused a program; `log` is its full output.
    #[error("the kernel verifier rejected {program}: {message}\n--- verifier log ---\n{log}")]
    Verifier {
        /// The program refused.
        program: String,
        /// libbpf's error.
        message: String,
        /// The verifier's log.
        log: String,
    },

    /// Unloading a name longhaul has not loaded.
    #[error(
        "no congestion control named `{0}` is loaded by longhaul (see `longhaul kernel list`)"
    )]
    NotLoaded(String),

    /// Attaching the struct_ops map failed.
    #[error("registering `{name}` failed: {message}")]
    Register {
        /// The congestion control's name.
        name: String,
        /// libbpf's error.
        message: String,
    },

    /// Any other libbpf failure, with what was being done.
    #[error("{context}: {source}")]
    Bpf {
        /// What was being done.
        context: String,
        /// libbpf's error.
        #[source]
        source: libbpf_rs::Error,
    },

    /// A file or system call failed, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
}

impl KernelError {
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> KernelError {
        let context = context.into();
        move |source| KernelError::Io { context, source }
    }

    pub(crate) fn bpf(context: impl Into<String>) -> impl FnOnce(libbpf_rs::Error) -> KernelError {
        let context = context.into();
        move |source| KernelError::Bpf { context, source }
    }
}
