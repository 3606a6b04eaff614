//! Reports for people: a terminal table, a side-by-side comparison, and an HTML page with plots.
//!
//! Units follow the field: throughput in Mb/s, utilization and loss in %, delays in ms, the
//! distance-rate product in 10^15 b·m/s (seed 000's Table 1). Undefined values print as "-".

mod compare;
mod dir;
mod experiments;
pub mod figures;
mod html;
pub mod plot;
mod table;

pub use compare::{by_scenario, compare, Comparison, ComparisonRow};
pub use dir::{write_figures, write_report_dir};
pub use experiments::experiments_table;
pub use html::{
    esc as escape_html, figures_html, html_report, html_report_many, overlay_report,
    page as html_page,
};
pub use html::{provenance_section, table as html_table, write_html_report};
pub use table::{num, pct, summary_table, variants_table, Align, Table};
