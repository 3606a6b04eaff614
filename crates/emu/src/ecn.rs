//! The ECN field of an IP packet (RFC 3168 §5): whether a packet is ECN-capable, and marking it
//! Congestion Experienced, which is what RED with `ecn` does instead of an early drop.
//!
//! The field is the low two bits of IPv4's TOS byte and of IPv6's traffic class: `00` Not-ECT,
//! `10` ECT(0), `01` ECT(1), `11` CE. A packet carrying any of the last three is ECN-capable
//! (Linux's `INET_ECN_set_ce` marks ECT(0) and ECT(1) and leaves CE as it is). IPv4's header
//! checksum covers the TOS byte, so setting CE updates it incrementally (RFC 1624, eqn. 3:
//! HC' = ~(~HC + ~m + m'), over the 16-bit word that holds the byte); IPv6 has no header
//! checksum, and neither TCP's nor UDP's pseudo-header includes the field.

/// The ECN bits of the IPv4 TOS byte, and of the IPv6 traffic class.
const ECN_MASK: u8 = 0b11;
/// Congestion Experienced.
const CE: u8 = 0b11;

/// The ECN field of the IP packet `ip` (IPv4 or IPv6), or `None` if `ip` is neither.
pub fn codepoint(ip: &[u8]) -> Option<u8> {
    match (ip.first()? >> 4, ip.get(1)) {
        (4, Some(&tos)) => Some(tos & ECN_MASK),
        // Traffic class: the low nibble of byte 0 and the high nibble of byte 1.
        (6, Some(&b1)) => Some((b1 >> 4) & ECN_MASK),
        _ => None,
    }
}

/// True if `ip` is an ECN-capable IP packet (ECT(0), ECT(1) or already CE).
pub fn is_capable(ip: &[u8]) -> bool {
    codepoint(ip).is_some_and(|c| c != 0)
}

/// Marks the ECN-capable IP packet `ip` Congestion Experienced, updating IPv4's header checksum;
/// returns false and changes nothing if `ip` is not ECN-capable (or not a whole IP header).
pub fn set_ce(ip: &mut [u8]) -> bool {
    if !is_capable(ip) {
        return false;
    }
    match ip[0] >> 4 {
        4 => {
            if ip.len() < 20 {
                return false;
            }
            let old = u16::from_be_bytes([ip[0], ip[1]]);
            ip[1] |= CE;
            let new = u16::from_be_bytes([ip[0], ip[1]]);
            let hc = u16::from_be_bytes([ip[10], ip[11]]);
            // One's complement sum with end-around carry.
            let mut sum = u32::from(!hc) + u32::from(!old) + u32::from(new);
            sum = (sum & 0xffff) + (sum >> 16);
            sum = (sum & 0xffff) + (sum >> 16);
            ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        }
        _ => ip[1] |= CE << 4,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The IPv4 header checksum computed from scratch: the one's complement of the one's
    /// complement sum of the header's 16-bit words, the checksum field taken as zero.
    fn ipv4_checksum(h: &[u8]) -> u16 {
        let ihl = (h[0] & 0x0f) as usize * 4;
        let mut sum = 0u32;
        for i in (0..ihl).step_by(2) {
            if i != 10 {
                sum += u32::from(u16::from_be_bytes([h[i], h[i + 1]]));
            }
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }

    /// A TCP SYN from 10.0.0.1 to 10.0.0.2 as Linux sends it: 60 bytes, DF, TTL 64, TOS `tos`,
    /// its header checksum computed.
    fn ipv4(tos: u8, id: u16) -> Vec<u8> {
        let mut h = vec![
            0x45, tos, 0x00, 0x3c, 0, 0, 0x40, 0x00, 0x40, 0x06, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        h[4..6].copy_from_slice(&id.to_be_bytes());
        let c = ipv4_checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h.extend_from_slice(&[0u8; 40]);
        h
    }

    #[test]
    fn ipv4_codepoints_and_a_known_header() {
        // RFC 1071's example layout: 45 00 00 3c 1c 46 40 00 40 06 ?? ?? ac 10 0a 63 ac 10 0a 0c
        // has checksum 0xb1e6.
        let mut h = vec![
            0x45, 0x00, 0x00, 0x3c, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x06, 0xb1, 0xe6, 0xac, 0x10,
            0x0a, 0x63, 0xac, 0x10, 0x0a, 0x0c,
        ];
        assert_eq!(ipv4_checksum(&h), 0xb1e6);
        assert_eq!(codepoint(&h), Some(0));
        assert!(!set_ce(&mut h), "Not-ECT is left alone");
        assert_eq!(&h[10..12], &[0xb1, 0xe6]);
        // The same header sent ECT(0) (TOS 0x02): marked, the checksum still verifies.
        h[1] = 0x02;
        let c = ipv4_checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        assert!(set_ce(&mut h));
        assert_eq!(h[1], 0x03);
        assert_eq!(u16::from_be_bytes([h[10], h[11]]), ipv4_checksum(&h));
        assert_eq!(u16::from_be_bytes([h[10], h[11]]), 0xb1e6 - 3);
    }

    #[test]
    fn marking_ipv4_keeps_the_dscp_and_a_valid_checksum() {
        // ECT(0) and ECT(1), with DSCP 0 and with AF41 (0x88), over IDs that put the checksum
        // near its wrap-around (0x0000 and 0xffff both appear among them).
        let mut seen_low = false;
        for tos_dscp in [0x00u8, 0x88, 0xfc] {
            for ect in [0b10u8, 0b01] {
                for id in (0..=u16::MAX).step_by(97) {
                    let mut p = ipv4(tos_dscp | ect, id);
                    let before = p.clone();
                    assert!(is_capable(&p));
                    assert!(set_ce(&mut p));
                    assert_eq!(p[1], tos_dscp | CE, "DSCP kept, CE set");
                    let hc = u16::from_be_bytes([p[10], p[11]]);
                    seen_low |= hc < 0x0100;
                    assert_eq!(hc, ipv4_checksum(&p), "tos {:#x} id {id}", p[1]);
                    // Only the TOS byte and the checksum changed.
                    for i in (0..p.len()).filter(|&i| ![1, 10, 11].contains(&i)) {
                        assert_eq!(p[i], before[i]);
                    }
                    // Already CE: capable, nothing changes.
                    let marked = p.clone();
                    assert!(set_ce(&mut p));
                    assert_eq!(p, marked);
                }
            }
        }
        assert!(seen_low);
    }

    #[test]
    fn ipv6_traffic_class_ecn_bits() {
        // A TCP segment from 2001:db8::1 to 2001:db8::2: version 6, traffic class 0xb9 (DSCP
        // 46, ECT(1)), flow label 0x12345.
        let mut p = vec![0x6b, 0x91, 0x23, 0x45, 0x00, 0x14, 0x06, 0x40];
        p.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        p.extend_from_slice(&[0; 11]);
        p.push(1);
        p.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        p.extend_from_slice(&[0; 11]);
        p.push(2);
        p.extend_from_slice(&[0u8; 20]);
        assert_eq!(codepoint(&p), Some(0b01));
        let before = p.clone();
        assert!(set_ce(&mut p));
        // Traffic class 0xbb: DSCP 46, CE; version and flow label untouched.
        assert_eq!(((p[0] & 0x0f) << 4) | (p[1] >> 4), 0xbb);
        assert_eq!(p[0] >> 4, 6);
        assert_eq!(
            u32::from_be_bytes([0, p[1] & 0x0f, p[2], p[3]]),
            0x12345,
            "flow label"
        );
        assert_eq!(p[2..], before[2..]);
        // Not-ECT (traffic class 0xb8): unchanged.
        let mut q = before.clone();
        q[1] = 0x81;
        assert_eq!(codepoint(&q), Some(0));
        assert!(!set_ce(&mut q));
        assert_eq!(q[1], 0x81);
    }

    #[test]
    fn what_is_not_an_ip_header_is_never_marked() {
        for mut p in [
            vec![],
            vec![0x45],
            vec![0x00, 0x03, 0, 0],
            vec![0x45, 0x02, 0, 0],
        ] {
            assert!(!set_ce(&mut p), "{p:?}");
        }
        assert!(!is_capable(&[0x20, 0x03]));
    }
}
