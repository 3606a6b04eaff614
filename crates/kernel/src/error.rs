//! What can go wrong when loading, listing or unloading, each with what to do about it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    #[error("{action} needs root (CAP_BPF and CAP_NET_ADMIN); run it with sudo")]
    NotRoot { action: &'static str },

    #[error(
        "this kernel has no BTF ({path} is missing); eBPF congestion controls need a kernel \
         built with CONFIG_DEBUG_INFO_BTF=y"
    )]
    NoBtf { path: PathBuf },

    #[error(
        "kernel {release} is too old: eBPF congestion controls registered through struct_ops \
         links need Linux {needed} or later"
    )]
    UnsupportedKernel {
        release: String,
        needed: &'static str,
    },

    #[error("unknown algorithm `{0}` (available: fast, scalable, highspeed, vegas)")]
    UnknownAlgorithm(String),

    #[error("{algorithm}: {message}")]
    BadParam {
        algorithm: &'static str,
        message: String,
    },

    #[error(
        "congestion-control name `{0}` is longer than 15 bytes (the kernel's TCP_CA_NAME_MAX is 16 \
         with the terminating NUL)"
    )]
    NameTooLong(String),

    #[error(
        "the kernel already has a congestion control named `{name}` ({owner}); choose another \
         name with --name (for example lh_{name})"
    )]
    NameTaken { name: String, owner: String },

    #[error("the kernel verifier rejected {program}: {message}\n--- verifier log ---\n{log}")]
    Verifier {
        program: String,
        message: String,
        log: String,
    },

    #[error(
        "no congestion control named `{0}` is loaded by longhaul (see `longhaul kernel list`)"
    )]
    NotLoaded(String),

    #[error("registering `{name}` failed: {message}")]
    Register { name: String, message: String },

    #[error("{context}: {source}")]
    Bpf {
        context: String,
        #[source]
        source: libbpf_rs::Error,
    },

    #[error("{context}: {source}")]
    Io {
        context: String,
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
