//! A finished perf run as the docs/measurements.md result summary (`perf -J`), with the per-interval series.
//!
//! * One flow per stream (ids from 1, as iperf numbers them); throughput = bytes delivered × 8 ÷
//!   the run's duration (Start to the server's confirmation that everything arrived).
//! * `min_rtt_ms`: the smallest of the kernel's `tcpi_min_rtt` and the sampled smoothed RTTs;
//!   queueing delay = each smoothed-RTT sample (every 100 ms while sending) − that minimum
//!   (mean, p50, p95, p99, max).
//!   Smoothed RTT (`tcpi_rtt`) lags the true RTT by its EWMA; a path with standing queues shows
//!   it, a sub-interval spike may not.
//! * `loss_rate` = retransmitted segments ÷ data segments sent (`tcpi_total_retrans ÷
//!   tcpi_data_segs_out`): TCP's own estimate, which counts spurious retransmissions too.
//! * `utilization` needs the bottleneck capacity (`--capacity`), `bmps` the distance
//!   (`--distance-km`); without them they are undefined (JSON `null`).
//! * CoV is over the report intervals (1 s by default, docs/measurements.md's definition), dropping the last,
//!   partial one; with fewer than two full intervals it is undefined.

use super::client::PerfRun;
use super::sender_limits::SenderLimits;
use super::tcp_info::TcpStats;
use longhaul_metrics::assemble::{aggregate, flow_summary, AggregateCounts, Bottleneck};
use longhaul_metrics::assemble::{Distance, FlowCounts, LossBasis};
use longhaul_metrics::delay::DelayStats;
use longhaul_metrics::summary::{AggregateSeries, FlowSeries, FlowSummary, Mode, Summary};
use longhaul_metrics::throughput::Capacity;
use std::collections::BTreeMap;

/// What the run alone cannot know.
#[derive(Debug, Clone, Copy, Default)]
pub struct PathFacts {
    /// The path's length, km, for b·m/s (`None`: b·m/s is undefined).
    pub distance_km: Option<f64>,
    /// The bottleneck's rate, bits per second, for utilization (`None`: utilization is undefined).
    pub capacity_bps: Option<f64>,
    /// For utilization net of headers; 1500 unless given.
    pub mtu: Option<u32>,
}

impl PathFacts {
    /// The bottleneck's capacity, if given.
    pub fn capacity(&self) -> Option<Capacity> {
        self.capacity_bps.map(|rate_bps| Capacity {
            rate_bps,
            mtu: self.mtu.unwrap_or(1500),
        })
    }
}

/// What the throughput series count, for the summary's `meta`.
pub const SERIES_BASIS: &str = "segments delivered to the receiver, SACKed ones included \
(TCP_INFO tcpi_delivered × MSS), between report-timer samples; where the kernel lacks that \
field, bytes cumulatively acknowledged (tcpi_bytes_acked), else bytes accepted by write()";

/// Bytes of stream `s` in each report interval, binned by when the receiver got them: the change
/// of `tcpi_delivered` (segments delivered, SACKed ones included, × the MSS) between the samples
/// taken at the interval ends. Bytes the writer handed to the kernel arrive in bursts as the
/// send buffer drains (a 100-Mb/s flow read 0, 300, 0 Mb/s in successive 100-ms bins); and the
/// cumulative `tcpi_bytes_acked` stalls behind a lost segment until it is repaired, then jumps.
/// Older kernels leave the fields 0: `bytes_acked` (Linux 4.1+), then the written bytes, are
/// used then.
pub fn interval_bytes(run: &PerfRun, s: usize) -> Vec<f64> {
    let grows = |v: &[u64]| v.last().is_some_and(|&a| a > 0) && v.windows(2).all(|w| w[0] <= w[1]);
    let deltas = |v: &[u64], scale: &dyn Fn(usize) -> f64| -> Vec<f64> {
        let mut prev = 0u64;
        v.iter()
            .enumerate()
            .map(|(k, &a)| {
                let d = a - prev;
                prev = a;
                d as f64 * scale(k)
            })
            .collect()
    };
    // The counters time the bytes; the stream's byte count (what the server confirmed) sizes
    // them, so the series adds up to it exactly (segments of a loopback's 64-KB MSS are not
    // all full, and the FIN is counted too).
    let total = run.bytes.get(s).copied().unwrap_or(0) as f64;
    let scaled = |v: Vec<f64>| -> Vec<f64> {
        let sum: f64 = v.iter().sum();
        v.iter().map(|d| d * total / sum).collect()
    };
    let tcp = |k: usize| &run.intervals[k].streams[s].tcp;
    let n = run.intervals.len();
    let delivered: Vec<u64> = (0..n).map(|k| u64::from(tcp(k).delivered)).collect();
    if grows(&delivered) {
        return scaled(deltas(&delivered, &|k| f64::from(tcp(k).mss.max(1))));
    }
    let acked: Vec<u64> = (0..n).map(|k| tcp(k).bytes_acked).collect();
    if grows(&acked) {
        return scaled(deltas(&acked, &|_| 1.0));
    }
    run.intervals
        .iter()
        .map(|i| i.streams[s].bytes as f64)
        .collect()
}

/// What stream `s` of `run` measured, for `longhaul_metrics::assemble::flow_summary`.
pub fn stream_counts(run: &PerfRun, s: usize, facts: &PathFacts) -> FlowCounts {
    let d = run.duration_s;
    // The last interval is partial when the run did not end on a tick (it includes the drain).
    let full = run.intervals.len().saturating_sub(1);
    let series_bps: Vec<f64> = interval_bytes(run, s)
        .iter()
        .zip(&run.intervals)
        .map(|(b, i)| b * 8.0 / (i.end_s - i.start_s).max(1e-9))
        .collect();
    let rtts: Vec<f64> = run
        .intervals
        .iter()
        .map(|i| i.streams[s].tcp.rtt_us as f64 / 1e3)
        .filter(|r| *r > 0.0)
        .collect();
    let kernel_min = run
        .intervals
        .iter()
        .map(|i| i.streams[s].tcp.min_rtt_us)
        .filter(|&m| m > 0)
        .min()
        .map(|m| m as f64 / 1e3);
    let sampled_min = longhaul_metrics::delay::min_rtt(&rtts);
    let min_rtt = match (kernel_min, sampled_min) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b).unwrap_or(f64::NAN),
    };
    let qd: Vec<f64> = rtts.iter().map(|r| r - min_rtt).collect();
    let tcp = run.final_tcp.get(s).copied().unwrap_or_default();
    let gauge = |f: &dyn Fn(&TcpStats) -> f64| -> Vec<f64> {
        run.intervals.iter().map(|i| f(&i.streams[s].tcp)).collect()
    };
    FlowCounts {
        id: s as u32 + 1,
        cc: run.streams[s].cc.clone(),
        params: None,
        bytes_delivered: run.bytes[s],
        active_s: d,
        start_s: Some(0.0),
        stop_s: Some(d),
        capacity: facts.capacity(),
        distance_km: facts.distance_km,
        min_rtt_ms: min_rtt,
        queueing_delay_ms: DelayStats::of(&qd),
        packets_sent: (tcp.data_segs_out > 0).then_some(tcp.data_segs_out as u64),
        packets_lost: None,
        retransmits: run.intervals.iter().map(|i| i.streams[s].retransmits).sum(),
        loss_basis: LossBasis::Retransmits,
        interval_bps: series_bps[..full].to_vec(),
        drops: Vec::new(),
        series: Some(FlowSeries {
            t: run.intervals.iter().map(|i| i.start_s).collect(),
            throughput_bps: series_bps,
            cwnd_pkts: gauge(&|t| t.cwnd_pkts as f64),
            // A stream without an RTT sample (`tcpi_rtt` 0) is a gap, not a 0-ms RTT.
            rtt_ms: gauge(&|t| match t.rtt_us {
                0 => f64::NAN,
                us => us as f64 / 1e3,
            }),
            inflight_pkts: gauge(&|t| t.unacked as f64),
            ..FlowSeries::default()
        }),
    }
}

/// Build the summary of a run.
pub fn to_summary(run: &PerfRun, facts: &PathFacts) -> Summary {
    let d = run.duration_s;
    let t: Vec<f64> = run.intervals.iter().map(|i| i.start_s).collect();
    // The last interval is partial when the run did not end on a tick (it includes the drain).
    let full = run.intervals.len().saturating_sub(1);
    let flows: Vec<FlowSummary> = (0..run.streams.len())
        .map(|s| flow_summary(stream_counts(run, s, facts)))
        .collect();
    let total = run.total_bytes();
    let per_stream: Vec<Vec<f64>> = (0..run.streams.len())
        .map(|s| interval_bytes(run, s))
        .collect();
    let agg_series: Vec<f64> = run
        .intervals
        .iter()
        .enumerate()
        .map(|(k, i)| {
            per_stream.iter().map(|b| b[k]).sum::<f64>() * 8.0 / (i.end_s - i.start_s).max(1e-9)
        })
        .collect();
    let aggregate = aggregate(
        &flows,
        AggregateCounts {
            bytes_delivered: total,
            span_s: d,
            interval_bps: agg_series[..full].to_vec(),
            bottlenecks: facts
                .capacity()
                .map(|c| Bottleneck {
                    name: None,
                    capacity_bps: c.rate_bps,
                    payload_bps: c.payload_bps(),
                    bytes: total,
                })
                .into_iter()
                .collect(),
            distance: Distance::Common(facts.distance_km),
            series: Some(AggregateSeries {
                t,
                throughput_bps: agg_series,
            }),
        },
    );
    let mut meta = BTreeMap::new();
    meta.insert("server".into(), format!("{}:{}", run.config_host, run.port));
    meta.insert("streams".into(), run.streams.len().to_string());
    meta.insert("write_len".into(), run.params.write_len.to_string());
    if let Some(w) = run.params.window {
        meta.insert("window_requested".into(), w.to_string());
    }
    if let Some(s) = run.streams.first() {
        meta.insert(
            "send_buffer_granted".into(),
            s.send_buffer.granted.to_string(),
        );
    }
    meta.insert("throughput_series".into(), SERIES_BASIS.into());
    meta.insert("send_s".into(), format!("{:.6}", run.send_s));
    meta.insert(
        "server_elapsed_s".into(),
        format!("{:.6}", run.server_elapsed_s),
    );
    meta.insert("server_bytes".into(), total.to_string());
    for s in 0..run.streams.len() {
        if let Some(l) = SenderLimits::of(run, s) {
            meta.insert(format!("flow{}_sender_limits", s + 1), l.render());
        }
    }
    Summary {
        scenario: format!("perf {}:{}", run.config_host, run.port),
        mode: Mode::Perf,
        duration_s: d,
        seed: 0,
        links: Vec::new(),
        flows,
        aggregate,
        responsive_cross: Vec::new(),
        claims: Vec::new(),
        meta,
        provenance: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::client::{Interval, StreamSample, StreamSetup};
    use crate::perf::protocol::TestParams;
    use crate::perf::socket::BufferSize;
    use crate::perf::tcp_info::TcpStats;

    fn interval(k: usize, rtt_us: u32) -> Interval {
        Interval {
            start_s: k as f64,
            end_s: k as f64 + 1.0,
            streams: vec![StreamSample {
                bytes: 1_000_000,
                retransmits: 0,
                tcp: TcpStats {
                    rtt_us,
                    cwnd_pkts: 10,
                    ..TcpStats::default()
                },
            }],
        }
    }

    /// The series bins bytes by delivery, not by `write()`: a writer whose send buffer drains in
    /// bursts (0, 3 MB, 0, …) behind a steady 1 MB/s of ACKs reads as the steady rate.
    #[test]
    fn throughput_series_is_binned_by_delivery() {
        let mut run = one_stream_run();
        for (k, i) in run.intervals.iter_mut().enumerate() {
            i.streams[0].bytes = if k == 1 { 3_000_000 } else { 0 };
            i.streams[0].tcp.bytes_acked = 1_000_000 * (k as u64 + 1);
        }
        let s = to_summary(&run, &PathFacts::default());
        let bps = &s.flows[0].series.as_ref().unwrap().throughput_bps;
        assert_eq!(bps, &[8e6, 8e6, 8e6]);
        assert_eq!(
            s.aggregate.series.as_ref().unwrap().throughput_bps,
            [8e6, 8e6, 8e6]
        );
        assert!(s.meta["throughput_series"].contains("tcpi_delivered"));
        // The version and the kernel are the provenance block's, not repeated in `meta`.
        assert!(!s.meta.contains_key("longhaul_version") && !s.meta.contains_key("kernel"));
        // Delivered segments (SACKed included) win over the cumulative ACK, which stalls
        // behind a lost segment (0 then 2 MB) while 1000-byte segments keep arriving.
        let acked = [1_000_000, 1_000_000, 3_000_000];
        for (k, i) in run.intervals.iter_mut().enumerate() {
            i.streams[0].tcp.bytes_acked = acked[k];
            i.streams[0].tcp.delivered = 1000 * (k as u32 + 1);
            i.streams[0].tcp.mss = 1000;
        }
        let s = to_summary(&run, &PathFacts::default());
        let bps = &s.flows[0].series.as_ref().unwrap().throughput_bps;
        assert_eq!(bps, &[8e6, 8e6, 8e6]);
        for i in run.intervals.iter_mut() {
            i.streams[0].tcp.delivered = 0;
        }
        let s = to_summary(&run, &PathFacts::default());
        let bps = &s.flows[0].series.as_ref().unwrap().throughput_bps;
        assert_eq!(bps, &[8e6, 0.0, 16e6]);
        // Without the fields (an old kernel) the written bytes are all there is.
        for i in run.intervals.iter_mut() {
            i.streams[0].tcp.bytes_acked = 0;
        }
        let s = to_summary(&run, &PathFacts::default());
        let bps = &s.flows[0].series.as_ref().unwrap().throughput_bps;
        assert_eq!(bps, &[0.0, 24e6, 0.0]);
    }

    /// An interval whose `TCP_INFO` has no RTT yet is `null` in the RTT series; the others keep
    /// their smoothed RTT.
    fn one_stream_run() -> PerfRun {
        let addr: std::net::SocketAddr = "127.0.0.1:1".parse().unwrap();
        PerfRun {
            config_host: "h".into(),
            port: 5201,
            params: TestParams {
                streams: 1,
                duration_ms: 3000,
                cc: None,
                window: None,
                write_len: 131_072,
            },
            streams: vec![StreamSetup {
                local: addr,
                remote: addr,
                cc: "cubic".into(),
                send_buffer: BufferSize {
                    requested: None,
                    granted: 1,
                },
            }],
            intervals: vec![interval(0, 0), interval(1, 180_004), interval(2, 181_000)],
            bytes: vec![3_000_000],
            duration_s: 3.0,
            send_s: 3.0,
            server_elapsed_s: 3.0,
            final_tcp: vec![TcpStats::default()],
            rtt_samples_ms: vec![vec![180.004, 181.0]],
        }
    }

    #[test]
    fn an_interval_without_an_rtt_sample_is_a_gap() {
        let run = one_stream_run();
        let s = to_summary(&run, &PathFacts::default());
        let rtt = &s.flows[0].series.as_ref().unwrap().rtt_ms;
        assert!(rtt[0].is_nan(), "{rtt:?}");
        assert_eq!(&rtt[1..], &[180.004, 181.0]);
        let json: serde_json::Value = serde_json::from_str(&s.to_json().unwrap()).unwrap();
        assert!(json["flows"][0]["series"]["rtt_ms"][0].is_null());
    }
}
