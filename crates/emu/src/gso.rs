//! TCP and UDP super-packets from a TUN device with offloads, and the wire packets inside them.
//!
//! Sources: Linux `include/uapi/linux/virtio_net.h` (`struct virtio_net_hdr`),
//! `drivers/net/tun.c` (`IFF_VNET_HDR`, `TUNSETOFFLOAD`), `net/ipv4/tcp_offload.c`
//! (`tcp_gso_segment`: how the kernel cuts a TSO packet into segments), `net/ipv4/udp_offload.c`
//! (`__udp_gso_segment`: each UDP segment gets its own length and checksum) and
//! `net/ipv4/af_inet.c` (`inet_gso_segment`: the IPv4 ID of segment i is the first one's + i).
//!
//! With `IFF_VNET_HDR` every read from and write to the TUN fd carries a 10-byte
//! `virtio_net_hdr` in front of the IP packet. Once the device advertises TSO
//! (`TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6`), the host's TCP hands it one "super-packet" of up to
//! 64 KB instead of ~44 MTU-sized packets: one IP and TCP header, `gso_size` bytes of payload per
//! wire segment, and a transport checksum left partial (`NEEDS_CSUM`: the checksum field holds
//! the pseudo-header sum, the rest is summed by whoever completes it, from `csum_start`). Written
//! to the other TUN unchanged, the receiving stack takes it as one large packet, as after GRO.
//! One system call then moves up to 64 KB, which is what lets a user-space forwarder reach
//! 10 Gb/s.
//!
//! The path model still works per wire packet: a super-packet is `segments()` wire packets, the
//! i-th of `segment_ip_len(i)` bytes (headers counted in each). When the model treats all of
//! them alike, the super-packet goes on whole; otherwise `write_chunk` cuts out any run of
//! consecutive segments as a packet of its own — a smaller super-packet, or a single wire packet
//! — with the headers `tcp_gso_segment` would give it: sequence number advanced, IPv4 length, ID
//! and header checksum rewritten (IPv6 payload length), FIN and PSH only on the last segment and
//! CWR only on the first, and the TCP checksum either left partial for the receiving kernel or
//! completed (for pcap files, which show the wire).
//!
//! UDP the same way (`TUN_F_USO4/6`, Linux 6.2+; `sys::tun` falls back to TCP only on an older
//! kernel): a UDP GSO send (`UDP_SEGMENT`, as longhaul's transport uses) reaches the device as one
//! super-packet of `gso_size`-byte datagrams behind one IP and UDP header, and a cut-out run gets
//! the UDP length and checksum `__udp_gso_segment` would give it. Written to the receiving TUN
//! whole, it reaches a socket with `UDP_GRO` as one batch, and any other socket as the datagrams
//! (`udp_rcv_segment`). Without it the sending kernel cut every datagram apart before the
//! device, and the forwarder and both hosts paid per datagram. An ordinary packet may still
//! carry `NEEDS_CSUM`, which `finish_checksum` completes when it must be shown as on the wire.

/// Size of `struct virtio_net_hdr` (no `num_buffers`: `TUNSETVNETHDRSZ` sets 10).
pub const VNET_HDR_LEN: usize = 10;

/// `VIRTIO_NET_HDR_F_NEEDS_CSUM`: the transport checksum is partial.
pub const F_NEEDS_CSUM: u8 = 1;
/// `VIRTIO_NET_HDR_GSO_*`.
pub const GSO_NONE: u8 = 0;
/// `VIRTIO_NET_HDR_GSO_TCPV4`: a TCP over IPv4 super-packet (TSO).
pub const GSO_TCPV4: u8 = 1;
/// `VIRTIO_NET_HDR_GSO_TCPV6`: a TCP over IPv6 super-packet (TSO).
pub const GSO_TCPV6: u8 = 4;
/// `VIRTIO_NET_HDR_GSO_UDP_L4`: a UDP super-packet (USO).
pub const GSO_UDP_L4: u8 = 5;
/// Flag bit: the first segment carries CWR (`SKB_GSO_TCP_ECN`).
pub const GSO_ECN: u8 = 0x80;

const TCP_FIN: u8 = 0x01;
const TCP_PSH: u8 = 0x08;
const TCP_CWR: u8 = 0x80;
const UDP_HEADER_LEN: usize = 8;
const PROTO_TCP: u64 = 6;
const PROTO_UDP: u64 = 17;

/// `struct virtio_net_hdr`, fields little-endian (TUN's default; `TUNSETVNETBE` is not used).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VnetHdr {
    /// `VIRTIO_NET_HDR_F_*` bits ([`F_NEEDS_CSUM`]).
    pub flags: u8,
    /// `GSO_*` type, possibly with [`GSO_ECN`] set.
    pub gso_type: u8,
    /// Bytes of the IP and transport headers at the front of the packet.
    pub hdr_len: u16,
    /// Payload bytes per segment (the MSS) for a super-packet.
    pub gso_size: u16,
    /// Offset from the start of the IP packet at which checksumming starts.
    pub csum_start: u16,
    /// Offset from `csum_start` at which the checksum is stored.
    pub csum_offset: u16,
}

impl VnetHdr {
    /// Reads the header at the start of `frame` (None if shorter than 10 bytes).
    pub fn parse(frame: &[u8]) -> Option<Self> {
        let b = frame.get(..VNET_HDR_LEN)?;
        let le = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        Some(Self {
            flags: b[0],
            gso_type: b[1],
            hdr_len: le(2),
            gso_size: le(4),
            csum_start: le(6),
            csum_offset: le(8),
        })
    }

    /// Writes the header into the first 10 bytes of `frame`.
    pub fn write(&self, frame: &mut [u8]) {
        frame[0] = self.flags;
        frame[1] = self.gso_type;
        frame[2..4].copy_from_slice(&self.hdr_len.to_le_bytes());
        frame[4..6].copy_from_slice(&self.gso_size.to_le_bytes());
        frame[6..8].copy_from_slice(&self.csum_start.to_le_bytes());
        frame[8..10].copy_from_slice(&self.csum_offset.to_le_bytes());
    }
}

/// Why a frame cannot be handled as a super-packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum GsoError {
    /// The frame is too short for the headers it claims.
    #[error("frame shorter than its virtio-net, IP or transport header")]
    Truncated,
    /// A GSO type other than TCP or UDP.
    #[error("GSO type {0:#x} is neither TCP nor UDP (only TSO and USO are enabled on the device)")]
    UnsupportedType(u8),
    /// The virtio header's offsets or sizes disagree with the packet's own headers.
    #[error("GSO header does not match the IP packet")]
    Inconsistent,
}

/// Where the parts of a TCP or UDP super-packet are, as offsets into the frame (virtio header
/// first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuperPacket {
    hdr: VnetHdr,
    ipv6: bool,
    /// UDP segmentation (`GSO_UDP_L4`) rather than TSO.
    udp: bool,
    /// Offset of the TCP or UDP header.
    l4: usize,
    /// Offset of the payload (end of the TCP or UDP header).
    payload: usize,
    /// Frame length.
    len: usize,
    gso_size: usize,
    segments: usize,
}

/// The layout of `frame` if it is a TCP or UDP super-packet; `Ok(None)` for an ordinary packet.
pub fn parse(frame: &[u8]) -> Result<Option<SuperPacket>, GsoError> {
    let hdr = VnetHdr::parse(frame).ok_or(GsoError::Truncated)?;
    let kind = hdr.gso_type & !GSO_ECN;
    if kind == GSO_NONE {
        return Ok(None);
    }
    if kind != GSO_TCPV4 && kind != GSO_TCPV6 && kind != GSO_UDP_L4 {
        return Err(GsoError::UnsupportedType(hdr.gso_type));
    }
    let ip = VNET_HDR_LEN;
    let version = frame.get(ip).ok_or(GsoError::Truncated)? >> 4;
    let (ipv6, udp) = match (kind, version) {
        (GSO_TCPV4, 4) => (false, false),
        (GSO_TCPV6, 6) => (true, false),
        (GSO_UDP_L4, 4) => (false, true),
        (GSO_UDP_L4, 6) => (true, true),
        _ => return Err(GsoError::Inconsistent),
    };
    // The transport header: where the partial checksum starts (this skips IPv4 options and
    // IPv6 extension headers alike); without NEEDS_CSUM, right after a plain IP header.
    let l4 = if hdr.flags & F_NEEDS_CSUM != 0 {
        ip + hdr.csum_start as usize
    } else if ipv6 {
        ip + 40
    } else {
        ip + (frame[ip] & 0x0f) as usize * 4
    };
    let payload = if udp {
        l4 + UDP_HEADER_LEN
    } else {
        let data_offset = *frame.get(l4 + 12).ok_or(GsoError::Truncated)? >> 4;
        if data_offset < 5 {
            return Err(GsoError::Inconsistent);
        }
        l4 + data_offset as usize * 4
    };
    let gso_size = hdr.gso_size as usize;
    if payload > frame.len() || gso_size == 0 {
        return Err(GsoError::Inconsistent);
    }
    let segments = (frame.len() - payload).div_ceil(gso_size).max(1);
    Ok(Some(SuperPacket {
        hdr,
        ipv6,
        udp,
        l4,
        payload,
        len: frame.len(),
        gso_size,
        segments,
    }))
}

impl SuperPacket {
    /// Number of wire packets it stands for.
    pub fn segments(&self) -> usize {
        self.segments
    }

    /// IP and transport header bytes repeated in every segment.
    pub fn header_ip_len(&self) -> usize {
        self.payload - VNET_HDR_LEN
    }

    /// Payload bytes of segments `first..first + count`.
    fn payload_len(&self, first: usize, count: usize) -> usize {
        let total = self.len - self.payload;
        let start = (first * self.gso_size).min(total);
        let end = ((first + count) * self.gso_size).min(total);
        end - start
    }

    /// IP length of wire segment `i`.
    pub fn segment_ip_len(&self, i: usize) -> u32 {
        (self.header_ip_len() + self.payload_len(i, 1)) as u32
    }

    /// Frame length (virtio header included) of segments `first..first + count` as one packet.
    pub fn chunk_frame_len(&self, first: usize, count: usize) -> usize {
        self.payload + self.payload_len(first, count)
    }

    /// Writes segments `first..first + count` of `frame` into `out` as one packet and returns
    /// its frame length. A single segment is written as an ordinary packet; `complete_checksum`
    /// computes the transport checksum in full instead of leaving it partial. `out` must hold
    /// `chunk_frame_len(first, count)` bytes.
    pub fn write_chunk(
        &self,
        frame: &[u8],
        first: usize,
        count: usize,
        out: &mut [u8],
        complete_checksum: bool,
    ) -> usize {
        debug_assert!(count >= 1 && first + count <= self.segments);
        let total = self.len - self.payload;
        let from = self.payload + (first * self.gso_size).min(total);
        let n = self.payload_len(first, count);
        let len = self.payload + n;
        out[..self.payload].copy_from_slice(&frame[..self.payload]);
        out[self.payload..len].copy_from_slice(&frame[from..from + n]);

        let ip = VNET_HDR_LEN;
        let ip_len = len - ip;
        if self.ipv6 {
            put16(out, ip + 4, (ip_len - 40) as u16);
        } else {
            put16(out, ip + 2, ip_len as u16);
            let id = get16(out, ip + 4).wrapping_add(first as u16);
            put16(out, ip + 4, id);
            let ihl = (out[ip] & 0x0f) as usize * 4;
            put16(out, ip + 10, 0);
            let c = !fold(sum(&out[ip..ip + ihl]));
            put16(out, ip + 10, c);
        }
        let l4 = self.l4;
        let l4_len = len - l4;
        let check_at = if self.udp {
            // Each datagram of a run, and the run as a super-packet, has its own UDP length.
            put16(out, l4 + 4, l4_len as u16);
            l4 + 6
        } else {
            let seq = get32(out, l4 + 4).wrapping_add((first * self.gso_size) as u32);
            out[l4 + 4..l4 + 8].copy_from_slice(&seq.to_be_bytes());
            let last = first + count == self.segments;
            if first > 0 {
                out[l4 + 13] &= !TCP_CWR;
            }
            if !last {
                out[l4 + 13] &= !(TCP_FIN | TCP_PSH);
            }
            l4 + 16
        };
        let proto = if self.udp { PROTO_UDP } else { PROTO_TCP };
        let pseudo = self.pseudo_header_sum(out, proto, l4_len);
        let partial = self.hdr.flags & F_NEEDS_CSUM != 0 && !complete_checksum;
        if partial {
            put16(out, check_at, fold(pseudo));
        } else {
            put16(out, check_at, 0);
            let c = !fold(pseudo + sum(&out[l4..len]));
            // A computed UDP checksum of 0 goes out as 0xffff: 0 means "none" (RFC 768).
            put16(out, check_at, if c == 0 && self.udp { 0xffff } else { c });
        }
        let mut hdr = self.hdr;
        if count == 1 {
            hdr.gso_type = GSO_NONE;
            hdr.gso_size = 0;
        } else if first > 0 {
            hdr.gso_type &= !GSO_ECN;
        }
        hdr.hdr_len = (self.payload - ip) as u16;
        if !partial {
            hdr.flags &= !F_NEEDS_CSUM;
            hdr.csum_start = 0;
            hdr.csum_offset = 0;
        }
        hdr.write(out);
        len
    }

    fn pseudo_header_sum(&self, frame: &[u8], proto: u64, l4_len: usize) -> u64 {
        let ip = VNET_HDR_LEN;
        let addrs = if self.ipv6 {
            &frame[ip + 8..ip + 40]
        } else {
            &frame[ip + 12..ip + 20]
        };
        sum(addrs) + proto + l4_len as u64
    }
}

/// Completes a partial transport checksum (`NEEDS_CSUM`) of an ordinary packet in place, as a
/// NIC would, and clears the flag: the frame then shows what the wire would carry.
pub fn finish_checksum(frame: &mut [u8]) {
    let Some(mut hdr) = VnetHdr::parse(frame) else {
        return;
    };
    if hdr.flags & F_NEEDS_CSUM == 0 {
        return;
    }
    let start = VNET_HDR_LEN + hdr.csum_start as usize;
    let at = start + hdr.csum_offset as usize;
    if at + 2 > frame.len() {
        return;
    }
    // The field holds the pseudo-header sum; summing from csum_start includes it.
    let c = !fold(sum(&frame[start..]));
    put16(frame, at, if c == 0 { 0xffff } else { c });
    hdr.flags &= !F_NEEDS_CSUM;
    hdr.csum_start = 0;
    hdr.csum_offset = 0;
    hdr.write(frame);
}

/// One's-complement sum of big-endian 16-bit words (a trailing odd byte is padded with zero),
/// not yet folded.
pub fn sum(bytes: &[u8]) -> u64 {
    let mut s: u64 = 0;
    let mut words = bytes.chunks_exact(2);
    for w in &mut words {
        s += u16::from_be_bytes([w[0], w[1]]) as u64;
    }
    if let [b] = words.remainder() {
        s += (*b as u64) << 8;
    }
    s
}

/// Folds a sum to 16 bits with end-around carry.
pub fn fold(mut s: u64) -> u16 {
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

fn get16(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}

fn get32(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

fn put16(b: &mut [u8], i: usize, v: u16) {
    b[i..i + 2].copy_from_slice(&v.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: [u8; 4] = [100, 64, 0, 1];
    const DST: [u8; 4] = [100, 64, 0, 2];

    /// A frame of `l4_len` transport bytes behind a virtio header `hdr` and an IPv4 header
    /// (SRC → DST, `id`, DF, TTL 64, protocol `proto`, header checksum set).
    fn ipv4_frame(hdr: VnetHdr, l4_len: usize, id: u16, proto: u8) -> Vec<u8> {
        let ip_len = 20 + l4_len;
        let mut f = vec![0u8; VNET_HDR_LEN + ip_len];
        hdr.write(&mut f);
        let ip = VNET_HDR_LEN;
        f[ip] = 0x45;
        put16(&mut f, ip + 2, ip_len as u16);
        put16(&mut f, ip + 4, id);
        f[ip + 6] = 0x40;
        f[ip + 8] = 64;
        f[ip + 9] = proto;
        f[ip + 12..ip + 16].copy_from_slice(&SRC);
        f[ip + 16..ip + 20].copy_from_slice(&DST);
        let c = !fold(sum(&f[ip..ip + 20]));
        put16(&mut f, ip + 10, c);
        f
    }

    /// A TSO frame as the kernel hands it over: IPv4 (ID 0x1234, DF) + TCP (seq 1000,
    /// ACK|PSH|FIN|CWR), `payload` bytes counting up, partial checksum.
    fn tso_v4(payload: usize, mss: u16) -> Vec<u8> {
        let hdr = VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: GSO_TCPV4 | GSO_ECN,
            hdr_len: 40,
            gso_size: mss,
            csum_start: 20,
            csum_offset: 16,
        };
        let mut f = ipv4_frame(hdr, 20 + payload, 0x1234, 6);
        let t = VNET_HDR_LEN + 20;
        put16(&mut f, t, 40000);
        put16(&mut f, t + 2, 5201);
        f[t + 4..t + 8].copy_from_slice(&1000u32.to_be_bytes());
        f[t + 12] = 5 << 4;
        f[t + 13] = 0x10 | TCP_PSH | TCP_FIN | TCP_CWR;
        put16(&mut f, t + 14, 65535);
        for (i, b) in f[t + 20..].iter_mut().enumerate() {
            *b = i as u8;
        }
        // Partial checksum as tcp_v4_send_check leaves it: the pseudo-header sum, not inverted.
        let pseudo = sum(&SRC) + sum(&DST) + 6 + (20 + payload) as u64;
        put16(&mut f, t + 16, fold(pseudo));
        f
    }

    /// True when the IPv4 header and TCP checksum of an ordinary packet verify (sum = 0xffff).
    fn verifies(frame: &[u8]) -> bool {
        let ip = &frame[VNET_HDR_LEN..];
        let ip_ok = fold(sum(&ip[..20])) == 0xffff;
        let tcp = &ip[20..];
        let pseudo = sum(&ip[12..20]) + 6 + tcp.len() as u64;
        ip_ok && fold(pseudo + sum(tcp)) == 0xffff
    }

    /// Cuts `f` into single segments directly, checks each with `verifies` and that their
    /// payloads (after `headers` bytes of IP and transport header) are `f`'s in order; then cuts it
    /// in runs of `cuts` lengths, each run cut again into single segments, and checks those are
    /// the same bytes.
    fn runs_or_directly_give_the_same_wire(
        f: &[u8],
        headers: usize,
        cuts: &[usize],
        verifies: fn(&[u8]) -> bool,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let sp = parse(f).unwrap().unwrap();
        let n = sp.segments();
        let mut direct = Vec::new();
        let mut buf = vec![0u8; 2000];
        for i in 0..n {
            let len = sp.write_chunk(f, i, 1, &mut buf, true);
            proptest::prop_assert!(verifies(&buf[..len]));
            direct.push(buf[..len].to_vec());
        }
        let body: Vec<u8> = direct
            .iter()
            .flat_map(|p| p[VNET_HDR_LEN + headers..].to_vec())
            .collect();
        proptest::prop_assert_eq!(&body[..], &f[VNET_HDR_LEN + headers..]);
        let mut first = 0;
        let mut k = 0;
        while first < n {
            let count = cuts[k % cuts.len()].min(n - first);
            k += 1;
            let mut run = vec![0u8; sp.chunk_frame_len(first, count)];
            let len = sp.write_chunk(f, first, count, &mut run, false);
            proptest::prop_assert_eq!(len, run.len());
            if count == 1 {
                finish_checksum(&mut run);
                proptest::prop_assert_eq!(&run[..], &direct[first][..]);
            } else {
                let again = parse(&run).unwrap().unwrap();
                proptest::prop_assert_eq!(again.segments(), count);
                for j in 0..count {
                    let l = again.write_chunk(&run, j, 1, &mut buf, true);
                    proptest::prop_assert_eq!(&buf[..l], &direct[first + j][..]);
                }
            }
            first += count;
        }
        Ok(())
    }

    proptest::proptest! {
        /// Any way of cutting a TCP super-packet into runs, each run cut again into single
        /// segments, gives the wire packets that cutting the original directly gives: valid
        /// checksums, consecutive sequence numbers, and the payload in order without loss.
        #[test]
        fn cutting_in_runs_or_directly_gives_the_same_wire(
            payload in 1usize..6000,
            mss in 100u16..1500,
            cuts in proptest::collection::vec(1usize..5, 1..40),
        ) {
            runs_or_directly_give_the_same_wire(&tso_v4(payload, mss), 40, &cuts, verifies)?;
        }

        /// UDP as TCP: the datagrams, their lengths and checksums, whichever way it is cut.
        #[test]
        fn udp_runs_or_directly_give_the_same_datagrams(
            payload in 1usize..6000,
            gso in 100u16..1472,
            cuts in proptest::collection::vec(1usize..5, 1..40),
        ) {
            runs_or_directly_give_the_same_wire(
                &uso_v4(payload, gso), 20 + UDP_HEADER_LEN, &cuts, verifies_udp)?;
        }
    }

    /// A UDP GSO frame as `udp_send_skb` hands it over with `UDP_SEGMENT` = `gso` and offloads
    /// on the device: IPv4 (ID 0x4321, DF) + UDP (40001 → 5301, length of the whole), partial
    /// checksum over the whole length.
    fn uso_v4(payload: usize, gso: u16) -> Vec<u8> {
        let hdr = VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: GSO_UDP_L4,
            hdr_len: 28,
            gso_size: gso,
            csum_start: 20,
            csum_offset: 6,
        };
        let mut f = ipv4_frame(hdr, UDP_HEADER_LEN + payload, 0x4321, 17);
        let u = VNET_HDR_LEN + 20;
        put16(&mut f, u, 40001);
        put16(&mut f, u + 2, 5301);
        put16(&mut f, u + 4, (UDP_HEADER_LEN + payload) as u16);
        for (i, b) in f[u + UDP_HEADER_LEN..].iter_mut().enumerate() {
            *b = (i * 7) as u8;
        }
        let pseudo = sum(&SRC) + sum(&DST) + 17 + (UDP_HEADER_LEN + payload) as u64;
        put16(&mut f, u + 6, fold(pseudo));
        f
    }

    /// True when the IPv4 header, the UDP length and the UDP checksum of an ordinary packet
    /// verify, as the receiving kernel checks them.
    fn verifies_udp(frame: &[u8]) -> bool {
        let ip = &frame[VNET_HDR_LEN..];
        let ip_ok = fold(sum(&ip[..20])) == 0xffff && get16(ip, 2) as usize == ip.len();
        let udp = &ip[20..];
        let len_ok = get16(udp, 4) as usize == udp.len();
        let pseudo = sum(&ip[12..20]) + 17 + udp.len() as u64;
        ip_ok && len_ok && get16(udp, 6) != 0 && fold(pseudo + sum(udp)) == 0xffff
    }

    #[test]
    fn a_udp_super_packet_is_cut_into_the_datagrams_the_kernel_would_send() {
        // 3000 bytes sent with UDP_SEGMENT 1400: datagrams of 1400, 1400 and 200 bytes.
        let f = uso_v4(3000, 1400);
        let sp = parse(&f).unwrap().unwrap();
        assert_eq!(sp.segments(), 3);
        assert_eq!(sp.header_ip_len(), 28);
        let lens: Vec<u32> = (0..3).map(|i| sp.segment_ip_len(i)).collect();
        assert_eq!(lens, [1428, 1428, 228]);
        let mut out = vec![0u8; 2000];
        let mut body = Vec::new();
        for i in 0..3 {
            let n = sp.write_chunk(&f, i, 1, &mut out, true);
            let p = &out[..n];
            assert!(verifies_udp(p), "datagram {i} checksums and lengths");
            let h = VnetHdr::parse(p).unwrap();
            assert_eq!((h.gso_type, h.gso_size, h.flags), (GSO_NONE, 0, 0));
            let ip = &p[VNET_HDR_LEN..];
            assert_eq!(
                get16(ip, 4),
                0x4321 + i as u16,
                "IP ID advances per datagram"
            );
            assert_eq!((get16(ip, 20), get16(ip, 22)), (40001, 5301), "ports kept");
            body.extend_from_slice(&ip[28..]);
        }
        assert_eq!(
            &body[..],
            &f[VNET_HDR_LEN + 28..],
            "payload in order, none lost"
        );
        // A run of two stays a UDP super-packet whose header covers the run.
        let mut run = vec![0u8; sp.chunk_frame_len(1, 2)];
        sp.write_chunk(&f, 1, 2, &mut run, false);
        let h = VnetHdr::parse(&run).unwrap();
        assert_eq!((h.gso_type, h.gso_size, h.hdr_len), (GSO_UDP_L4, 1400, 28));
        assert_eq!(get16(&run, VNET_HDR_LEN + 24) as usize, 8 + 1600);
        assert_eq!(parse(&run).unwrap().unwrap().segments(), 2);
    }

    #[test]
    fn header_round_trips_little_endian() {
        let h = VnetHdr {
            flags: 1,
            gso_type: 4,
            hdr_len: 0x0102,
            gso_size: 1448,
            csum_start: 40,
            csum_offset: 16,
        };
        let mut b = [0u8; VNET_HDR_LEN];
        h.write(&mut b);
        assert_eq!(b, [1, 4, 0x02, 0x01, 0xa8, 0x05, 40, 0, 16, 0]);
        assert_eq!(VnetHdr::parse(&b), Some(h));
    }

    #[test]
    fn segments_count_headers_in_each() {
        // 2500 bytes at MSS 1000: segments of 1000, 1000, 500 payload, each with 40 header bytes.
        let f = tso_v4(2500, 1000);
        let sp = parse(&f).unwrap().unwrap();
        assert_eq!(sp.segments(), 3);
        let lens: Vec<u32> = (0..3).map(|i| sp.segment_ip_len(i)).collect();
        assert_eq!(lens, [1040, 1040, 540]);
        // The wire carries 2 × 40 more header bytes than the super-packet.
        assert_eq!(
            lens.iter().sum::<u32>() as usize,
            f.len() - VNET_HDR_LEN + 80
        );
    }

    #[test]
    fn ordinary_packets_are_not_super_packets() {
        let mut f = tso_v4(100, 1000);
        f[1] = GSO_NONE;
        assert_eq!(parse(&f), Ok(None));
        f[1] = 3; // GSO_UDP (UFO), never enabled
        assert_eq!(parse(&f), Err(GsoError::UnsupportedType(3)));
        f[1] = GSO_TCPV4;
        f[VNET_HDR_LEN] = 0x65; // an IPv6 packet under a TCPv4 GSO type
        assert_eq!(parse(&f), Err(GsoError::Inconsistent));
        assert_eq!(parse(&f[..5]), Err(GsoError::Truncated));
    }

    #[test]
    fn single_segments_are_valid_wire_packets() {
        let f = tso_v4(2500, 1000);
        let sp = parse(&f).unwrap().unwrap();
        let mut out = vec![0u8; 2000];
        let mut payload = Vec::new();
        for i in 0..3 {
            let n = sp.write_chunk(&f, i, 1, &mut out, true);
            let p = &out[..n];
            assert!(verifies(p), "segment {i} checksums");
            let h = VnetHdr::parse(p).unwrap();
            assert_eq!((h.gso_type, h.gso_size, h.flags), (GSO_NONE, 0, 0));
            let ip = &p[VNET_HDR_LEN..];
            assert_eq!(get16(ip, 2) as u32, sp.segment_ip_len(i));
            assert_eq!(
                get16(ip, 4),
                0x1234 + i as u16,
                "IP ID advances per segment"
            );
            assert_eq!(get32(ip, 24), 1000 + 1000 * i as u32, "sequence number");
            let flags = ip[33];
            assert_eq!(flags & TCP_CWR != 0, i == 0, "CWR only on the first");
            assert_eq!(
                flags & (TCP_FIN | TCP_PSH) != 0,
                i == 2,
                "FIN/PSH only on the last"
            );
            payload.extend_from_slice(&ip[40..]);
        }
        assert_eq!(
            payload,
            f[VNET_HDR_LEN + 40..],
            "payload split without loss"
        );
    }

    #[test]
    fn partial_checksum_completes_to_the_full_one() {
        let f = tso_v4(2500, 1000);
        let sp = parse(&f).unwrap().unwrap();
        let (mut a, mut b) = (vec![0u8; 2000], vec![0u8; 2000]);
        let na = sp.write_chunk(&f, 1, 1, &mut a, false);
        let nb = sp.write_chunk(&f, 1, 1, &mut b, true);
        assert_eq!(na, nb);
        let h = VnetHdr::parse(&a).unwrap();
        assert_eq!(
            (h.flags, h.csum_start, h.csum_offset),
            (F_NEEDS_CSUM, 20, 16)
        );
        finish_checksum(&mut a[..na]);
        assert_eq!(a[..na], b[..nb]);
    }

    #[test]
    fn a_run_of_segments_stays_a_super_packet() {
        // Segments 1..3 of 4 (MSS 1000, 3500 bytes): 1000 + 1000 payload, GSO kept, no ECN flag.
        let f = tso_v4(3500, 1000);
        let sp = parse(&f).unwrap().unwrap();
        let mut out = vec![0u8; 4000];
        let n = sp.write_chunk(&f, 1, 2, &mut out, false);
        assert_eq!(n, sp.chunk_frame_len(1, 2));
        assert_eq!(n, VNET_HDR_LEN + 40 + 2000);
        let again = parse(&out[..n]).unwrap().unwrap();
        assert_eq!(again.segments(), 2);
        let h = VnetHdr::parse(&out).unwrap();
        assert_eq!((h.gso_type, h.gso_size, h.hdr_len), (GSO_TCPV4, 1000, 40));
        // Cut again into wire packets, it gives what cutting the original gives.
        let (mut x, mut y) = (vec![0u8; 2000], vec![0u8; 2000]);
        for k in 0..2 {
            let nx = again.write_chunk(&out[..n], k, 1, &mut x, true);
            let ny = sp.write_chunk(&f, 1 + k, 1, &mut y, true);
            assert_eq!(x[..nx], y[..ny], "segment {}", 1 + k);
        }
    }

    #[test]
    fn ipv6_payload_length_and_checksum() {
        let payload = 300;
        let mut f = vec![0u8; VNET_HDR_LEN + 40 + 20 + payload];
        VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: GSO_TCPV6,
            hdr_len: 60,
            gso_size: 200,
            csum_start: 40,
            csum_offset: 16,
        }
        .write(&mut f);
        let ip = VNET_HDR_LEN;
        f[ip] = 0x60;
        put16(&mut f, ip + 4, (20 + payload) as u16);
        f[ip + 6] = 6;
        f[ip + 8] = 0xfd;
        f[ip + 39] = 1;
        f[ip + 24] = 0xfd;
        f[ip + 55] = 2;
        f[ip + 40 + 12] = 5 << 4;
        let sp = parse(&f).unwrap().unwrap();
        assert_eq!(sp.segments(), 2);
        let mut out = vec![0u8; 400];
        let n = sp.write_chunk(&f, 1, 1, &mut out, true);
        assert_eq!(n, VNET_HDR_LEN + 40 + 20 + 100);
        assert_eq!(get16(&out, ip + 4), 120);
        assert_eq!(get32(&out, ip + 44), 200, "sequence advanced by one MSS");
        let pseudo = sum(&out[ip + 8..ip + 40]) + 6 + 120;
        assert_eq!(fold(pseudo + sum(&out[ip + 40..n])), 0xffff);
    }

    #[test]
    fn finishing_a_udp_checksum() {
        // UDP 100.64.0.1:5000 → 100.64.0.2:5001, 4 bytes, partial checksum as udp4_hwcsum leaves it.
        let mut f = vec![0u8; VNET_HDR_LEN + 20 + 8 + 4];
        VnetHdr {
            flags: F_NEEDS_CSUM,
            csum_start: 20,
            csum_offset: 6,
            ..Default::default()
        }
        .write(&mut f);
        let ip = VNET_HDR_LEN;
        f[ip] = 0x45;
        f[ip + 9] = 17;
        f[ip + 12..ip + 16].copy_from_slice(&SRC);
        f[ip + 16..ip + 20].copy_from_slice(&DST);
        let u = ip + 20;
        put16(&mut f, u, 5000);
        put16(&mut f, u + 2, 5001);
        put16(&mut f, u + 4, 12);
        f[u + 8..u + 12].copy_from_slice(b"ping");
        let pseudo = sum(&SRC) + sum(&DST) + 17 + 12;
        put16(&mut f, u + 6, fold(pseudo));
        finish_checksum(&mut f);
        assert_eq!(VnetHdr::parse(&f).unwrap().flags, 0);
        assert_eq!(fold(pseudo + sum(&f[u..])), 0xffff);
        // Hand-computed: pseudo 0x6440+0x0001+0x6440+0x0002+0x0011+0x000c = 0xc8a0; UDP words
        // 0x1388+0x1389+0x000c+0x7069+0x6e67 = 0x105ed, folded 0x05ee → total 0xce8e; ~ = 0x3171.
        assert_eq!(get16(&f, u + 6), 0x3171);
    }
}
