//! The aggregate of a run's flows (docs/measurements.md, from seeds 000 and 004): throughput =
//! all flows' payload bytes ÷ the run's span (crate::throughput); utilization against the most
//! loaded of the bottlenecks the driver names, which becomes `limited_by`; Jain's index over the
//! flows' throughputs (crate::fairness); the CoV of the aggregate's complete 1-s intervals
//! (crate::stability); b·m/s (crate::bmps).

use crate::bmps::bmps;
use crate::fairness::jain_index;
use crate::stability::cov;
use crate::summary::{Aggregate, AggregateSeries, FlowSummary};
use crate::throughput::throughput_bps;

/// How far the aggregate's bits travel, for its b·m/s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Distance {
    /// Every flow crosses the same path: the aggregate throughput × its distance (undefined
    /// when the distance is unknown).
    Common(Option<f64>),
    /// Flows cross different distances: each flow's bits × its distance, summed, over the
    /// run's span (not each flow's b·m/s over its own active time, whose sum exceeds what the
    /// path can carry when flows take turns); undefined if a flow lacks its bytes or distance.
    PerFlow,
}

/// A capacity the flows may be limited by.
#[derive(Debug, Clone, PartialEq)]
pub struct Bottleneck {
    /// What it is (a link's name, "the access links of flows 1, 2"); `None` when unnamed.
    pub name: Option<String>,
    /// Its capacity as reported (`aggregate.capacity_bps`).
    pub capacity_bps: f64,
    /// The payload it can carry for these flows, net of headers.
    pub payload_bps: f64,
    /// Payload bytes delivered by the flows that cross it.
    pub bytes: u64,
}

/// What a driver measured about all flows together.
#[derive(Debug, Clone, PartialEq)]
pub struct AggregateCounts {
    /// Payload bytes all flows delivered.
    pub bytes_delivered: u64,
    /// The span the throughput is over, seconds.
    pub span_s: f64,
    /// The aggregate's throughput in each complete 1-s interval (or report interval), b/s.
    pub interval_bps: Vec<f64>,
    /// Candidates for what limits the flows; none leaves utilization undefined.
    pub bottlenecks: Vec<Bottleneck>,
    /// How far the flows' bits travel, for the aggregate's b·m/s.
    pub distance: Distance,
    /// The aggregate's throughput over time, if the driver records it.
    pub series: Option<AggregateSeries>,
}

/// The aggregate entry of `flows`' summary.
pub fn aggregate(flows: &[FlowSummary], c: AggregateCounts) -> Aggregate {
    let tput = throughput_bps(c.bytes_delivered, c.span_s);
    let rates: Vec<f64> = flows.iter().map(|f| f.throughput_bps).collect();
    // The most loaded candidate limits the aggregate; the last of equals, as `max_by` keeps.
    let limit = c
        .bottlenecks
        .into_iter()
        .map(|b| {
            let u = if b.payload_bps > 0.0 {
                throughput_bps(b.bytes, c.span_s) / b.payload_bps
            } else {
                0.0
            };
            (b, u)
        })
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let (capacity_bps, limited_by, utilization) = match limit {
        Some((b, u)) => (Some(b.capacity_bps), b.name, u),
        None => (None, None, f64::NAN),
    };
    Aggregate {
        throughput_bps: tput,
        utilization,
        jain: jain_index(&rates).unwrap_or(f64::NAN),
        cov: cov(&c.interval_bps).unwrap_or(f64::NAN),
        bmps: match c.distance {
            Distance::Common(km) => km.map_or(f64::NAN, |km| bmps(tput, km)),
            Distance::PerFlow => {
                flows
                    .iter()
                    .fold(0.0, |sum, f| match (f.bytes_delivered, f.distance_km) {
                        (Some(bytes), Some(km)) => sum + bmps(throughput_bps(bytes, c.span_s), km),
                        _ => f64::NAN,
                    })
            }
        },
        bytes_delivered: Some(c.bytes_delivered),
        capacity_bps,
        limited_by,
        series: c.series,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::flow::{flow_summary, tests::counts};

    fn link(name: &str, capacity_bps: f64, bytes: u64) -> Bottleneck {
        Bottleneck {
            name: Some(name.into()),
            capacity_bps,
            payload_bps: capacity_bps * 1460.0 / 1500.0,
            bytes,
        }
    }

    fn run(bottlenecks: Vec<Bottleneck>, distance: Distance) -> AggregateCounts {
        AggregateCounts {
            bytes_delivered: 150_000_000,
            span_s: 3.0,
            interval_bps: vec![300e6, 500e6],
            bottlenecks,
            distance,
            series: None,
        }
    }

    #[test]
    fn flows_taking_turns_never_exceed_capacity_times_distance() {
        // A 100 Mb/s path of 1,000 km: flow 1 fills it for the first 1.5 s, flow 2 for the
        // last 1.5 s. Each flow's own rate is the capacity, but together they carried one
        // capacity's worth of bits over the 3-s span: 10^14 b·m/s, not twice that.
        let half = 18_750_000;
        let mut first = counts(1, half);
        (first.active_s, first.stop_s) = (1.5, Some(1.5));
        let mut second = counts(2, half);
        (second.active_s, second.start_s) = (1.5, Some(1.5));
        let flows = [flow_summary(first), flow_summary(second)];
        assert!((flows[0].bmps - 1e14).abs() < 1.0, "{}", flows[0].bmps);
        let agg = aggregate(
            &flows,
            AggregateCounts {
                bytes_delivered: 2 * half,
                ..run(vec![link("l", 100e6, 2 * half)], Distance::PerFlow)
            },
        );
        assert!((agg.bmps - 1e14).abs() < 1.0, "{}", agg.bmps);
        let mut unknown = flows.clone();
        unknown[1].distance_km = None;
        let agg = aggregate(&unknown, run(Vec::new(), Distance::PerFlow));
        assert!(agg.bmps.is_nan());
    }

    #[test]
    fn aggregate_of_two_unequal_flows() {
        // 100 and 300 Mb/s over 3 s on the same 1,000-km path.
        let flows = [
            flow_summary(counts(1, 37_500_000)),
            flow_summary(counts(2, 112_500_000)),
        ];
        let agg = aggregate(
            &flows,
            run(
                vec![link("core", 1e9, 150_000_000)],
                Distance::Common(Some(1000.0)),
            ),
        );
        assert!((agg.throughput_bps - 400e6).abs() < 1e-6);
        // (100 + 300)² / (2 · (100² + 300²)) = 0.8.
        assert!((agg.jain - 0.8).abs() < 1e-12);
        // 300 and 500 Mb/s: σ/μ = 100/400.
        assert!((agg.cov - 0.25).abs() < 1e-12);
        assert!((agg.utilization - 400.0 / (1000.0 * 1460.0 / 1500.0)).abs() < 1e-12);
        assert_eq!(agg.limited_by.as_deref(), Some("core"));
        assert!((agg.bmps - 4e14).abs() < 1.0);
        // Flows on different paths add their own b·m/s (1e14 + 3e14 here).
        let per_flow = aggregate(&flows, run(vec![], Distance::PerFlow));
        assert!((per_flow.bmps - 4e14).abs() < 1.0);
    }

    #[test]
    fn the_most_loaded_bottleneck_limits_the_aggregate() {
        // A parking lot: 150 MB cross a 1 Gb/s link, 75 MB a 0.4 Gb/s one (0.51 > 0.41).
        let agg = aggregate(
            &[],
            run(
                vec![link("l1", 1e9, 150_000_000), link("l2", 0.4e9, 75_000_000)],
                Distance::Common(None),
            ),
        );
        assert_eq!(agg.limited_by.as_deref(), Some("l2"));
        assert_eq!(agg.capacity_bps, Some(0.4e9));
        assert!((agg.utilization - 200e6 / (0.4e9 * 1460.0 / 1500.0)).abs() < 1e-12);
        // No flows, no distance: Jain's index and b·m/s are undefined, not 0.
        assert!(agg.jain.is_nan() && agg.bmps.is_nan());
    }

    #[test]
    fn without_a_capacity_utilization_is_undefined() {
        let agg = aggregate(&[], run(vec![], Distance::Common(Some(1.0))));
        assert!(agg.utilization.is_nan());
        assert_eq!((agg.capacity_bps, agg.limited_by), (None, None));
        assert_eq!(agg.bytes_delivered, Some(150_000_000));
    }
}
