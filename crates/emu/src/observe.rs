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
//! 1034 a>b arrive 1500 0 0
//! 1034 a>b enqueue 1500 1 1500 depart=13034 release=90013034
//! 2034 a>b drop 1500 100 150000 queue_full
//! 90013040 a>b deliver 1500 - - late=6
//! ```
//!
//! *pcap* files (LINKTYPE_RAW = 101: each record is a bare IPv4/IPv6 packet, as read from TUN)
//! can be opened in Wireshark; format per the libpcap file-format description
//! (tcpdump.org/manpages/pcap-savefile.5, draft-ietf-opsawg-pcap). Records use nanosecond
//! timestamps (magic 0xa1b23c4d) from the real-time clock.

use hdrhistogram::Histogram;
use serde::Serialize;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Distribution of release lateness (also used for queueing delays: any nanosecond quantity).
#[derive(Debug, Clone)]
pub struct Lateness {
    hist: Histogram<u64>,
}

/// Lateness summary in nanoseconds.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct LatenessSummary {
    pub count: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
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
    pub fn record(&mut self, late_ns: u64) {
        self.hist.saturating_record(late_ns.max(1));
    }

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

/// Per-packet text event log (shared by both directions behind a mutex).
pub struct EventLog {
    out: BufWriter<File>,
}

impl EventLog {
    pub fn create(path: &Path) -> io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
        writeln!(
            out,
            "# t_ns dir event bytes queue_packets queue_bytes detail"
        )?;
        Ok(Self { out })
    }

    pub fn line(&mut self, args: std::fmt::Arguments) {
        // A full disk must not stop the emulator; the summary reports the log as incomplete.
        let _ = self.out.write_fmt(args);
        let _ = self.out.write_all(b"\n");
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// A pcap file of raw IP packets.
pub struct PcapWriter {
    out: BufWriter<File>,
    snaplen: u32,
}

const LINKTYPE_RAW: u32 = 101;
const PCAP_MAGIC_NS: u32 = 0xa1b2_3c4d;

impl PcapWriter {
    pub fn create(path: &Path, snaplen: u32) -> io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
        out.write_all(&PCAP_MAGIC_NS.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?; // version 2.4
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?; // thiszone
        out.write_all(&0u32.to_le_bytes())?; // sigfigs
        out.write_all(&snaplen.to_le_bytes())?;
        out.write_all(&LINKTYPE_RAW.to_le_bytes())?;
        Ok(Self { out, snaplen })
    }

    /// Appends one packet seen at `realtime_ns` (nanoseconds since the Unix epoch).
    pub fn write(&mut self, realtime_ns: u64, packet: &[u8]) {
        let cap = packet.len().min(self.snaplen as usize);
        let mut hdr = [0u8; 16];
        hdr[0..4].copy_from_slice(&((realtime_ns / 1_000_000_000) as u32).to_le_bytes());
        hdr[4..8].copy_from_slice(&((realtime_ns % 1_000_000_000) as u32).to_le_bytes());
        hdr[8..12].copy_from_slice(&(cap as u32).to_le_bytes());
        hdr[12..16].copy_from_slice(&(packet.len() as u32).to_le_bytes());
        let _ = self.out.write_all(&hdr);
        let _ = self.out.write_all(&packet[..cap]);
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
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
}
