//! A plain sender's data payloads go from the application's buffers to the kernel as slices
//! of their datagrams (`sendmsg` with an iovec list, `UdpPort::flush`): what a real UDP socket
//! receives is byte for byte what the copying path (`Connection::poll_transmit`) writes, with
//! GSO, without it, where the kernel refuses it, and from the sending thread; and a buffer is
//! not offered back to the application while a batch that reads it waits to be sent. No
//! privileges needed.

use longhaul_cc::CcSpec;
use longhaul_net::send_thread::{OutBatch, SendOutcome, SendThread};
use longhaul_net::socket::{Clock, UdpPort};
use longhaul_proto::{Config, Connection, PacketKind, Side, Time};
use std::net::{SocketAddr, UdpSocket};
use std::ops::Range;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

fn config() -> Config {
    let mut c = Config::new(CcSpec::default_for("reno").unwrap());
    c.recv_window = 8 << 20;
    c.send_buffer = 8 << 20;
    c.setup.initial_cwnd = 32.0;
    c
}

/// A client and server after their handshake at `now`, exchanged in memory.
fn established(now: Time) -> (Connection, Connection) {
    let mut c = Connection::new(config(), Side::Client, now).unwrap();
    let mut s = Connection::new(config(), Side::Server, now).unwrap();
    let mut buf = vec![0u8; 65_536];
    for _ in 0..3 {
        while let Some(t) = c.poll_transmit(now, &mut buf) {
            s.handle_packet(now, &buf[..t.len]).unwrap();
        }
        while let Some(t) = s.poll_transmit(now, &mut buf) {
            c.handle_packet(now, &buf[..t.len]).unwrap();
        }
    }
    assert!(c.is_established() && s.is_established());
    (c, s)
}

/// Bytes that differ from one offset to the next.
fn pattern(n: usize, seed: u32) -> Vec<u8> {
    (0..n as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 ^ seed as u8)
        .collect()
}

/// The stream both twins send: file pieces given whole (one- and three-byte ones among them,
/// so that payloads cross from one piece to the next) and copied messages between them.
/// Returns the stream and where in it the pieces lie.
fn write_stream(c: &mut Connection) -> (Vec<u8>, Vec<Range<u64>>) {
    let (mut stream, mut pieces) = (Vec::new(), Vec::new());
    let sizes = [(5_000, 1), (1, 2), (100_000, 3), (3, 4), (150_000, 5)];
    for (i, (n, seed)) in sizes.into_iter().enumerate() {
        if i == 0 || i == 3 {
            let message = pattern(18 + 2_000 * i, 9);
            assert_eq!(c.write(&message), message.len());
            stream.extend_from_slice(&message);
        }
        let piece = pattern(n, seed);
        let at = stream.len() as u64;
        pieces.push(at..at + n as u64);
        stream.extend_from_slice(&piece);
        assert_eq!(c.write_owned(piece), Ok(n));
    }
    c.finish();
    (stream, pieces)
}

/// Every datagram waiting at `rx`, reading until `n` have come or five seconds passed, then
/// any more that arrive within 20 ms.
fn receive(rx: &mut UdpPort, clock: &Clock, n: usize) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    let mut buf = vec![0u8; 65_536];
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut settle = None;
    loop {
        rx.receive(&mut buf, clock, |_, d, _| got.push(d.to_vec()))
            .unwrap();
        if got.len() >= n && settle.is_none() {
            settle = Some(Instant::now() + Duration::from_millis(20));
        }
        if settle.is_some_and(|s| Instant::now() >= s) || Instant::now() >= deadline {
            return got;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// One GSO send per batch.
    Gso,
    /// No GSO asked for: one datagram per call.
    OneByOne,
    /// GSO asked for and refused by the kernel at the first batch (a socket without UDP
    /// checksums: `EINVAL`), then one datagram per call.
    Refused,
    /// Batches sent on the sending thread, with GSO.
    Thread,
}

/// Sends one stream twice, from twin connections that get the same ACKs at the same times:
/// one copying each datagram (`poll_transmit`), one through a socket (`UdpPort::flush`, with
/// payloads lent); returns the port's (send calls, datagrams sent, GSO still on) and checks
/// that every round's datagrams arrive at a real socket as the copying twin wrote them.
fn twins(mode: Mode) -> (u64, u64, bool) {
    let t0 = Time::from_millis(1);
    let (mut copied, mut server) = established(t0);
    let (mut lent, _) = established(t0);
    let (stream, pieces) = write_stream(&mut copied);
    assert_eq!(write_stream(&mut lent), (stream.clone(), pieces.clone()));

    let mut rx = UdpPort::bind("127.0.0.1:0".parse().unwrap(), 65_535, false).unwrap();
    let to: SocketAddr = rx.socket().local_addr().unwrap();
    let offload = mode != Mode::OneByOne;
    let mut port = UdpPort::bind("127.0.0.1:0".parse().unwrap(), 65_535, offload).unwrap();
    port.socket().connect(to).unwrap();
    assert_eq!(port.offloads().0, offload, "the kernel offers UDP GSO");
    if mode == Mode::Refused {
        // Linux refuses to segment for a socket that sends without checksums.
        let one: libc::c_int = 1;
        // SAFETY: a valid socket, and a c_int option value of its size.
        let r = unsafe {
            libc::setsockopt(
                port.socket().as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_NO_CHECK,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
    }
    if mode == Mode::Thread {
        port.start_send_thread().unwrap();
    }

    let clock = Clock::start();
    let (mut buf, mut ack) = (vec![0u8; 65_536], vec![0u8; 65_536]);
    let mut now = t0;
    let (mut rounds, mut datagrams) = (0, 0);
    while !copied.is_send_complete() {
        rounds += 1;
        assert!(rounds < 2_000, "the transfer stalled");
        let mut want = Vec::new();
        while let Some(t) = copied.poll_transmit(now, &mut buf) {
            want.push(buf[..t.len].to_vec());
        }
        port.flush(None, &mut lent, now).unwrap();
        let got = receive(&mut rx, &clock, want.len());
        assert_eq!(got.len(), want.len(), "round {rounds}");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                g == w,
                "round {rounds}, datagram {i}: {} vs {} bytes",
                g.len(),
                w.len()
            );
        }
        datagrams += want.len();
        now += Duration::from_millis(1);
        for d in &want {
            server.handle_packet(now, d).unwrap();
        }
        now += Duration::from_millis(1);
        while let Some(t) = server.poll_transmit(now, &mut ack) {
            copied.handle_packet(now, &ack[..t.len]).unwrap();
            lent.handle_packet(now, &ack[..t.len]).unwrap();
        }
        for c in [&mut copied, &mut lent] {
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
        }
    }
    port.stop_send_thread(&mut lent, now).unwrap();
    assert!(lent.is_send_complete());
    assert!(datagrams > 150, "{datagrams} datagrams");
    let mut got = vec![0u8; stream.len() + 1];
    assert_eq!(server.read(&mut got), stream.len());
    assert_eq!(&got[..stream.len()], &stream[..]);
    // Every piece is back from both twins once nothing reads it.
    let back = |c: &mut Connection| std::iter::from_fn(|| c.take_spent()).count();
    assert_eq!((back(&mut copied), back(&mut lent)), (5, 5));
    let s = port.stats;
    assert_eq!(s.datagrams_sent, datagrams as u64);
    // Every payload inside one piece is lent (each packet carries `mss` bytes from a multiple
    // of `mss`, and none is lost); one in a message or across two pieces is copied.
    let (mss, total) = (lent.config().mss as u64, stream.len() as u64);
    let inside: u64 = (0..total.div_ceil(mss))
        .map(|i| i * mss..((i + 1) * mss).min(total))
        .filter(|c| pieces.iter().any(|p| p.start <= c.start && c.end <= p.end))
        .map(|c| c.end - c.start)
        .sum();
    assert!(inside > total * 9 / 10, "{inside} of {total}");
    assert_eq!(s.bytes_lent, inside);
    (s.send_calls, s.datagrams_sent, port.offloads().0)
}

#[test]
fn with_gso_the_kernel_receives_the_copied_datagrams() {
    let (calls, sent, gso) = twins(Mode::Gso);
    assert!(gso);
    assert!(calls * 4 < sent, "{calls} calls for {sent} datagrams");
}

#[test]
fn one_datagram_per_call_the_kernel_receives_the_copied_datagrams() {
    let (calls, sent, gso) = twins(Mode::OneByOne);
    assert!(!gso);
    assert_eq!(calls, sent);
}

#[test]
fn where_the_kernel_refuses_gso_the_kernel_receives_the_copied_datagrams() {
    let (calls, sent, gso) = twins(Mode::Refused);
    assert!(!gso, "the refusal switched GSO off");
    // The refused call, then one per datagram.
    assert!(calls > sent, "{calls} calls for {sent} datagrams");
}

#[test]
fn from_the_sending_thread_the_kernel_receives_the_copied_datagrams() {
    let (calls, sent, gso) = twins(Mode::Thread);
    assert!(gso);
    assert!(calls * 4 < sent, "{calls} calls for {sent} datagrams");
}

/// A batch holds the payloads lent to it: the piece they lie in is not offered back to the
/// application while the batch waits to be sent, even once every byte of it is acknowledged,
/// and is offered back (the same allocation) once the sending thread has sent the batch; the
/// receiving socket gets each datagram as header and payload.
#[test]
fn a_piece_is_not_offered_back_while_a_batch_that_reads_it_waits() {
    let now = Time::from_millis(1);
    let (mut c, mut s) = established(now);
    // Fewer bytes than the window holds: all are sent at once.
    let piece = pattern(12_000, 7);
    let at = piece.as_ptr();
    assert_eq!(c.write_owned(piece), Ok(12_000));
    let mut batch = OutBatch::with_capacity(65_536, 64);
    let full = c.data_datagram_size();
    let mut datagrams = Vec::new();
    while let Some((t, seal, payload)) = c.poll_transmit_vectored(now, batch.room(full)) {
        assert!(seal.is_none());
        assert_eq!(t.kind, PacketKind::Data);
        let payload = payload.expect("a payload inside the piece is lent");
        let mut d = batch.room(full)[..t.len].to_vec();
        d.extend_from_slice(payload.as_slice());
        assert_eq!(batch.push(&t, None, Some(payload)), d.len());
        datagrams.push(d);
    }
    assert_eq!(
        datagrams.len(),
        12_000usize.div_ceil(c.config().mss as usize)
    );
    assert_eq!(batch.segment, full);
    // Every byte arrives and is acknowledged before the batch is sent.
    let mut ack = vec![0u8; 65_536];
    for d in &datagrams {
        s.handle_packet(now, d).unwrap();
    }
    while let Some(t) = s.poll_transmit(now, &mut ack) {
        c.handle_packet(now, &ack[..t.len]).unwrap();
    }
    assert_eq!(c.send_buffered(), 0, "all acknowledged");
    assert!(c.take_spent().is_none(), "the batch still reads the piece");

    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.connect(rx.local_addr().unwrap()).unwrap();
    let mut thread = SendThread::start(sock, None, true).unwrap();
    thread.send(batch).unwrap();
    thread.finish();
    let report = thread.report().expect("the batch's report");
    assert!(
        matches!(report.outcome, SendOutcome::Sent),
        "{:?}",
        report.outcome
    );
    assert_eq!(report.batch.count, datagrams.len());
    let back = c.take_spent().expect("sent: nothing reads the piece");
    assert_eq!(
        (back.as_ptr(), back.len()),
        (at, 12_000),
        "the same allocation"
    );
    let mut buf = vec![0u8; 65_536];
    for d in &datagrams {
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], &d[..]);
    }
}
