//! Forwarding benchmark (needs root): `cargo bench -p longhaul-emu --bench forwarding`.
//! Same as `longhaul emu bench`: naive TUN forwarder vs the emulator in the same run.

fn main() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("forwarding benchmark skipped: needs root (network namespaces and TUN devices)");
        return;
    }
    let secs: f64 = std::env::var("LONGHAUL_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    match longhaul_emu::bench::run(std::time::Duration::from_secs_f64(secs)) {
        Ok(r) => println!("{}", r.table()),
        Err(e) => {
            eprintln!("benchmark failed: {e}");
            std::process::exit(1);
        }
    }
}
