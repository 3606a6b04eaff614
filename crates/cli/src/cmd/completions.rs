//! `longhaul completions SHELL`: a completion script generated from the command-line
//! definition (clap_complete), so it never falls behind the commands it completes.

use clap::Args;
use clap_complete::Shell;

#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell to complete for. Install, e.g. for bash:
    /// `longhaul completions bash > /etc/bash_completion.d/longhaul`.
    pub shell: Shell,
}

/// The completion script for `shell`.
pub fn script(cli: &mut clap::Command, shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, cli, "longhaul", &mut out);
    out
}

pub fn run(args: CompletionsArgs, mut cli: clap::Command) -> anyhow::Result<()> {
    use std::io::Write;
    std::io::stdout().write_all(&script(&mut cli, args.shell))?;
    Ok(())
}
