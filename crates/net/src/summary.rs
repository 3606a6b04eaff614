//! The `-J` summaries: what `longhaul send -J` prints at the end of a transfer (one JSON
//! object, indented) and what `longhaul recv -J` prints for each transfer that ended (one JSON
//! object on one line). docs/transfer.md documents the fields.
//!
//! Each struct's fields are declared in alphabetical order, so the keys come out sorted, as a
//! map's would; a unit test pins the key sets and their order. Counters are the connection's
//! (`longhaul_proto::Stats`) and the socket's ([`crate::socket::SocketStats`]).

use crate::keys::PublicKey;
use crate::mtu::PathMtu;
use crate::recv::Received;
use crate::send::{Outcome, SendReport};
use longhaul_proto::Stats;
use serde::Serialize;
use std::collections::BTreeMap;

/// `send -J`: one session's result.
#[derive(Clone, Debug, Serialize)]
pub struct SendSummary {
    /// Bytes the receiver already held from a cut transfer, over all files.
    pub bytes_resumed: u64,
    /// File bytes moved in this session.
    pub bytes_sent: u64,
    /// The congestion control, as given (`NAME[:key=value,…]`).
    pub cc: String,
    /// The session's cipher (`None`: security off).
    pub cipher: Option<String>,
    /// What this host measured each suite to seal and open, GB/s of payload on one core, when
    /// it chose its preference (`longhaul_proto::secure::choice`; `None`: security off). The
    /// receiver picks the session's suite from its own measurement.
    pub cipher_rates: Option<BTreeMap<&'static str, f64>>,
    /// Congestion events the controller reacted to.
    pub congestion_events: u64,
    /// Datagrams handed to the kernel.
    pub datagrams_sent: u64,
    /// Datagrams the connection refused.
    pub dropped_datagrams: DroppedDatagrams,
    /// Entries not stored.
    pub failed: usize,
    /// Each entry of the manifest, in order.
    pub files: Vec<SentFile>,
    /// File bytes moved per second of the session, in bits per second.
    pub goodput_bps: f64,
    /// Whether UDP segmentation offload was in use.
    pub gso: bool,
    /// The smallest round-trip time seen, ms.
    pub min_rtt_ms: f64,
    /// Packets declared lost.
    pub packets_lost: u64,
    /// Packets sent again.
    pub packets_retransmitted: u64,
    /// Packets sent.
    pub packets_sent: u64,
    /// The size of the datagrams and how it was settled ([`crate::mtu`]).
    pub path_mtu: PathMtu,
    /// The receiver's address.
    pub peer: String,
    /// The receiver's authenticated key, `longhaul-x25519 BASE64` (`None`: security off).
    pub peer_key: Option<String>,
    /// Retransmission timeouts.
    pub rto_count: u64,
    /// The session's duration, s.
    pub seconds: f64,
    /// System calls that sent the datagrams (fewer than datagrams with GSO).
    pub send_calls: u64,
    /// Whether a sending thread sealed and sent the datagrams.
    pub send_thread: bool,
    /// Seconds the sender spent sending and held back, by reason (`longhaul_proto`'s
    /// `SendState` names).
    pub send_time_s: BTreeMap<&'static str, f64>,
    /// Datagrams the socket could not take (resent by the connection).
    pub socket_drops: u64,
    /// The smoothed round-trip time at the end, ms.
    pub srtt_ms: f64,
}

/// One entry of [`SendSummary::files`].
#[derive(Clone, Debug, Serialize)]
pub struct SentFile {
    /// For a stored file, its digest: not BLAKE3 of the bytes but of the file's 1 MiB chunks'
    /// BLAKE3 digests ([`crate::hashlist`]), hence its own name.
    pub blake3_list: Option<String>,
    /// The path as the receiver names it.
    pub path: String,
    /// Bytes of it read from the disk around the page cache.
    pub read_direct: u64,
    /// Why it was skipped or failed (`None` when stored).
    pub reason: Option<String>,
    /// Bytes the receiver already held from a cut transfer.
    pub resumed: u64,
    /// Bytes moved in this session.
    pub sent: u64,
    /// The file's size, bytes.
    pub size: u64,
    /// `stored`, `skipped` or `failed`.
    pub status: &'static str,
}

/// Datagrams a connection refused (`longhaul_proto::Stats`): failed authentication, replayed,
/// behind the replay window, clear while security is on, and every rejection.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DroppedDatagrams {
    /// Failed authentication: forged or damaged.
    pub auth_failures: u64,
    /// Every datagram rejected, for whatever reason.
    pub packets_rejected: u64,
    /// Replayed.
    pub replays: u64,
    /// Behind the replay window.
    pub too_old: u64,
    /// Clear datagrams while security is on.
    pub unsealed: u64,
    /// On the receiver: datagrams from addresses without a session that opened none, since
    /// the previous transfer's report (absent from the sender's summary).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub without_session: Option<u64>,
}

impl DroppedDatagrams {
    /// The connection's counts.
    pub fn new(s: &Stats, without_session: Option<u64>) -> DroppedDatagrams {
        DroppedDatagrams {
            auth_failures: s.auth_failures,
            packets_rejected: s.packets_rejected,
            replays: s.replays,
            too_old: s.too_old,
            unsealed: s.unsealed,
            without_session,
        }
    }
}

impl SendSummary {
    /// The summary of `r`, a session sent with the congestion control `cc`.
    pub fn new(r: &SendReport, cc: &str) -> SendSummary {
        let s = &r.stats;
        let files = r
            .files
            .iter()
            .map(|f| {
                let (status, blake3_list, reason) = match &f.outcome {
                    Outcome::Stored(h) => ("stored", Some(h.clone()), None),
                    Outcome::Skipped(w) => ("skipped", None, Some(w.clone())),
                    Outcome::Failed(w) => ("failed", None, Some(w.clone())),
                };
                SentFile {
                    blake3_list,
                    path: f.path.clone(),
                    read_direct: f.read_direct,
                    reason,
                    resumed: f.resumed,
                    sent: f.sent,
                    size: f.size,
                    status,
                }
            })
            .collect();
        SendSummary {
            bytes_resumed: r.bytes_resumed(),
            bytes_sent: r.bytes_sent(),
            cc: cc.to_string(),
            cipher: r.cipher.clone(),
            cipher_rates: r.cipher.as_ref().map(|_| {
                longhaul_proto::secure::choice::measured()
                    .iter()
                    .map(|m| (m.cipher.name(), (m.gbytes_per_s * 100.0).round() / 100.0))
                    .collect()
            }),
            congestion_events: s.congestion_events,
            datagrams_sent: r.socket.datagrams_sent,
            dropped_datagrams: DroppedDatagrams::new(s, None),
            failed: r.failed(),
            files,
            goodput_bps: r.goodput_bps(),
            gso: r.offloads.0,
            min_rtt_ms: s.min_rtt_us as f64 / 1000.0,
            packets_lost: s.packets_lost,
            packets_retransmitted: s.packets_retransmitted,
            packets_sent: s.packets_sent,
            path_mtu: r.path_mtu.clone(),
            peer: r.peer.to_string(),
            peer_key: r.peer_key.map(|k| PublicKey(k).to_string()),
            rto_count: s.rto_count,
            seconds: r.duration.as_secs_f64(),
            send_calls: r.socket.send_calls,
            send_thread: r.send_thread,
            send_time_s: s
                .send_times
                .entries()
                .iter()
                .map(|(state, ns)| (state.name(), *ns as f64 / 1e9))
                .collect(),
            socket_drops: r.socket.local_drops,
            srtt_ms: s.srtt_us as f64 / 1000.0,
        }
    }
}

/// `recv -J`: one transfer that ended.
#[derive(Clone, Debug, Serialize)]
pub struct ReceivedSummary {
    /// Datagrams the connection refused, and those without a session.
    pub dropped_datagrams: DroppedDatagrams,
    /// Why the session ended early, if it did.
    pub error: Option<String>,
    /// Each file the sender sent, with its outcome.
    pub files: Vec<ReceivedFile>,
    /// The sender's address.
    pub peer: String,
    /// Entries refused, with the reason.
    pub refused: Vec<PathReason>,
    /// From the session's first datagram to its end, s.
    pub seconds: f64,
    /// The sender's authenticated key, `longhaul-x25519 BASE64` (`None`: security off).
    pub sender_key: Option<String>,
    /// Entries skipped (already there, directories, links), with the reason.
    pub skipped: Vec<PathReason>,
}

/// One entry of [`ReceivedSummary::files`].
#[derive(Clone, Debug, Serialize)]
pub struct ReceivedFile {
    /// For a stored file, its digest ([`crate::hashlist`]).
    pub blake3_list: Option<String>,
    /// File bytes this session wrote (excluding a resumed prefix).
    pub bytes: u64,
    /// The file's path as the sender named it.
    pub path: String,
    /// Why it was not stored (`None` when stored).
    pub reason: Option<String>,
    /// Bytes a resumed transfer did not need to move again.
    pub resumed: u64,
    /// `stored` or `failed`.
    pub status: &'static str,
}

/// An entry skipped or refused, and why.
#[derive(Clone, Debug, Serialize)]
pub struct PathReason {
    /// The entry's path as the sender named it.
    pub path: String,
    /// Why.
    pub reason: String,
}

impl ReceivedSummary {
    /// The summary of the session `s`.
    pub fn new(s: &Received) -> ReceivedSummary {
        let pairs = |v: &[(String, String)]| -> Vec<PathReason> {
            v.iter()
                .map(|(path, why)| PathReason {
                    path: path.clone(),
                    reason: why.clone(),
                })
                .collect()
        };
        ReceivedSummary {
            dropped_datagrams: DroppedDatagrams::new(&s.stats, Some(s.without_session)),
            error: s.error.clone(),
            files: s
                .files
                .iter()
                .map(|f| ReceivedFile {
                    blake3_list: f.result.as_ref().ok().cloned(),
                    bytes: f.bytes,
                    path: f.path.clone(),
                    reason: f.result.as_ref().err().cloned(),
                    resumed: f.resumed,
                    status: if f.result.is_ok() { "stored" } else { "failed" },
                })
                .collect(),
            peer: s.peer.to_string(),
            refused: pairs(&s.refused),
            seconds: s.duration.as_secs_f64(),
            sender_key: s.sender_key.map(|k| PublicKey(k).to_string()),
            skipped: pairs(&s.skipped),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recv::FileOutcome;
    use crate::send::FileReport;
    use crate::socket::SocketStats;
    use serde_json::Value;
    use std::time::Duration;

    /// The object's keys, in the order they are printed; and a check that the order is the
    /// sorted one (a `serde_json::Value` sorts its keys).
    fn keys(text: &str) -> Vec<String> {
        let v: Value = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&v).unwrap(), text, "keys not sorted");
        v.as_object().unwrap().keys().cloned().collect()
    }

    fn sub_keys(text: &str, at: &str) -> Vec<String> {
        let v: Value = serde_json::from_str(text).unwrap();
        let mut x = &v;
        for p in at.split('/') {
            x = match p.parse::<usize>() {
                Ok(i) => &x[i],
                Err(_) => &x[p],
            };
        }
        x.as_object().unwrap().keys().cloned().collect()
    }

    #[test]
    fn the_send_summary_has_its_documented_keys() {
        let stats = Stats {
            packets_sent: 7,
            min_rtt_us: 1500,
            ..Stats::default()
        };
        let file = |outcome| FileReport {
            path: "a".into(),
            size: 10,
            sent: 10,
            resumed: 0,
            read_direct: 0,
            outcome,
        };
        let r = SendReport {
            peer: "192.0.2.7:5301".parse().unwrap(),
            files: vec![
                file(Outcome::Stored("ab".into())),
                file(Outcome::Skipped("there".into())),
                file(Outcome::Failed("no".into())),
            ],
            duration: Duration::from_secs(2),
            stats,
            socket: SocketStats::default(),
            offloads: (true, false),
            send_thread: false,
            peer_key: Some([7; 32]),
            cipher: Some("chacha20-poly1305".into()),
            path_mtu: PathMtu::new(&Stats::default(), 1500, crate::mtu::Route::default()),
        };
        let text = serde_json::to_string(&SendSummary::new(&r, "fast")).unwrap();
        assert_eq!(
            keys(&text),
            [
                "bytes_resumed",
                "bytes_sent",
                "cc",
                "cipher",
                "cipher_rates",
                "congestion_events",
                "datagrams_sent",
                "dropped_datagrams",
                "failed",
                "files",
                "goodput_bps",
                "gso",
                "min_rtt_ms",
                "packets_lost",
                "packets_retransmitted",
                "packets_sent",
                "path_mtu",
                "peer",
                "peer_key",
                "rto_count",
                "seconds",
                "send_calls",
                "send_thread",
                "send_time_s",
                "socket_drops",
                "srtt_ms",
            ]
        );
        assert_eq!(
            sub_keys(&text, "cipher_rates"),
            ["aegis-256x4", "aes-256-gcm", "chacha20-poly1305"]
        );
        assert_eq!(
            sub_keys(&text, "files/0"),
            [
                "blake3_list",
                "path",
                "read_direct",
                "reason",
                "resumed",
                "sent",
                "size",
                "status"
            ]
        );
        assert_eq!(
            sub_keys(&text, "dropped_datagrams"),
            [
                "auth_failures",
                "packets_rejected",
                "replays",
                "too_old",
                "unsealed"
            ]
        );
        assert_eq!(
            sub_keys(&text, "path_mtu"),
            [
                "black_holes",
                "bound",
                "how",
                "kernel",
                "mtu",
                "probes_lost",
                "probes_sent"
            ]
        );
        assert_eq!(
            sub_keys(&text, "send_time_s"),
            [
                "late",
                "no_data",
                "pacing",
                "receiver_window",
                "sending",
                "window"
            ]
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["files"][0]["status"], "stored");
        assert_eq!(v["files"][0]["blake3_list"], "ab");
        assert_eq!(v["files"][0]["reason"], Value::Null);
        assert_eq!(v["files"][1]["status"], "skipped");
        assert_eq!(v["files"][1]["reason"], "there");
        assert_eq!(v["files"][2]["status"], "failed");
        assert_eq!(v["files"][2]["blake3_list"], Value::Null);
        assert_eq!(v["failed"], 1);
        assert_eq!(v["packets_sent"], 7);
        assert_eq!(v["min_rtt_ms"], 1.5);
        assert_eq!(v["peer"], "192.0.2.7:5301");
        assert_eq!(v["peer_key"], PublicKey([7; 32]).to_string());
    }

    #[test]
    fn the_received_summary_has_its_documented_keys() {
        let s = Received {
            peer: "192.0.2.7:40000".parse().unwrap(),
            duration: Duration::from_millis(1500),
            files: vec![
                FileOutcome {
                    path: "a".into(),
                    bytes: 3,
                    resumed: 1,
                    result: Ok("ab".into()),
                },
                FileOutcome {
                    path: "b".into(),
                    bytes: 0,
                    resumed: 0,
                    result: Err("no".into()),
                },
            ],
            skipped: vec![("d".into(), "a directory".into())],
            refused: vec![],
            error: None,
            genuine: true,
            sender_key: None,
            stats: Stats::default(),
            without_session: 4,
            in_place: 0,
            service: None,
        };
        let text = serde_json::to_string(&ReceivedSummary::new(&s)).unwrap();
        assert_eq!(
            keys(&text),
            [
                "dropped_datagrams",
                "error",
                "files",
                "peer",
                "refused",
                "seconds",
                "sender_key",
                "skipped"
            ]
        );
        assert_eq!(
            sub_keys(&text, "files/0"),
            [
                "blake3_list",
                "bytes",
                "path",
                "reason",
                "resumed",
                "status"
            ]
        );
        assert_eq!(sub_keys(&text, "skipped/0"), ["path", "reason"]);
        assert_eq!(
            sub_keys(&text, "dropped_datagrams"),
            [
                "auth_failures",
                "packets_rejected",
                "replays",
                "too_old",
                "unsealed",
                "without_session"
            ]
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["files"][1]["status"], "failed");
        assert_eq!(v["files"][1]["reason"], "no");
        assert_eq!(v["dropped_datagrams"]["without_session"], 4);
        assert_eq!(v["sender_key"], Value::Null);
        assert_eq!(v["seconds"], 1.5);
    }
}
