//! The HTML report: one self-contained file (inline SVG and CSS, no scripts, no external links).
//!
//! The plots are report::figures'; each figure's title is drawn in its SVG, so the page adds
//! none of its own.

use super::figures::{figures, Figure};
use super::table::{num, opt_num, pct};
use crate::error::MetricsError;
use crate::summary::Summary;
use crate::units::{bmps_to_e15, format_bmps_lsr, to_mbps};
use std::fmt::Write as _;
use std::path::Path;

/// Escape text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:sans-serif;max-width:900px;margin:2em auto;color:#222}\
table{border-collapse:collapse;margin:1em 0}th,td{padding:3px 9px;border-bottom:1px solid #ddd}\
td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f4f4f4}\
.no{color:#b00;font-weight:bold}.missing{color:#777;font-style:italic}figure{margin:1.5em 0}";

/// Append a table: `head` is escaped here, cells are HTML already; columns from
/// `first_text_cols` on are numbers (right-aligned, tabular figures).
pub fn table(out: &mut String, head: &[&str], rows: &[Vec<String>], first_text_cols: usize) {
    out.push_str("<table><tr>");
    for h in head {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr>\n");
    for r in rows {
        out.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let class = if i < first_text_cols {
                ""
            } else {
                " class=\"n\""
            };
            let _ = write!(out, "<td{class}>{}</td>", c);
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

/// A whole self-contained document in the reports' style around `body` (HTML already).
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>longhaul: {}</title><style>{STYLE}</style></head><body>\n{body}</body></html>\n",
        esc(title)
    )
}

/// The report as one HTML document.
pub fn html_report(s: &Summary) -> Result<String, MetricsError> {
    let mut h = String::new();
    section(&mut h, s)?;
    Ok(page(&s.scenario, &h))
}

/// Several experiments (`reproduce --report`) in one document: seed 000's Table 1 layout over
/// all of them (report::experiments_table), then each experiment's full report.
pub fn html_report_many(title: &str, summaries: &[Summary]) -> Result<String, MetricsError> {
    let mut h = String::new();
    let _ = writeln!(h, "<h1>{}</h1>", esc(title));
    let _ = writeln!(
        h,
        "<pre>{}</pre>",
        esc(&super::experiments::experiments_table(summaries))
    );
    for s in summaries {
        h.push_str("<hr><section>\n");
        section(&mut h, s)?;
        h.push_str("</section>\n");
    }
    Ok(page(title, &h))
}

/// One summary's headings, tables and plots.
fn section(h: &mut String, s: &Summary) -> Result<(), MetricsError> {
    let _ = writeln!(
        h,
        "<h1>{}</h1>\n<p>{} mode, {} s, seed {}</p>",
        esc(&s.scenario),
        s.mode,
        num(s.duration_s, 1),
        s.seed
    );
    let problems = s.problems();
    if !problems.is_empty() {
        h.push_str("<p class=\"no\">This summary has problems:</p><ul>");
        for p in problems {
            let _ = write!(h, "<li>{}</li>", esc(&p));
        }
        h.push_str("</ul>\n");
    }

    let a = &s.aggregate;
    h.push_str("<h2>Aggregate</h2>\n");
    table(
        h,
        &[
            "throughput (Mb/s)",
            "utilization (%)",
            "Jain index",
            "CoV (1 s)",
            "b·m/s (10^15)",
            "LSR units",
        ],
        &[vec![
            num(to_mbps(a.throughput_bps), 1),
            num(100.0 * a.utilization, 1),
            num(a.jain, 3),
            num(a.cov, 3),
            num(bmps_to_e15(a.bmps), 2),
            esc(&format_bmps_lsr(a.bmps)),
        ]],
        0,
    );

    h.push_str("<h2>Flows</h2>\n");
    let rows: Vec<Vec<String>> = s
        .flows
        .iter()
        .map(|f| {
            vec![
                f.id.to_string(),
                esc(&f.cc),
                num(to_mbps(f.throughput_bps), 1),
                num(100.0 * f.utilization, 1),
                num(f.min_rtt_ms, 1),
                num(f.queueing_delay_ms.mean, 2),
                num(f.queueing_delay_ms.p95, 2),
                opt_num(f.queueing_delay_ms.p99, 2),
                pct(100.0 * f.loss_rate),
                f.retransmits.to_string(),
                num(bmps_to_e15(f.bmps), 2),
            ]
        })
        .collect();
    table(
        h,
        &[
            "flow",
            "cc",
            "throughput (Mb/s)",
            "util (% of its own limit, over its own active time)",
            "min RTT (ms)",
            "qdelay mean (ms)",
            "qdelay p95 (ms)",
            "qdelay p99 (ms)",
            "loss (%)",
            "retrans",
            "b·m/s (10^15)",
        ],
        &rows,
        2,
    );

    if !s.links.is_empty() {
        h.push_str("<h2>Links</h2>\n");
        let rows: Vec<Vec<String>> = s
            .links
            .iter()
            .map(|l| {
                let reasons: Vec<String> = l
                    .drops_by_reason
                    .iter()
                    .map(|(r, n)| format!("{} {n}", esc(r)))
                    .collect();
                vec![
                    esc(&l.name),
                    num(to_mbps(l.capacity_bps), 0),
                    num(100.0 * l.utilization, 1),
                    l.drops.to_string(),
                    reasons.join(", "),
                    num(l.queue_delay_ms.mean, 2),
                    num(l.queue_delay_ms.p95, 2),
                    num(l.queue_delay_ms.p99, 2),
                ]
            })
            .collect();
        table(
            h,
            &[
                "link",
                "capacity (Mb/s)",
                "util (%)",
                "drops",
                "why",
                "queue mean (ms)",
                "queue p95 (ms)",
                "queue p99 (ms)",
            ],
            &rows,
            1,
        );
    }

    if !s.claims.is_empty() {
        h.push_str("<h2>Claims</h2>\n");
        let rows: Vec<Vec<String>> = s
            .claims
            .iter()
            .map(|c| {
                vec![
                    esc(&c.claim),
                    esc(&c.paper.to_string()),
                    num(c.measured, 4),
                    if c.holds {
                        "yes".to_string()
                    } else {
                        "<span class=\"no\">no</span>".to_string()
                    },
                    esc(c.source.as_deref().unwrap_or("")),
                ]
            })
            .collect();
        table(
            h,
            &["claim", "paper", "measured", "holds", "source"],
            &rows,
            2,
        );
    }

    h.push_str("<h2>Plots</h2>\n");
    figures_html(h, &figures(&[("", s)])?);

    if let Some(p) = &s.provenance {
        let rows: Vec<(String, String)> = p
            .rows()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        provenance_section(h, &rows);
    }
    if !s.meta.is_empty() {
        h.push_str("<h2>Run</h2>\n");
        let rows: Vec<Vec<String>> = s.meta.iter().map(|(k, v)| vec![esc(k), esc(v)]).collect();
        table(h, &["key", "value"], &rows, 2);
    }
    Ok(())
}

/// Append the "Provenance" section: (what, value) rows, values as code.
pub fn provenance_section(h: &mut String, rows: &[(String, String)]) {
    h.push_str("<h2>Provenance</h2>\n");
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|(k, v)| vec![esc(k), format!("<code>{}</code>", esc(v))])
        .collect();
    table(h, &["", ""], &rows, 2);
}

/// Several runs overlaid in one set of figures (`longhaul compare A B … --report`): a line per
/// run with its headline numbers, then the figures with each run's series labelled.
pub fn overlay_report(runs: &[(&str, &Summary)]) -> Result<String, MetricsError> {
    let mut h = String::from("<h1>Comparison</h1>\n");
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|(label, s)| {
            vec![
                esc(label),
                esc(&s.scenario),
                s.mode.to_string(),
                s.flows.len().to_string(),
                num(s.duration_s, 1),
                num(to_mbps(s.aggregate.throughput_bps), 1),
                num(100.0 * s.aggregate.utilization, 1),
                num(s.aggregate.jain, 3),
            ]
        })
        .collect();
    table(
        &mut h,
        &[
            "run",
            "scenario",
            "mode",
            "flows",
            "duration (s)",
            "throughput (Mb/s)",
            "utilization (%)",
            "Jain index",
        ],
        &rows,
        3,
    );
    h.push_str("<h2>Plots</h2>\n");
    figures_html(&mut h, &figures(runs)?);
    Ok(page("comparison", &h))
}

/// Append each figure (its SVG, or a line saying what is missing under the figure's title).
pub fn figures_html(h: &mut String, figs: &[Figure]) {
    for f in figs {
        let _ = write!(h, "<figure id=\"{}\">", f.slug);
        match &f.svg {
            Some(svg) => h.push_str(svg),
            None => {
                let _ = write!(
                    h,
                    "<figcaption><b>{}</b></figcaption><p class=\"missing\">{}</p>",
                    esc(&f.title),
                    f.missing
                );
            }
        }
        h.push_str("</figure>\n");
    }
}

/// Write the HTML report to `path` (by `longhaul_output::write`'s rules, like the JSON).
pub fn write_html_report(s: &Summary, path: &Path) -> Result<(), MetricsError> {
    Ok(longhaul_output::write(path, html_report(s)?.as_bytes())?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example::example_summary;
    use crate::summary::LinkSeries;

    #[test]
    fn report_has_one_svg_per_plot_and_no_nan() {
        let html = html_report(&example_summary()).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.trim_end().ends_with("</body></html>"));
        // Every figure of report::figures: the example has every series.
        assert_eq!(html.matches("<svg").count(), 11);
        assert_eq!(html.matches("</svg>").count(), 11);
        for title in [
            "Throughput per flow",
            "Aggregate throughput — average utilization",
            "Congestion window",
            "Round-trip time",
            "Queueing delay (RTT − min RTT)",
            "CDF of RTT per flow",
            "CDF of queueing delay per flow",
            "Queue length in packets",
            "Queue length in milliseconds",
            "fairness index over time",
            "Throughput vs queueing delay",
        ] {
            // Each title once: in its SVG, with no caption repeating it.
            assert_eq!(html.matches(title).count(), 1, "{title}");
        }
        assert!(!html.contains("NaN") && !html.contains("inf"));
        // Self-contained: no scripts, no external resources (the only URL is the SVG namespace).
        assert!(!html.contains("<script"));
        let urls = html.matches("http").count();
        assert_eq!(
            urls,
            html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
        );
        // A flow is named in the legend of every per-flow figure: throughput, cwnd, RTT,
        // queueing delay, their two CDFs, and the trade-off plot.
        assert_eq!(html.matches("\nflow 3 (reno)\n").count(), 7);
    }

    #[test]
    fn lean_summary_reports_missing_plots_instead_of_failing() {
        let mut s = example_summary();
        for f in &mut s.flows {
            f.series = None;
        }
        s.aggregate.series = None;
        s.links[0].series = None;
        s.flows[0].queueing_delay_ms.p95 = f64::NAN;
        let html = html_report(&s).unwrap();
        // Only the throughput-delay plot remains (two flows with finite values).
        assert_eq!(html.matches("<svg").count(), 1);
        assert!(html.contains("no throughput series recorded"));
        assert!(html.contains("no queue series in packets recorded"));
        assert!(!html.contains("NaN"));
    }

    #[test]
    fn many_experiments_in_one_page() {
        let a = example_summary();
        let mut b = example_summary();
        b.scenario = "second".into();
        let html = html_report_many("seed 000", &[a, b]).unwrap();
        assert_eq!(html.matches("<svg").count(), 22);
        assert_eq!(html.matches("<section>").count(), 2);
        assert!(html.contains("<pre>experiment"));
        assert!(html.contains("<h1>second</h1>"));
        assert!(!html.contains("NaN"));
    }

    #[test]
    fn host_queues_are_plotted_and_empty_queues_left_out() {
        let mut s = example_summary();
        let t: Vec<f64> = (0..10).map(|i| i as f64 * 0.1).collect();
        let mut host = s.links[0].clone();
        host.name = "access:7".into();
        host.series = Some(LinkSeries {
            t: t.clone(),
            queue_pkts: vec![40.0; 10],
            ..Default::default()
        });
        let mut acks = s.links[0].clone();
        acks.name = "ack-direction".into();
        acks.series = Some(LinkSeries {
            t,
            queue_pkts: vec![0.0; 10],
            ..Default::default()
        });
        s.links.push(host);
        s.links.push(acks);
        let html = html_report(&s).unwrap();
        // The host queue is in the queue plot's legend; the never-occupied one is not (it
        // appears once, in the links table).
        let plot = &html[html.find("Queue length in packets").unwrap()..];
        let plot = &plot[..plot.find("</svg>").unwrap()];
        assert!(
            plot.contains("access:7"),
            "host queue missing from the plot"
        );
        assert!(!plot.contains("ack-direction"));
    }

    #[test]
    fn throughput_title_names_the_capacity_it_is_measured_against() {
        let mut s = example_summary();
        s.aggregate.utilization = 0.723;
        s.aggregate.capacity_bps = Some(2.5e9);
        let html = html_report(&s).unwrap();
        assert!(
            html.contains("average utilization 72.3 % of the 2.50 Gb/s bottleneck"),
            "title lacks its capacity"
        );
    }

    #[test]
    fn provenance_is_printed() {
        use crate::provenance::{Build, Provenance, ScenarioFile};
        let mut s = example_summary();
        let mut p = Provenance::capture(Build {
            version: "1.2.3",
            commit: "abcdef0",
        })
        .with_scenario(ScenarioFile::of_content("scenarios/x.toml", b"abc"));
        p.command = vec!["longhaul".into(), "sim".into(), "a<b>.toml".into()];
        p.kernel = "6.1.0-test".into();
        p.cpu = "Test CPU @ 1 GHz".into();
        s.provenance = Some(p);
        let html = html_report(&s).unwrap();
        let at = html
            .find("<h2>Provenance</h2>")
            .expect("no provenance section");
        let part = &html[at..];
        for want in [
            "longhaul sim 'a&lt;b&gt;.toml'",
            "1.2.3 (commit abcdef0)",
            "6.1.0-test",
            "Test CPU @ 1 GHz",
            "scenarios/x.toml",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad (3 bytes)",
        ] {
            assert!(part.contains(want), "provenance lacks {want}");
        }
        // Without one there is no section.
        assert!(!html_report(&example_summary())
            .unwrap()
            .contains("Provenance"));
    }

    #[test]
    fn throughput_title_names_the_link_that_limits_the_flows() {
        let mut s = example_summary();
        s.aggregate.utilization = 0.988;
        s.aggregate.capacity_bps = Some(1e9);
        s.aggregate.limited_by = Some("the access link of flow 1".into());
        let html = html_report(&s).unwrap();
        assert!(
            html.contains(
                "average utilization 98.8 % of the 1.00 Gb/s that limits the flows \
                 (the access link of flow 1)"
            ),
            "title lacks the limiting link"
        );
        assert!(html.contains("over its own active time"));
    }

    #[test]
    fn text_is_escaped() {
        let mut s = example_summary();
        s.scenario = "<b>&".into();
        let html = html_report(&s).unwrap();
        assert!(html.contains("<h1>&lt;b&gt;&amp;</h1>"));
    }
}
