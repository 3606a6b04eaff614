//! What can go wrong in a lab run, each with what to do about it.

use thiserror::Error;

/// Why a lab run could not be planned, set up or finished; each message says what to do.
#[derive(Debug, Error)]
pub enum LabError {
    /// The scenario is valid for the simulator but asks for something one emulated bottleneck
    /// with kernel TCP cannot do.
    #[error("{file}: field `{field}`: {message} (longhaul lab runs a dumbbell over one emulated bottleneck; see docs/lab.md)")]
    Unsupported {
        /// The scenario file.
        file: String,
        /// The field the lab cannot honour.
        field: String,
        /// Why not.
        message: String,
    },
    /// The scenario does not parse or check as a simulator scenario.
    #[error(transparent)]
    Scenario(#[from] longhaul_sim::ScenarioError),
    /// The run needs root for namespaces, TUN devices and eBPF.
    #[error(
        "longhaul lab needs root: it creates network namespaces and TUN devices and loads eBPF \
         congestion controls; run it with sudo or as root"
    )]
    NotRoot,
    /// A flow's congestion control could not be made available in the kernel.
    #[error("congestion control `{name}`: {message}")]
    Congestion {
        /// The congestion control's name.
        name: String,
        /// What failed.
        message: String,
    },
    /// The emulator failed to start or stopped with an error.
    #[error("emulator: {0}")]
    Emulator(#[from] longhaul_emu::EmulatorError),
    /// A flow's measurement failed.
    #[error("flow {flow}: {message}")]
    Flow {
        /// The flow's id, numbered as the simulator numbers it.
        flow: u32,
        /// What failed.
        message: String,
    },
    /// A step of setting up, running or tearing down the hosts failed.
    #[error("{what}: {message}")]
    Setup {
        /// The step, e.g. "waiting for the flows".
        what: String,
        /// What failed.
        message: String,
    },
    /// A signal stopped the run after cleanup.
    #[error(
        "interrupted by signal {0}; the namespaces and loaded congestion controls were removed"
    )]
    Interrupted(i32),
    /// `longhaul lab NAME` with a name that is neither a file nor a built-in.
    #[error("no built-in lab scenario named `{name}`; built-ins are: {known}")]
    UnknownBuiltin {
        /// The name given.
        name: String,
        /// The built-ins' names.
        known: String,
    },
    /// `longhaul lab NAME --variant LABEL` with a label the built-in does not have.
    #[error("built-in `{name}` has no variant `{variant}`; variants: {labels}")]
    UnknownVariant {
        /// The built-in.
        name: String,
        /// The label given.
        variant: String,
        /// The built-in's labels.
        labels: String,
    },
}

impl From<longhaul_emu::scenario::Unsupported> for LabError {
    fn from(e: longhaul_emu::scenario::Unsupported) -> Self {
        LabError::Unsupported {
            file: e.file,
            field: e.field,
            message: e.message,
        }
    }
}
