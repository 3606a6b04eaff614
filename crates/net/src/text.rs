//! The text `longhaul send` and `longhaul recv` print on stderr: sizes and rates for people,
//! the sender's progress lines and final summary, each ended session and stored file on the
//! receiver, and the notes on stale part files. The `-J` JSON is [`crate::summary`]'s.

use crate::keys::PublicKey;
use crate::path::{Printable, STAGING_DIR};
use crate::recv::{Event, FileOutcome, Received, Receiver};
use crate::send::{Outcome, Progress, SendReport};
use crate::store::{self, StalePart};
use crate::NetError;
use longhaul_proto::{SendState, SendTimes, Stats};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// Part files a receiver notes at start when nothing wrote them for this many days.
pub const STALE_PART_DAYS: u64 = 7;

/// A byte count for people: `1.50 GB`, `12.3 kB`, `512 B` (decimal units).
pub fn bytes(n: u64) -> String {
    let n = n as f64;
    match n {
        n if n >= 1e12 => format!("{:.2} TB", n / 1e12),
        n if n >= 1e9 => format!("{:.2} GB", n / 1e9),
        n if n >= 1e6 => format!("{:.1} MB", n / 1e6),
        n if n >= 1e3 => format!("{:.1} kB", n / 1e3),
        n => format!("{n} B"),
    }
}

/// A rate in bits per second for people: `1.25 Gb/s`, `80.0 Mb/s`.
pub fn bits_per_s(b: f64) -> String {
    match b {
        b if b >= 1e9 => format!("{:.2} Gb/s", b / 1e9),
        b if b >= 1e6 => format!("{:.1} Mb/s", b / 1e6),
        b if b >= 1e3 => format!("{:.1} kb/s", b / 1e3),
        b => format!("{b:.0} b/s"),
    }
}

/// The sender's progress lines: each one's current rate and "held by" cover the time since the
/// previous one.
#[derive(Default)]
pub struct ProgressLines {
    last: (Duration, u64, SendTimes),
}

impl ProgressLines {
    /// One progress line: moved and total, current and average rate, ETA, the connection's
    /// state.
    pub fn line(&mut self, p: &Progress) -> String {
        let last = &mut self.last;
        let dt = (p.elapsed - last.0).as_secs_f64().max(1e-9);
        let rate = p.done.saturating_sub(last.1) as f64 * 8.0 / dt;
        let held = held_by(&p.stats.send_times.since(&last.2));
        *last = (p.elapsed, p.done, p.stats.send_times);
        let avg = p.done as f64 * 8.0 / p.elapsed.as_secs_f64().max(1e-9);
        let pct = 100.0 * p.done as f64 / p.total.max(1) as f64;
        let eta = if avg > 0.0 && p.total > p.done {
            format!("{:.0} s", (p.total - p.done) as f64 * 8.0 / avg)
        } else {
            "-".into()
        };
        format!(
            "{:>6.1} s  {} / {} ({:>5.1}%)  files {}/{}  now {}  avg {}  ETA {}  cwnd {}  in flight {}  pacing {}  srtt {:.1} ms  retr {}  held by {}",
            p.elapsed.as_secs_f64(),
            bytes(p.done),
            bytes(p.total),
            pct,
            p.files_done,
            p.files_total,
            bits_per_s(rate),
            bits_per_s(avg),
            eta,
            bytes(p.stats.cwnd_bytes),
            bytes(p.stats.bytes_in_flight),
            bits_per_s(p.stats.pacing_rate as f64 * 8.0),
            p.stats.srtt_us as f64 / 1000.0,
            p.stats.packets_retransmitted,
            held,
        )
    }
}

/// What held the sender back most over `t`, with its share: `window 63%` (`-` when nothing
/// was counted).
fn held_by(t: &SendTimes) -> String {
    if t.total_ns() == 0 {
        return "-".into();
    }
    let (state, share) = t
        .shares()
        .into_iter()
        .filter(|(s, _)| *s != SendState::Sending)
        .reduce(|best, x| if x.1 > best.1 { x } else { best })
        .expect("five states besides sending");
    format!("{} {:.0}%", state.name(), share * 100.0)
}

/// Every sending state's share, for the summary: `sending 12%, window 40%, …`.
fn send_time_shares(t: &SendTimes) -> String {
    t.shares()
        .iter()
        .map(|(s, share)| format!("{} {:.0}%", s.name(), share * 100.0))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sender's summary: a line per entry, then the totals, the datagrams dropped and the
/// sender's time.
pub fn send_summary(report: &SendReport) -> Vec<String> {
    let mut out = Vec::new();
    for f in &report.files {
        let what = match &f.outcome {
            Outcome::Stored(hex) if f.resumed > 0 => format!(
                "stored ({} moved, {} resumed) BLAKE3 list {hex}",
                bytes(f.sent),
                bytes(f.resumed)
            ),
            Outcome::Stored(hex) => format!("stored ({}) BLAKE3 list {hex}", bytes(f.sent)),
            Outcome::Skipped(why) => format!("skipped: {why}"),
            Outcome::Failed(why) => format!("FAILED: {why}"),
        };
        out.push(format!("  {}  {what}", Printable::from(f.path.as_str())));
    }
    let s = &report.stats;
    let stored = report
        .files
        .iter()
        .filter(|f| matches!(f.outcome, Outcome::Stored(_)))
        .count();
    out.push(format!(
        "{} stored, {} skipped, {} failed; {} moved ({} resumed) in {:.2} s: {} goodput; \
         {} packets, {} retransmitted, {} lost, {} socket drops; RTT min {:.1} ms, smoothed {:.1} ms",
        stored,
        report.files.len() - stored - report.failed(),
        report.failed(),
        bytes(report.bytes_sent()),
        bytes(report.bytes_resumed()),
        report.duration.as_secs_f64(),
        bits_per_s(report.goodput_bps()),
        s.packets_sent,
        s.packets_retransmitted,
        s.packets_lost,
        report.socket.local_drops,
        s.min_rtt_us as f64 / 1000.0,
        s.srtt_us as f64 / 1000.0,
    ));
    out.push(report.path_mtu.line());
    out.push(format!("datagrams dropped: {}", dropped(s)));
    if s.send_times.total_ns() > 0 {
        out.push(format!(
            "sender's time: {}",
            send_time_shares(&s.send_times)
        ));
    }
    out
}

/// What the connection refused to take, for a summary: `3 forged or damaged, 1 replayed, 0 too
/// old, 0 unsealed (4 rejected in all)` (the first four count only with security on).
pub fn dropped(s: &Stats) -> String {
    format!(
        "{} forged or damaged, {} replayed, {} too old, {} unsealed ({} rejected in all)",
        s.auth_failures, s.replays, s.too_old, s.unsealed, s.packets_rejected
    )
}

/// The receiver's lines for one of its events ([`Event`]), and whether the event is a
/// failure: a file not stored, or a transfer that ended in error. A handshake that never
/// finished (not `genuine`: at most a few per timeout, whoever sends INITs) is logged with its
/// error alone and is no failure.
pub fn event_lines(e: &Event<'_>, discard: bool) -> (Vec<String>, bool) {
    match e {
        Event::File(peer, f) => (vec![file_line(*peer, f, discard)], f.result.is_err()),
        Event::Session(s) if s.genuine => (session_lines(s), s.error.is_some()),
        Event::Session(s) if s.service.is_some() => {
            let served = s.service.as_deref().unwrap_or_default();
            let line = match &s.error {
                Some(e) => format!("{}: {served}; {e}", s.peer),
                None => format!("{}: {served}", s.peer),
            };
            (vec![line], false)
        }
        Event::Session(s) => {
            let error = s.error.iter().map(|e| format!("{}: {e}", s.peer));
            (error.collect(), false)
        }
    }
}

/// The receiver's line for one file: `stored` (or `verified and discarded`) with its digest,
/// or why it was not stored.
pub fn file_line(peer: SocketAddr, f: &FileOutcome, discard: bool) -> String {
    let stored = if discard {
        "verified and discarded"
    } else {
        "stored"
    };
    match &f.result {
        Ok(sha) => format!(
            "{peer}: {stored} {} ({}{}); BLAKE3 list {sha}",
            Printable::from(f.path.as_str()),
            bytes(f.bytes),
            if f.resumed > 0 {
                format!(" after {} resumed", bytes(f.resumed))
            } else {
                String::new()
            },
        ),
        Err(why) => format!(
            "{peer}: {} not stored: {why}",
            Printable::from(f.path.as_str())
        ),
    }
}

/// The receiver's lines for one ended transfer: its totals, each refusal, the datagrams
/// dropped.
pub fn session_lines(s: &Received) -> Vec<String> {
    let moved: u64 = s.files.iter().map(|f| f.bytes).sum();
    let mut out = vec![format!(
        "{} ({}): session ended after {:.2} s: {} files stored, {} skipped, {} refused, {} moved ({}){}",
        s.peer,
        s.sender_key
            .map(|k| format!("key {}", PublicKey(k).fingerprint()))
            .unwrap_or_else(|| "unauthenticated".into()),
        s.duration.as_secs_f64(),
        s.files.iter().filter(|f| f.result.is_ok()).count(),
        s.skipped.len(),
        s.refused.len(),
        bytes(moved),
        bits_per_s(moved as f64 * 8.0 / s.duration.as_secs_f64().max(1e-9)),
        s.error.as_ref().map(|e| format!("; {e}")).unwrap_or_default()
    )];
    for (path, why) in &s.refused {
        out.push(format!(
            "  refused {}: {why}",
            Printable::from(path.as_str())
        ));
    }
    out.push(format!(
        "  datagrams dropped: {}; {} without a session",
        dropped(&s.stats),
        s.without_session
    ));
    out
}

/// A stale part file's name for people: the path it was being received to, else its key.
pub fn part_name(p: &StalePart) -> String {
    p.path
        .as_deref()
        .map(|n| Printable::from(n).to_string())
        .unwrap_or_else(|| format!("part file {}", p.key))
}

/// At a receiver's start: a note on the part files in `dir` nothing wrote for
/// [`STALE_PART_DAYS`] days, which only `--clean-parts` removes (`None` when there are none).
pub fn stale_parts_note(dir: &Path) -> Option<String> {
    let age = Duration::from_secs(STALE_PART_DAYS * 86_400);
    let stale = store::stale_parts(dir, age).ok()?;
    if stale.is_empty() {
        return None;
    }
    Some(format!(
        "note: {} part file(s) ({}) in {} unwritten for {STALE_PART_DAYS} days or more; \
         `longhaul recv -d {} --clean-parts {STALE_PART_DAYS}` removes them",
        stale.len(),
        bytes(stale.iter().map(|p| p.bytes).sum()),
        dir.join(STAGING_DIR).display(),
        dir.display()
    ))
}

/// `recv --clean-parts DAYS`: removes the part files in `dir` nothing wrote for `days` days,
/// telling `out` of each and of the total.
pub fn clean_parts(dir: &Path, days: u64, out: &mut dyn FnMut(String)) -> Result<(), NetError> {
    let age = Duration::from_secs(days.saturating_mul(86_400));
    let shown = dir.join(STAGING_DIR);
    let stale = store::stale_parts(dir, age)
        .map_err(|e| NetError::File(format!("listing the part files in {}", shown.display()), e))?;
    let (mut removed, mut freed) = (0, 0);
    for p in &stale {
        let name = part_name(p);
        let days_old = p.age.as_secs() / 86_400;
        let gone = store::remove_part(dir, p)
            .map_err(|e| NetError::File(format!("removing the part file of {name}"), e))?;
        if gone {
            out(format!(
                "removed {name}: {} unwritten for {days_old} days",
                bytes(p.bytes)
            ));
            removed += 1;
            freed += p.bytes;
        } else {
            out(format!("kept {name}: a receiver is writing it now"));
        }
    }
    out(format!(
        "{removed} part file(s) unwritten for {days} days or more removed from {} ({} freed)",
        shown.display(),
        bytes(freed)
    ));
    Ok(())
}

/// What a bound receiver says before serving: where it stores, its address and offloads, and
/// a note when the kernel granted a socket receive buffer too small for a busy receiver.
pub fn receiver_lines(r: &Receiver, discard: bool) -> Vec<String> {
    let (gso, gro) = r.offloads();
    let on = |b: bool| if b { "on" } else { "off" };
    let into = if discard {
        "nowhere (--discard: verified, then dropped)".to_string()
    } else {
        r.dir().display().to_string()
    };
    let mut out = vec![format!(
        "receiving into {into} on UDP {} (GSO {}, GRO {}, receiving thread {})",
        r.local_addr(),
        on(gso),
        on(gro),
        on(r.has_recv_thread())
    )];
    // Linux doubles what it grants for bookkeeping, and caps the request at
    // net.core.rmem_max unless the process may override it (root).
    if r.recv_buffer() < 2 * crate::socket::RECV_SOCKET_BUFFER {
        out.push(format!(
            "note: the socket receive buffer is {} (net.core.rmem_max caps it); a receiver busy \
             writing to disk drops what does not fit, which the sender takes as loss. Raise it: \
             sysctl -w net.core.rmem_max={} (`longhaul tune` prints the host's settings)",
            bytes(r.recv_buffer() as u64),
            2 * crate::socket::RECV_SOCKET_BUFFER
        ));
    }
    out
}

/// What a receiver's session limits cost at most: each session holds at most its window of
/// out-of-order data.
pub fn buffers_line(max_sessions: usize, per_source: usize, window: u64) -> String {
    format!(
        "at most {} sessions ({} per address) × {} window = {} of receive buffers",
        max_sessions,
        per_source,
        bytes(window),
        bytes(window.saturating_mul(max_sessions as u64))
    )
}

/// The sender's first line: how many paths go where, with which congestion control (`cc` as
/// given), MTU (`auto`: searched), window and rate cap.
pub fn sending_line(
    paths: usize,
    peer: SocketAddr,
    cc: &str,
    mtu: crate::mtu::Mtu,
    window: u64,
    rate_limit: Option<f64>,
) -> String {
    format!(
        "sending {paths} path(s) to {peer} with {cc} (MTU {mtu}, window {window} B{})",
        rate_limit
            .map(|r| format!(", limit {}", bits_per_s(r)))
            .unwrap_or_default()
    )
}
