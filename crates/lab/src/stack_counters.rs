//! The sender's TCP counters over a run: what the kernel's own stack decided, read from the
//! namespace's `/proc/net/netstat` (`TcpExt`, Linux `include/uapi/linux/snmp.h`).
//!
//! Each lab run creates its namespaces afresh, so their counters start at zero and what they
//! hold at the end is the run's alone (every flow of namespace a together, and every responsive
//! cross-traffic transfer: they are the namespace's sockets too). The ones kept say
//! how slow start ended and how losses were repaired, which the per-socket TCP_INFO samples do
//! not: CUBIC's HyStart exits by ACK train or by delay increase (`TCPHystart*Detect`, with the
//! sum of the windows it exited at in `TCPHystart*Cwnd`), or not at all, when the first loss
//! ends slow start; and how many recoveries and timeouts there were.

use std::collections::BTreeMap;

/// The `TcpExt` counters kept, in the order they are reported.
pub const KEPT: &[&str] = &[
    "TCPHystartTrainDetect",
    "TCPHystartTrainCwnd",
    "TCPHystartDelayDetect",
    "TCPHystartDelayCwnd",
    "TCPSackRecovery",
    "TCPTimeouts",
    "TCPLossProbes",
];

/// The kept counters of a `/proc/net/netstat` text (a header line of names, then a line of
/// values, per protocol). Counters the kernel does not have are left out.
pub fn parse(netstat: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut lines = netstat.lines();
    while let (Some(names), Some(values)) = (lines.next(), lines.next()) {
        let (Some(("TcpExt", names)), Some(("TcpExt", values))) =
            (names.split_once(": "), values.split_once(": "))
        else {
            continue;
        };
        for (name, value) in names.split_whitespace().zip(values.split_whitespace()) {
            if KEPT.contains(&name) {
                if let Ok(v) = value.parse() {
                    out.insert(name.to_string(), v);
                }
            }
        }
    }
    out
}

/// The kept counters of namespace `ns` (read from a thread inside it), or why not.
pub fn read(ns: &str) -> Result<BTreeMap<String, u64>, String> {
    longhaul_emu::sys::netns::run_in(ns, || {
        std::fs::read_to_string("/proc/thread-self/net/netstat").map(|t| parse(&t))
    })
    .map_err(|e| e.to_string())?
    .map_err(|e| format!("reading /proc/net/netstat: {e}"))
}

/// One line for the summary's `meta`: `name=value …` in [`KEPT`]'s order.
pub fn render(counters: &BTreeMap<String, u64>) -> String {
    KEPT.iter()
        .filter_map(|k| counters.get(*k).map(|v| format!("{k}={v}")))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "TcpExt: SyncookiesSent TCPHystartTrainDetect TCPHystartTrainCwnd \
TCPHystartDelayDetect TCPHystartDelayCwnd TCPTimeouts\n\
TcpExt: 0 1 612 0 0 2\n\
IpExt: InNoRoutes TCPTimeouts\n\
IpExt: 5 99\n";

    #[test]
    fn keeps_the_tcpext_counters_it_names() {
        let c = parse(SAMPLE);
        assert_eq!(c.get("TCPHystartTrainDetect"), Some(&1));
        assert_eq!(c.get("TCPHystartTrainCwnd"), Some(&612));
        assert_eq!(
            c.get("TCPTimeouts"),
            Some(&2),
            "IpExt's same name must not override"
        );
        assert!(!c.contains_key("SyncookiesSent"));
        assert_eq!(
            render(&c),
            "TCPHystartTrainDetect=1 TCPHystartTrainCwnd=612 TCPHystartDelayDetect=0 \
             TCPHystartDelayCwnd=0 TCPTimeouts=2"
        );
    }

    #[test]
    fn malformed_text_gives_nothing_rather_than_failing() {
        assert!(parse("").is_empty());
        assert!(parse("TcpExt: A B\n").is_empty());
        assert!(parse("TcpExt: TCPTimeouts\nTcpExt: x\n").is_empty());
    }

    #[test]
    fn this_hosts_counters_parse() {
        // Every Linux since 5.x has the HyStart counters; elsewhere the map is just empty.
        if let Ok(t) = std::fs::read_to_string("/proc/net/netstat") {
            let c = parse(&t);
            if t.contains("TCPHystartTrainDetect") {
                assert!(c.contains_key("TCPHystartTrainDetect"), "{c:?}");
            }
        }
    }
}
