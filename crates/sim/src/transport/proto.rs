//! longhaul's own transport (`longhaul-proto`) as simulated endpoints: the very connection
//! state machine, loss recovery, pacing and congestion controller that `longhaul send/recv`
//! run over UDP, driven here in virtual time.
//!
//! Each flow is a client [`Connection`] that sends and a server [`Connection`] that receives,
//! both in synthetic mode: data packets carry their header and a payload length but no payload
//! bytes, so nothing proportional to the data is copied. A data packet's header rides in the
//! simulator's packet struct itself (`Connection::poll_transmit_header` hands it over as a
//! struct, `Connection::handle_data_header` takes it back, with the checks decoding applies):
//! encoding it into a pooled buffer and decoding it an RTT later cost a cache miss per packet,
//! the largest single cost of a run. ACKs, handshakes and closes travel encoded, in a pooled
//! buffer.
//!
//! With `transport = "proto_secure"` the connections run the secure transport: the Noise
//! handshake in clear, then every datagram encoded and sealed (no header rides in the struct:
//! what travels is the ciphertext), 27 bytes longer.
//!
//! On the wire a datagram is `wire_len` (the UDP payload, with the synthetic payload counted)
//! plus 28 bytes of IPv4 and UDP headers, so a full packet is exactly the path MTU and the
//! payload per packet is `MTU − 57` (1443 bytes at 1500) — a little less than TCP's 1460,
//! which shows in utilization figures computed net of 40-byte headers.
//!
//! The application keeps the send buffer filled two congestion windows ahead (a bulk transfer on
//! an autotuned socket) until the flow's `stop` time or its byte budget, then calls `finish`;
//! the receiving application reads everything at once.

use super::{Endpoint, FlowReceiver, FlowSender, SenderSnapshot};
use crate::packet::{Ecn, Packet};
use longhaul_metrics::online::DelayAccumulator;
use longhaul_proto::packet::DataHeader;
use longhaul_proto::{Config, Connection, PacketKind, Side, Time};

/// Packets the application writes ahead beyond two congestion windows (so that a window of a
/// few packets still leaves the pacer something to send).
const APP_AHEAD_PACKETS: u64 = 16;

/// IPv4 (20) + UDP (8) header bytes around every datagram.
pub const IP_UDP_OVERHEAD: u32 = 28;

/// `Packet::flags` bits of a data packet whose header rides in the struct.
const HEADER_CARRIED: u8 = 0x80;
const FIN: u8 = 0x01;
const SYNTHETIC: u8 = 0x02;

/// The simulator's packet for a datagram; `data_overhead` is the connection's bytes per data
/// packet besides the payload ([`Config::data_overhead`]: the header, and the seal if any).
fn to_packet(
    t: &longhaul_proto::Transmit,
    header: Option<DataHeader>,
    ecn: bool,
    data_overhead: usize,
) -> Packet {
    let data = t.kind == PacketKind::Data;
    let mut pkt = Packet {
        size: (t.wire_len as u32 + IP_UDP_OVERHEAD) as u16,
        payload: if data {
            (t.wire_len - data_overhead) as u16
        } else {
            0
        },
        seq: t.packet_number.unwrap_or(0),
        ecn: if ecn && data { Ecn::Ect } else { Ecn::NotEct },
        ..Packet::EMPTY
    };
    if let Some(h) = header {
        pkt.seq = h.packet_number;
        pkt.aux = h.offset;
        pkt.echo = h.timestamp_us;
        pkt.flags =
            HEADER_CARRIED | if h.fin { FIN } else { 0 } | if h.synthetic { SYNTHETIC } else { 0 };
    }
    pkt
}

/// The data header a packet carries in its fields, if it does.
fn carried_header(pkt: &Packet) -> Option<DataHeader> {
    (pkt.flags & HEADER_CARRIED != 0).then_some(DataHeader {
        packet_number: pkt.seq,
        timestamp_us: pkt.echo,
        offset: pkt.aux,
        len: pkt.payload,
        fin: pkt.flags & FIN != 0,
        synthetic: pkt.flags & SYNTHETIC != 0,
    })
}

/// Hand a packet to a connection in whichever form it travelled.
fn deliver(c: &mut Connection, now: u64, pkt: &Packet, bytes: &[u8]) {
    let ce = pkt.ecn == Ecn::Ce;
    // A datagram the connection rejects is counted in its stats; the simulation goes on.
    let _ = match carried_header(pkt) {
        Some(h) => c.handle_data_header(Time::from_nanos(now), &h, ce),
        None => c.handle_packet_ecn(Time::from_nanos(now), bytes, ce),
    };
}

/// The sending end: a client connection and a bulk-transfer application.
pub struct ProtoSender {
    config: Config,
    conn: Option<Connection>,
    buf: Vec<u8>,
    start: u64,
    stop: u64,
    /// Bytes the application has yet to write.
    remaining: u64,
    finished: bool,
    /// The largest congestion window seen, bytes: how far ahead the application writes.
    largest_window: u64,
    ecn: bool,
    /// RTT samples the connection had taken when last looked at.
    samples_seen: u64,
    /// The data packet number `poll_transmit` last returned, if it returned a data packet.
    last_data_pn: Option<u64>,
    rtt: DelayAccumulator,
    /// Set when the connection could not be created (the reason is kept for the report).
    pub error: Option<String>,
}

impl ProtoSender {
    /// A client connection with `config` whose application writes from `start` to `stop` (ns),
    /// `bytes` in all or without limit; `ecn` sends ECN-capable packets.
    pub fn new(config: Config, start: u64, stop: u64, bytes: Option<u64>, ecn: bool) -> Self {
        ProtoSender {
            buf: vec![0; config.max_datagram_size()],
            config,
            conn: None,
            start,
            stop,
            remaining: bytes.unwrap_or(u64::MAX / 2),
            finished: false,
            largest_window: 0,
            ecn,
            samples_seen: 0,
            last_data_pn: None,
            rtt: DelayAccumulator::default(),
            error: None,
        }
    }

    fn top_up(&mut self, now: u64) {
        let Some(c) = self.conn.as_mut() else { return };
        if self.finished {
            return;
        }
        if now >= self.stop || self.remaining == 0 {
            c.finish();
            self.finished = true;
        } else {
            // Write as an application does into an autotuned socket buffer: twice the largest
            // window so far ahead of what is acknowledged (and a few packets; Linux grows
            // the buffer with the window and never shrinks it, so a recovery's smaller window
            // does not starve the sender), never the whole 64-MiB send buffer, so that after
            // `stop` the flow ends within a few round trips.
            let mss = u64::from(c.config().mss);
            let window = (c.cc().cwnd().max(0.0) * mss as f64) as u64;
            self.largest_window = self.largest_window.max(window);
            let ahead = 2 * self.largest_window + APP_AHEAD_PACKETS * mss;
            let room = ahead.saturating_sub(c.send_buffered());
            self.remaining -= c.write_synthetic(self.remaining.min(room));
        }
    }

    /// The connection; `None` if it could not be created (see `error`).
    pub fn connection(&self) -> Option<&Connection> {
        self.conn.as_ref()
    }
}

impl Endpoint for ProtoSender {
    fn handle_packet(&mut self, now: u64, pkt: &Packet, bytes: &[u8]) {
        let Some(c) = self.conn.as_mut() else { return };
        deliver(c, now, pkt, bytes);
        let (samples, latest) = c.rtt_samples();
        if samples > self.samples_seen {
            self.samples_seen = samples;
            self.rtt.record_ns(latest.as_micros() as u64 * 1000);
        }
    }

    fn poll_transmit(&mut self, now: u64, out: &mut Vec<u8>) -> Option<Packet> {
        if now < self.start || self.error.is_some() {
            return None;
        }
        if self.conn.is_none() {
            match Connection::new(self.config.clone(), Side::Client, Time::from_nanos(now)) {
                Ok(c) => self.conn = Some(c),
                Err(e) => {
                    self.error = Some(e.to_string());
                    return None;
                }
            }
        }
        self.top_up(now);
        let c = self.conn.as_mut()?;
        self.last_data_pn = None;
        let (t, header) = c.poll_transmit_header(Time::from_nanos(now), &mut self.buf)?;
        if t.kind == PacketKind::Data {
            self.last_data_pn = t.packet_number;
        }
        out.extend_from_slice(&self.buf[..t.len]);
        Some(to_packet(&t, header, self.ecn, self.config.data_overhead()))
    }

    fn poll_timeout(&self) -> Option<u64> {
        match &self.conn {
            None if self.error.is_none() => Some(self.start),
            None => None,
            Some(c) => c.poll_timeout().map(|t| t.as_nanos()),
        }
    }

    fn handle_timeout(&mut self, now: u64) {
        if let Some(c) = self.conn.as_mut() {
            c.handle_timeout(Time::from_nanos(now));
        }
    }
}

impl FlowSender for ProtoSender {
    fn on_local_drop(&mut self, now: u64, _pkt: &Packet) {
        // A dropped handshake is resent by the connection's own timer.
        if let (Some(c), Some(pn)) = (self.conn.as_mut(), self.last_data_pn.take()) {
            c.on_local_drop(Time::from_nanos(now), pn);
        }
    }

    fn snapshot(&self) -> SenderSnapshot {
        let Some(c) = &self.conn else {
            return SenderSnapshot {
                mss: self.config.mss,
                ..SenderSnapshot::default()
            };
        };
        let st = c.stats();
        SenderSnapshot {
            mss: self.config.mss,
            cwnd: st.cwnd_packets,
            srtt_ns: st.srtt_us * 1000,
            latest_rtt_ns: st.latest_rtt_us * 1000,
            bytes_in_flight: st.bytes_in_flight,
            packets_sent: st.packets_sent,
            retransmits: st.packets_retransmitted,
            packets_lost: st.packets_lost,
            finished: self.finished && c.is_send_complete(),
        }
    }

    fn rtt(&self) -> &DelayAccumulator {
        &self.rtt
    }
    fn rtt_mut(&mut self) -> &mut DelayAccumulator {
        &mut self.rtt
    }
}

/// The receiving end: a server connection whose application reads everything.
pub struct ProtoReceiver {
    conn: Connection,
    buf: Vec<u8>,
    delivered: u64,
}

impl ProtoReceiver {
    /// A server connection with `config`; an invalid configuration is an error.
    pub fn new(config: Config) -> Result<Self, longhaul_proto::ConfigError> {
        Ok(ProtoReceiver {
            buf: vec![0; config.max_datagram_size().max(2048)],
            conn: Connection::new(config, Side::Server, Time::ZERO)?,
            delivered: 0,
        })
    }
}

impl Endpoint for ProtoReceiver {
    fn handle_packet(&mut self, now: u64, pkt: &Packet, bytes: &[u8]) {
        deliver(&mut self.conn, now, pkt, bytes);
        self.delivered += self.conn.read_synthetic();
    }

    fn poll_transmit(&mut self, now: u64, out: &mut Vec<u8>) -> Option<Packet> {
        let (t, header) = self
            .conn
            .poll_transmit_header(Time::from_nanos(now), &mut self.buf)?;
        out.extend_from_slice(&self.buf[..t.len]);
        Some(to_packet(
            &t,
            header,
            false,
            self.conn.config().data_overhead(),
        ))
    }

    fn poll_timeout(&self) -> Option<u64> {
        self.conn.poll_timeout().map(|t| t.as_nanos())
    }

    fn handle_timeout(&mut self, now: u64) {
        self.conn.handle_timeout(Time::from_nanos(now));
        self.delivered += self.conn.read_synthetic();
    }
}

impl FlowReceiver for ProtoReceiver {
    fn delivered_bytes(&self) -> u64 {
        self.delivered
    }
}
