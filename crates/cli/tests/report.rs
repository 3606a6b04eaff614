//! `sim --report`: the HTML page and the exported figures drawn from a real simulated run,
//! checked against its summary.

use std::path::Path;
use std::process::Command;

#[test]
fn sim_report_figures_match_the_summary() {
    let dir = std::env::temp_dir().join(format!("longhaul-report-{}", std::process::id()));
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/dumbbell-reno.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args([
            "sim",
            scenario.to_str().unwrap(),
            "--duration",
            "20s",
            "--quiet",
            "--png",
            "--report",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let series = &s["flows"][0]["series"];
    let n = series["t"].as_array().unwrap().len();
    assert_eq!(n, 200, "20 s of 100 ms intervals");
    // Reno overflows the one-BDP buffer: some intervals retransmit, and the cwnd plot marks
    // each of them with a triangle (plus the legend's).
    let retx: Vec<f64> = series["retransmits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(retx.len(), n);
    let marked = retx.iter().filter(|&&r| r > 0.0).count();
    assert!(marked > 0, "no retransmissions in 20 s of Reno");
    let total: f64 = retx.iter().sum();
    assert_eq!(total as u64, s["flows"][0]["retransmits"].as_u64().unwrap());
    let cwnd = std::fs::read_to_string(dir.join("figures/cwnd.svg")).unwrap();
    assert!(html.contains(&cwnd), "the exported figure is the page's");
    assert_eq!(cwnd.matches("<polygon").count(), marked + 1);
    // The queue in ms: the bottleneck's bytes at 100 Mb/s. Its axis reaches the largest value.
    let q = std::fs::read_to_string(dir.join("figures/queue-ms.svg")).unwrap();
    let link = s["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "bottleneck")
        .unwrap();
    let max_bytes = link["series"]["queue_bytes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_f64())
        .fold(0.0, f64::max);
    let max_ms = max_bytes * 8.0 / link["capacity_bps"].as_f64().unwrap() * 1e3;
    assert!(max_ms > 10.0, "Reno fills a 40 ms buffer: {max_ms} ms");
    let ticks: Vec<f64> = q
        .lines()
        .filter_map(|l| l.trim().parse::<f64>().ok())
        .collect();
    let top = ticks.iter().copied().fold(0.0, f64::max);
    assert!(
        top <= max_ms * 1.06 && top >= max_ms * 0.6,
        "axis top {top}, queue max {max_ms}"
    );
    // Every figure of a one-flow run is on the page; Jain's index needs two flows.
    for id in [
        "throughput",
        "aggregate",
        "cwnd",
        "rtt-cdf",
        "queueing-delay-cdf",
        "queue-ms",
        "throughput-delay",
    ] {
        assert!(html.contains(&format!("<figure id=\"{id}\"><svg")), "{id}");
    }
    assert!(html.contains("fewer than two flows with throughput series"));
    // --png: every exported SVG also as a PNG of twice its size (IHDR: width, height).
    for id in ["throughput", "cwnd", "queue-ms", "throughput-delay"] {
        let png = std::fs::read(dir.join(format!("figures/{id}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{id}");
        let dim = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
        assert_eq!((dim(16), dim(20)), (1720, 680), "{id}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
