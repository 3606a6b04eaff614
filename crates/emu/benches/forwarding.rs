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
    // LONGHAUL_BENCH_PART=lateness: only the 1 Gb/s lateness rows.
    let parts = match std::env::var("LONGHAUL_BENCH_PART").as_deref() {
        Ok("lateness") => longhaul_emu::bench::Parts::Lateness,
        _ => longhaul_emu::bench::Parts::All,
    };
    match longhaul_emu::bench::run_parts(std::time::Duration::from_secs_f64(secs), parts) {
        Ok(r) => println!("{}", r.table()),
        Err(e) => {
            eprintln!("benchmark failed: {e}");
            std::process::exit(1);
        }
    }
}
