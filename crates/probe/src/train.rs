//! Probe packets as both ends saw them.

/// One probe packet: its size and the times each end stamped it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packet {
    /// Its size on the wire, bytes (the IP packet: payload, UDP and IP headers).
    pub bytes: u32,
    /// When it left, seconds on the sender's clock.
    pub sent: f64,
    /// When it arrived, seconds on the receiver's clock; `None` if it was lost.
    pub received: Option<f64>,
}

/// A train: packets in the order they were sent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Train {
    /// The packets, in send order.
    pub packets: Vec<Packet>,
}

impl Train {
    /// A train of `packets` in send order.
    pub fn new(packets: Vec<Packet>) -> Train {
        Train { packets }
    }

    /// How many packets arrived.
    pub fn received(&self) -> usize {
        self.packets.iter().filter(|p| p.received.is_some()).count()
    }

    /// How many packets were lost.
    pub fn lost(&self) -> usize {
        self.packets.len() - self.received()
    }

    /// The one-way delays of the packets that arrived, in send order, seconds (with the clocks'
    /// unknown offset).
    pub fn delays(&self) -> Vec<f64> {
        self.packets
            .iter()
            .filter_map(|p| p.received.map(|r| r - p.sent))
            .collect()
    }

    /// The rate the sender achieved, bit/s: the bytes after the first packet over the time from
    /// the first send to the last; `None` for fewer than two packets or no time between them.
    pub fn send_rate(&self) -> Option<f64> {
        let (first, last) = (self.packets.first()?, self.packets.last()?);
        let span = last.sent - first.sent;
        let bytes: u64 = self.packets[1..].iter().map(|p| u64::from(p.bytes)).sum();
        (span > 0.0).then(|| bytes as f64 * 8.0 / span)
    }

    /// The rate at which the train arrived, bit/s: the bytes of the packets that arrived, after
    /// the first to arrive, over the time from the first arrival to the last; `None` for fewer
    /// than two arrivals or no time between them.
    pub fn receive_rate(&self) -> Option<f64> {
        let arrivals = self.arrivals();
        let (first, last) = (arrivals.first()?, arrivals.last()?);
        let span = last.0 - first.0;
        let bytes: u64 = arrivals[1..].iter().map(|a| u64::from(a.1)).sum();
        (span > 0.0).then(|| bytes as f64 * 8.0 / span)
    }

    /// `(arrival time, bytes)` of the packets that arrived, in arrival order.
    pub fn arrivals(&self) -> Vec<(f64, u32)> {
        let mut a: Vec<(f64, u32)> = self
            .packets
            .iter()
            .filter_map(|p| p.received.map(|r| (r, p.bytes)))
            .collect();
        a.sort_by(|x, y| x.0.total_cmp(&y.0));
        a
    }
}
