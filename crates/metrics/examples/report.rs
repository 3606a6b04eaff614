//! Write the example summary's JSON and HTML report into a directory and print its table:
//! `cargo run -p longhaul-metrics --example report -- /tmp/longhaul-report`

use longhaul_metrics::example::example_summary;
use longhaul_metrics::report::{summary_table, write_html_report};
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "longhaul-report".into()),
    );
    std::fs::create_dir_all(&dir)?;
    let s = example_summary();
    s.write(&dir.join("summary.json"))?;
    write_html_report(&s, &dir.join("report.html"))?;
    print!("{}", summary_table(&s));
    eprintln!("wrote {}/summary.json and report.html", dir.display());
    Ok(())
}
