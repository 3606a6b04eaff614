//! A run's raw per-packet events, for checking its summary against a reference computation
//! (`run_traced`; the metrics oracle in `tests/oracle.rs`). Recording costs memory in
//! proportion to the packets, so ordinary runs keep none of it.

/// What happened to each scenario flow's packets and at each port, in event order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// Per scenario flow (in `Checked::flows` order): each data packet reaching the receiving
    /// host, as (time ns, payload bytes); retransmissions included.
    pub arrivals: Vec<Vec<(u64, u32)>>,
    /// Per scenario flow: each time the receiver delivered payload in order to the application,
    /// as (time ns, bytes).
    pub deliveries: Vec<Vec<(u64, u64)>>,
    /// Per scenario flow: every RTT sample its sender took, ns.
    pub rtt_ns: Vec<Vec<u64>>,
    /// Per scenario link, forward then reverse direction: every packet's wait before its
    /// transmission began, ns.
    pub link_sojourn_ns: Vec<[Vec<u64>; 2]>,
}
