//! Observability: lateness statistics, the per-packet event log and pcap capture.
//!
//! *Lateness* is the time a packet was actually handed to the kernel minus the release time the
//! model computed for it. It measures the I/O layer's timing error only — the model's schedule is
//! exact by construction — so it is the number to watch when asking "can I trust this emulator at
//! this rate?" (seed 001: dummynet's "imprecise timing"). Kept in an HDR histogram (G. Tene's
//! HdrHistogram, 3 significant digits) so p50/p99/max cost nothing per packet.
//!
//! The *event log* is one text line per event, in the spirit of mahimahi's `--uplink-log` but in
//! nanoseconds and with reasons:
//!
//! ```text
//! # t_ns dir event bytes queue_packets queue_bytes detail
//! 1034 a>b arrive 1500 - -
//! 1034 a>b enqueue 1500 0 0 depart=13034 release=90013034
//! 2034 a>b drop 1500 100 150000 queue_full
//! 90013040 a>b deliver 1500 - - late=6
//! ```
//!
//! The queue columns are the bottleneck right after the decision, counting what waits behind
//! the packet on the wire (what the queue's limits count): the first packet into an idle link
//! goes on the wire and leaves the queue empty. An `enqueue` line ends in ` duplicate` for a
//! packet the delay line duplicates and ` ce` for one RED marked. A packet lost at random is
//! dropped on the wire, after its transmission: its `drop … random_loss` line counts it in the
//! queue.
//!
//! *pcap* files (LINKTYPE_RAW = 101: each record is a bare IPv4/IPv6 packet, as read from TUN)
//! can be opened in Wireshark; format per the libpcap file-format description
//! (tcpdump.org/manpages/pcap-savefile.5, draft-ietf-opsawg-pcap). Records use nanosecond
//! timestamps (magic 0xa1b23c4d) from the real-time clock.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Distribution of release lateness (also used for queueing delays: any nanosecond quantity).
#[derive(Debug, Clone)]
pub struct Lateness {
    hist: Histogram<u64>,
}

/// Lateness summary in nanoseconds.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct LatenessSummary {
    /// Values recorded.
    pub count: u64,
    /// Median, in ns.
    pub p50_ns: u64,
    /// 99th percentile, in ns.
    pub p99_ns: u64,
    /// 99.9th percentile, in ns.
    pub p999_ns: u64,
    /// Largest, in ns.
    pub max_ns: u64,
    /// Mean, in ns.
    pub mean_ns: f64,
}

impl Default for Lateness {
    fn default() -> Self {
        Self {
            // 1 ns .. 60 s, 3 significant digits.
            hist: Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds"),
        }
    }
}

impl Lateness {
    /// Records one value in ns (0 counts as 1 ns; values beyond the histogram's range saturate).
    pub fn record(&mut self, late_ns: u64) {
        self.hist.saturating_record(late_ns.max(1));
    }

    /// Adds another histogram's values to this one.
    pub fn merge(&mut self, other: &Lateness) {
        let _ = self.hist.add(&other.hist);
    }

    /// Value at quantile `q` (0 when empty).
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.hist.is_empty() {
            0
        } else {
            self.hist.value_at_quantile(q)
        }
    }

    /// Count, quantiles, maximum and mean of the values recorded (all zero when empty).
    pub fn summary(&self) -> LatenessSummary {
        if self.hist.is_empty() {
            return LatenessSummary::default();
        }
        LatenessSummary {
            count: self.hist.len(),
            p50_ns: self.hist.value_at_quantile(0.5),
            p99_ns: self.hist.value_at_quantile(0.99),
            p999_ns: self.hist.value_at_quantile(0.999),
            max_ns: self.hist.max(),
            mean_ns: self.hist.mean(),
        }
    }
}

/// What became of an output file (event log or pcap): reported in the summary so that a log cut
/// short by a full disk or an I/O error is never mistaken for a complete one.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct OutputReport {
    /// The file's path.
    pub path: String,
    /// Lines (event log) or packets (pcap) handed to the writer.
    pub records: u64,
    /// Records given up after the first error (the writer stops writing then).
    pub records_lost: u64,
    /// False when any write or the final flush failed: records are missing from the file.
    pub complete: bool,
    /// The first error, e.g. "No space left on device (os error 28)".
    pub error: Option<String>,
}

/// A buffered output file that remembers its first error instead of failing the forwarder.
struct Output {
    out: BufWriter<File>,
    report: OutputReport,
}

impl Output {
    fn create(path: &Path) -> io::Result<Self> {
        Ok(Self {
            out: BufWriter::with_capacity(1 << 20, File::create(path)?),
            report: OutputReport {
                path: path.display().to_string(),
                complete: true,
                ..Default::default()
            },
        })
    }

    /// Runs one record's writes; after the first error every later record is only counted.
    fn record(&mut self, write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>) {
        self.report.records += 1;
        if self.report.error.is_some() {
            self.report.records_lost += 1;
            return;
        }
        if let Err(e) = write(&mut self.out) {
            self.fail(e);
            self.report.records_lost += 1;
        }
    }

    fn fail(&mut self, e: io::Error) {
        self.report.complete = false;
        if self.report.error.is_none() {
            self.report.error = Some(e.to_string());
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.report.error.is_some() {
            // Writing more after a failure would only produce a file with a hole in it.
            return Ok(());
        }
        let r = self.out.flush();
        if let Err(e) = &r {
            self.fail(io::Error::new(e.kind(), e.to_string()));
        }
        r
    }
}

/// Per-packet text event log (shared by both directions behind a mutex).
pub struct EventLog {
    out: Output,
}

impl EventLog {
    /// Creates (truncating) the log file at `path` and writes its header line.
    pub fn create(path: &Path) -> io::Result<Self> {
        let mut out = Output::create(path)?;
        writeln!(
            out.out,
            "# t_ns dir event bytes queue_packets queue_bytes detail"
        )?;
        Ok(Self { out })
    }

    /// Appends one event line; a failed write is recorded in the report, not returned, so that the
    /// emulator keeps forwarding.
    pub fn line(&mut self, args: std::fmt::Arguments) {
        // A full disk must not stop the emulator; the summary reports the log as incomplete.
        self.out.record(|w| {
            w.write_fmt(args)?;
            w.write_all(b"\n")
        });
    }

    /// Writes out the buffer; a failure is also kept for [`EventLog::report`].
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// What became of the log so far.
    pub fn report(&self) -> OutputReport {
        self.out.report.clone()
    }
}

/// A pcap file of raw IP packets.
pub struct PcapWriter {
    out: Output,
    snaplen: u32,
}

const LINKTYPE_RAW: u32 = 101;
const PCAP_MAGIC_NS: u32 = 0xa1b2_3c4d;

impl PcapWriter {
    /// Creates (truncating) a pcap file at `path` that keeps at most `snaplen` bytes of each
    /// packet.
    pub fn create(path: &Path, snaplen: u32) -> io::Result<Self> {
        let mut o = Output::create(path)?;
        let out = &mut o.out;
        out.write_all(&PCAP_MAGIC_NS.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?; // version 2.4
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?; // thiszone
        out.write_all(&0u32.to_le_bytes())?; // sigfigs
        out.write_all(&snaplen.to_le_bytes())?;
        out.write_all(&LINKTYPE_RAW.to_le_bytes())?;
        Ok(Self { out: o, snaplen })
    }

    /// Appends one packet seen at `realtime_ns` (nanoseconds since the Unix epoch).
    pub fn write(&mut self, realtime_ns: u64, packet: &[u8]) {
        let cap = packet.len().min(self.snaplen as usize);
        let mut hdr = [0u8; 16];
        hdr[0..4].copy_from_slice(&((realtime_ns / 1_000_000_000) as u32).to_le_bytes());
        hdr[4..8].copy_from_slice(&((realtime_ns % 1_000_000_000) as u32).to_le_bytes());
        hdr[8..12].copy_from_slice(&(cap as u32).to_le_bytes());
        hdr[12..16].copy_from_slice(&(packet.len() as u32).to_le_bytes());
        self.out.record(|w| {
            w.write_all(&hdr)?;
            w.write_all(&packet[..cap])
        });
    }

    /// Writes out the buffer; a failure is also kept for [`PcapWriter::report`].
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// What became of the file so far.
    pub fn report(&self) -> OutputReport {
        self.out.report.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_percentiles() {
        let mut l = Lateness::default();
        for v in 1..=1000u64 {
            l.record(v * 1000);
        }
        let s = l.summary();
        assert_eq!(s.count, 1000);
        // 3 significant digits: 500 µs ± 0.1 %.
        assert!((s.p50_ns as f64 - 500_000.0).abs() <= 500.0, "{s:?}");
        assert!((s.p99_ns as f64 - 990_000.0).abs() <= 990.0, "{s:?}");
        assert!((s.max_ns as f64 - 1_000_000.0).abs() <= 1000.0, "{s:?}");
    }

    #[test]
    fn pcap_layout() {
        let dir = std::env::temp_dir().join(format!("lh-pcap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.pcap");
        let mut w = PcapWriter::create(&p, 65535).unwrap();
        w.write(1_500_000_000_123, &[0x45, 0, 0, 20]);
        w.flush().unwrap();
        let b = std::fs::read(&p).unwrap();
        assert_eq!(b.len(), 24 + 16 + 4);
        assert_eq!(&b[0..4], &PCAP_MAGIC_NS.to_le_bytes());
        assert_eq!(&b[20..24], &101u32.to_le_bytes());
        assert_eq!(&b[24..28], &1500u32.to_le_bytes());
        assert_eq!(&b[28..32], &123u32.to_le_bytes());
        assert_eq!(&b[32..36], &4u32.to_le_bytes());
        assert_eq!(b[40], 0x45);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn event_log_counts_lines_and_is_complete_when_written() {
        let dir = std::env::temp_dir().join(format!("lh-evlog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("events.log");
        let mut log = EventLog::create(&p).unwrap();
        for i in 0..3 {
            log.line(format_args!("{i} a>b arrive 1500 0 0"));
        }
        log.flush().unwrap();
        let r = log.report();
        assert_eq!((r.records, r.records_lost, r.complete), (3, 0, true));
        assert_eq!(r.error, None);
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 4, "header + 3 lines: {text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn event_log_on_a_full_disk_is_reported_incomplete() {
        // /dev/full accepts the open and fails every write with ENOSPC, as a full disk does.
        let full = Path::new("/dev/full");
        if !full.exists() {
            eprintln!("SKIPPED: /dev/full is missing on this machine");
            return;
        }
        let mut log = EventLog::create(full).unwrap();
        // 30 000 lines of 48 bytes overflow the 1 MiB buffer, so writes fail before the flush.
        for i in 0..30_000u64 {
            log.line(format_args!("{i:>12} a>b arrive 1500 0 0 padding-pad"));
        }
        let r = log.report();
        assert_eq!(r.records, 30_000);
        assert!(!r.complete);
        assert!(r.records_lost > 0 && r.records_lost < 30_000, "{r:?}");
        let e = r.error.clone().unwrap();
        assert!(e.contains("No space left"), "{e}");
        // The final flush does not hide the earlier failure.
        let _ = log.flush();
        assert!(!log.report().complete);

        // A failure that only shows at the final flush is reported too.
        let mut small = EventLog::create(full).unwrap();
        small.line(format_args!("1 a>b arrive 1500 0 0"));
        assert!(small.report().complete, "still buffered");
        assert!(small.flush().is_err());
        let r = small.report();
        assert!(!r.complete && r.error.is_some(), "{r:?}");
    }
}
