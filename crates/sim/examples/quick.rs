fn main() {
    let path = std::env::args().nth(1).expect("scenario");
    let sets: Vec<String> = std::env::args().skip(2).collect();
    let c = longhaul_sim::Scenario::load(path.as_ref(), &sets).unwrap_or_else(|e| panic!("{e}"));
    let t = std::time::Instant::now();
    let o = longhaul_sim::run(&c, &mut |_| {}).unwrap();
    let w = t.elapsed().as_secs_f64();
    println!("{}", serde_json::to_string_pretty(&o.summary).unwrap());
    eprintln!(
        "wall {w:.3}s events {} ({:.1} M/s)",
        o.events,
        o.events as f64 / w / 1e6
    );
}
