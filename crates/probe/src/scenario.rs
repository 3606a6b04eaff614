//! The measured path as a scenario file (`docs/scenario.md`), for `longhaul sim` and
//! `longhaul lab`: one link with the measured capacity, half the base RTT as its one-way
//! delay, a drop-tail queue of the measured effective size and the measured random loss,
//! cross traffic at the capacity the probe did not find available (Poisson arrivals of
//! full-size packets at that mean rate, where it is more than a tenth of the capacity), and
//! one FAST flow across it as a starting point.
//!
//! What a probe does not see is left at the format's defaults, and said so in the file's
//! header: the reverse direction (taken as the same), jitter and reordering, and the cross
//! traffic's burstiness (the probe measures its mean rate, not its shape). The text is checked with the scenario format's own parser
//! (`longhaul_path::scenario`) before it is returned, so what is written is a scenario the
//! simulator runs.

use crate::report::Report;
use longhaul_path::scenario::Scenario;

/// Why no scenario could be written.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The probe did not measure what a link needs.
    #[error("the probe did not measure the path's {0}, which a scenario needs")]
    Missing(&'static str),
    /// The scenario format refused the text (a measured value out of its ranges).
    #[error(transparent)]
    Format(#[from] longhaul_path::scenario::ScenarioError),
}

/// The scenario text of the path in `report` for the file `path`: named after the file's stem
/// (`probed-path` when it has none), running 60 seconds.
pub fn scenario_file(report: &Report, path: &std::path::Path) -> Result<String, ScenarioError> {
    let name = path
        .file_stem()
        .map_or("probed-path".into(), |s| s.to_string_lossy().into_owned());
    scenario_toml(report, &name, 60.0)
}

/// Below this share of the capacity unavailable, no cross traffic is written: an available
/// bandwidth estimate's own error (docs/probe.md: within 15 % beside steady cross traffic, a
/// few percent on an empty path) explains it.
pub const CROSS_SHARE_MIN: f64 = 0.1;

/// The scenario text of the path in `report`, named `name`, running `duration_s` seconds.
pub fn scenario_toml(
    report: &Report,
    name: &str,
    duration_s: f64,
) -> Result<String, ScenarioError> {
    let rate = report
        .capacity
        .as_ref()
        .ok_or(ScenarioError::Missing("capacity"))?
        .value;
    let rtt = report
        .rtt
        .as_ref()
        .ok_or(ScenarioError::Missing("round-trip time"))?
        .value;
    let queue = match &report.queue {
        Some(q) => format!("{{ kind = \"droptail\", bytes = {:.0} }}", q.value),
        None => return Err(ScenarioError::Missing("queue")),
    };
    let loss = report.loss.as_ref().map_or(0.0, |l| l.value);
    let mut notes = vec![format!(
        "# The path to {} as `longhaul probe` measured it ({:.1} s, {} bytes of probes).",
        report.peer, report.duration_s, report.bytes_sent
    )];
    notes.push(
        "# Not measured, so left at the defaults: the reverse direction (the same as this one),\n\
         # jitter and reordering, and how bursty the cross traffic is."
            .to_string(),
    );
    // The capacity the probe did not find available is other traffic's: modelled as Poisson
    // arrivals of full-size packets (the probe measures their mean rate, not their burstiness),
    // where it is more than the 10 % an estimate's error explains.
    let cross = report
        .available
        .as_ref()
        .filter(|a| a.value < (1.0 - CROSS_SHARE_MIN) * rate)
        .map(|a| rate - a.value.max(0.0));
    let mtu = report.mtu();
    let cross_table = match cross {
        Some(bps) => {
            notes.push(format!(
                "# The available bandwidth was {:.1} Mb/s of {:.1}: the rest is cross traffic, as\n\
                 # Poisson arrivals of full-size ({mtu}-byte) packets at its mean rate.",
                (rate - bps) / 1e6,
                rate / 1e6
            ));
            format!(
                "\n[[cross_traffic]]\nkind = \"poisson\"\nlink = \"path\"\nrate = {bps:.0}\n\
                 packet_size = {mtu}\n"
            )
        }
        None => String::new(),
    };
    let text = format!(
        "{notes}\nname = {name:?}\nduration = \"{duration_s}s\"\n\n\
         [[links]]\nname = \"path\"\nrate = {rate:.0}\ndelay = \"{delay_us:.0}us\"\n\
         mtu = {mtu}\nloss = {loss:e}\nqueue = {queue}\n\n\
         [topology]\nkind = \"dumbbell\"\nbottleneck = \"path\"\n\n\
         [[flows]]\ncc = \"fast\"\n{cross_table}",
        notes = notes.join("\n"),
        delay_us = rtt / 2.0 * 1e6,
    );
    Scenario::parse(&text, name, name, &[])?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::given as e;

    #[test]
    fn the_measured_path_becomes_a_scenario_the_format_accepts() {
        let mut r = Report::new("192.0.2.1:5301".parse().unwrap(), 1472);
        assert!(matches!(
            scenario_toml(&r, "p", 30.0),
            Err(ScenarioError::Missing("capacity"))
        ));
        r.rtt = e(0.040_2, "s");
        r.capacity = e(50.1e6, "bit/s");
        r.queue = e(123_600.0, "bytes");
        r.loss = e(1e-4, "1");
        r.available = e(30e6, "bit/s");
        let text = scenario_toml(&r, "probed", 30.0).unwrap();
        assert!(text.contains("rate = 50100000\n"), "{text}");
        assert!(text.contains("delay = \"20100us\"\n"), "{text}");
        assert!(text.contains("bytes = 123600 }"), "{text}");
        assert!(text.contains("mtu = 1500\n"), "{text}");
        // 20.1 of 50.1 Mb/s were not available: Poisson cross traffic at that mean rate.
        assert!(
            text.contains("kind = \"poisson\"\nlink = \"path\"\nrate = 20100000\n"),
            "{text}"
        );
        let checked = Scenario::parse(&text, "t", "t", &[]).unwrap();
        let link = &checked.scenario.links[0];
        assert_eq!(link.mtu, 1500);
        assert_eq!(checked.scenario.cross_traffic.len(), 1);
        // The measured path MTU, where there is one, for the link and the cross traffic.
        r.path_mtu = e(1400.0, "bytes");
        let text = scenario_toml(&r, "probed", 30.0).unwrap();
        assert!(text.contains("mtu = 1400\n"), "{text}");
        assert!(text.contains("packet_size = 1400\n"), "{text}");
        r.path_mtu = None;
        // An available bandwidth within 10 % of the capacity is the estimate's error: no cross
        // traffic.
        r.available = e(46e6, "bit/s");
        let text = scenario_toml(&r, "probed", 30.0).unwrap();
        assert!(!text.contains("[[cross_traffic]]"), "{text}");
        // A queue no format accepts is refused, never written.
        r.queue = e(-5.0, "bytes");
        assert!(matches!(
            scenario_toml(&r, "p", 30.0),
            Err(ScenarioError::Format(_))
        ));
    }
}
