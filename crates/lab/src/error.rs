//! What can go wrong in a lab run, each with what to do about it.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum LabError {
    /// The scenario is valid for the simulator but asks for something one emulated bottleneck
    /// with kernel TCP cannot do.
    #[error("{file}: field `{field}`: {message} (longhaul lab runs a dumbbell over one emulated bottleneck; see docs/lab.md)")]
    Unsupported {
        file: String,
        field: String,
        message: String,
    },
    #[error(transparent)]
    Scenario(#[from] longhaul_sim::ScenarioError),
    #[error(
        "longhaul lab needs root: it creates network namespaces and TUN devices and loads eBPF \
         congestion controls; run it with sudo or as root"
    )]
    NotRoot,
    #[error("congestion control `{name}`: {message}")]
    Congestion { name: String, message: String },
    #[error("emulator: {0}")]
    Emulator(#[from] longhaul_emu::EmulatorError),
    #[error("flow {flow}: {message}")]
    Flow { flow: u32, message: String },
    #[error("{what}: {message}")]
    Setup { what: String, message: String },
    #[error(
        "interrupted by signal {0}; the namespaces and loaded congestion controls were removed"
    )]
    Interrupted(i32),
    #[error("no built-in lab scenario named `{name}`; built-ins are: {known}")]
    UnknownBuiltin { name: String, known: String },
}
