//! Extra propagation delay per flow, keyed by TCP/UDP port.
//!
//! A dumbbell whose flows have different round-trip times (seed 000's 85 and 180 ms rows share
//! routers; `extra_rtt` in a scenario file) needs one shared bottleneck but a different delay per
//! flow. A real testbed gets that from each sender's own access path; here every flow crosses the
//! same emulated path, so the delay line adds, after the bottleneck, the extra one-way delay of the
//! flow the packet belongs to. The flow is named by a port: a packet matches when its source *or*
//! destination port is listed, so one entry covers a flow's data (to the server's port) and, on
//! the reverse direction, its ACKs (from that port).
//!
//! The lookup parses only the IPv4 header and the first four bytes of the transport header; any
//! other packet (IPv6, ICMP, a fragment after the first, a truncated header) gets no extra delay.
//! Adding the delay after the bottleneck keeps the queue shared exactly as on a dumbbell; packets
//! of different flows may then leave the delay line in a different order than they left the
//! bottleneck, which is what separate access paths do too.

use super::Nanos;
use serde::{Deserialize, Serialize};

/// One flow's extra one-way delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortDelay {
    /// TCP or UDP port (source or destination) that identifies the flow.
    pub port: u16,
    /// Extra one-way delay of the flow, in ns, added after the bottleneck.
    pub extra_ns: Nanos,
}

const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;

/// The (source, destination) ports of an IPv4 TCP or UDP packet, if it carries them.
pub fn ports(packet: &[u8]) -> Option<(u16, u16)> {
    let first = *packet.first()?;
    if first >> 4 != 4 {
        return None;
    }
    let ihl = (first & 0x0f) as usize * 4;
    if ihl < 20 || packet.len() < ihl + 4 {
        return None;
    }
    let proto = packet[9];
    // Fragment offset ≠ 0: no transport header in this fragment.
    let frag_offset = u16::from_be_bytes([packet[6], packet[7]]) & 0x1fff;
    if (proto != PROTO_TCP && proto != PROTO_UDP) || frag_offset != 0 {
        return None;
    }
    let t = &packet[ihl..];
    Some((
        u16::from_be_bytes([t[0], t[1]]),
        u16::from_be_bytes([t[2], t[3]]),
    ))
}

/// The extra delay of the flow `packet` belongs to (0 when none matches).
pub fn extra_delay(table: &[PortDelay], packet: &[u8]) -> Nanos {
    if table.is_empty() {
        return 0;
    }
    let Some((src, dst)) = ports(packet) else {
        return 0;
    };
    table
        .iter()
        .find(|d| d.port == src || d.port == dst)
        .map_or(0, |d| d.extra_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal IPv4 header (IHL 5) followed by the two ports.
    fn packet(proto: u8, src: u16, dst: u16, frag: u16) -> Vec<u8> {
        let mut p = vec![0u8; 40];
        p[0] = 0x45;
        p[6..8].copy_from_slice(&frag.to_be_bytes());
        p[9] = proto;
        p[20..22].copy_from_slice(&src.to_be_bytes());
        p[22..24].copy_from_slice(&dst.to_be_bytes());
        p
    }

    #[test]
    fn matches_source_or_destination_port() {
        let table = [
            PortDelay {
                port: 5302,
                extra_ns: 60_000_000,
            },
            PortDelay {
                port: 5303,
                extra_ns: 5_000_000,
            },
        ];
        // Data to the server's port, and the ACKs back from it.
        assert_eq!(extra_delay(&table, &packet(6, 40000, 5302, 0)), 60_000_000);
        assert_eq!(extra_delay(&table, &packet(6, 5302, 40000, 0)), 60_000_000);
        assert_eq!(extra_delay(&table, &packet(17, 1, 5303, 0)), 5_000_000);
        assert_eq!(extra_delay(&table, &packet(6, 40000, 5301, 0)), 0);
    }

    #[test]
    fn other_packets_get_no_extra_delay() {
        let table = [PortDelay {
            port: 5302,
            extra_ns: 1,
        }];
        // ICMP, a non-first fragment, IPv6, a truncated header, nothing at all.
        assert_eq!(extra_delay(&table, &packet(1, 5302, 5302, 0)), 0);
        assert_eq!(extra_delay(&table, &packet(6, 5302, 5302, 185)), 0);
        let mut v6 = packet(6, 5302, 5302, 0);
        v6[0] = 0x60;
        assert_eq!(extra_delay(&table, &v6), 0);
        assert_eq!(extra_delay(&table, &packet(6, 5302, 5302, 0)[..22]), 0);
        assert_eq!(extra_delay(&table, &[]), 0);
        // IHL 6 (an option word): the ports move 4 bytes along.
        let mut opt = vec![0u8; 44];
        opt[0] = 0x46;
        opt[9] = 6;
        opt[26..28].copy_from_slice(&5302u16.to_be_bytes());
        assert_eq!(extra_delay(&table, &opt), 1);
    }
}
