//! Helpers for the root tests: the skip-or-fail policy, TCP_INFO, dmesg, and guards that undo
//! what a test created (congestion controls, namespaces) even when it panics.
#![allow(dead_code)]

use longhaul_kernel::{catalog::Algorithm, loader, LoadOptions, ParamValues};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::time::{Duration, Instant};

pub mod emulated;
pub mod netns;

/// True when the test may run. Without root it prints why it is skipped, and under CI=true it
/// fails instead: CI is root on a BTF kernel, so a skip there would hide a broken setup.
pub fn require_root(test: &str) -> bool {
    longhaul_testenv::root_or_skip(test, "needs root (eBPF struct_ops, network namespaces)")
}

/// A loaded congestion control, unloaded on drop.
pub struct LoadedCc {
    pub name: String,
}

impl LoadedCc {
    pub fn load(algorithm: Algorithm, name: &str, settings: &[&str]) -> LoadedCc {
        let params = ParamValues::from_settings(algorithm, settings).expect("parameters");
        if loader::list()
            .unwrap_or_default()
            .iter()
            .any(|l| l.name == name)
        {
            // Left over from an interrupted run.
            let _ = loader::unload(name);
        }
        let loaded = loader::load(&LoadOptions {
            params,
            name: Some(name.to_string()),
        })
        .unwrap_or_else(|e| panic!("loading {algorithm} as {name}: {e}"));
        assert!(
            loaded.registered,
            "{name} not in tcp_available_congestion_control"
        );
        LoadedCc {
            name: name.to_string(),
        }
    }
}

impl LoadedCc {
    /// Windows its programs repaired after a callback the kernel skipped.
    pub fn repairs(&self) -> Option<u64> {
        loader::list()
            .ok()?
            .into_iter()
            .find(|l| l.name == self.name)?
            .repairs
    }
}

impl Drop for LoadedCc {
    fn drop(&mut self) {
        if let Some(n) = self.repairs().filter(|&n| n > 0) {
            eprintln!(
                "{}: repaired {n} window(s) left by skipped callbacks",
                self.name
            );
        }
        if loader::list()
            .unwrap_or_default()
            .iter()
            .any(|l| l.name == self.name)
        {
            if let Err(e) = loader::unload(&self.name) {
                eprintln!("cleanup: unloading {}: {e}", self.name);
            }
        }
    }
}

/// The fields of struct tcp_info (include/uapi/linux/tcp.h) the tests read.
#[derive(Debug, Clone, Copy, Default)]
pub struct TcpInfo {
    pub ca_state: u8,
    pub rtt_us: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd: u32,
    pub total_retrans: u32,
    pub min_rtt_us: u32,
    pub bytes_acked: u64,
}

pub fn tcp_info(fd: i32) -> TcpInfo {
    let mut buf = [0u8; 256];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: buf is valid for len bytes; the kernel writes at most len bytes.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    assert_eq!(r, 0, "getsockopt(TCP_INFO)");
    let u32_at = |o: usize| u32::from_ne_bytes(buf[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_ne_bytes(buf[o..o + 8].try_into().unwrap());
    TcpInfo {
        ca_state: buf[1],
        rtt_us: u32_at(68),
        snd_ssthresh: u32_at(76),
        snd_cwnd: u32_at(80),
        total_retrans: u32_at(100),
        bytes_acked: u64_at(120),
        min_rtt_us: u32_at(148),
    }
}

pub fn set_congestion(fd: i32, name: &str) -> std::io::Result<()> {
    // SAFETY: the name buffer is valid for its length.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

pub fn get_congestion(fd: i32) -> String {
    let mut buf = [0u8; 16];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: buf is valid for len bytes.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    assert_eq!(r, 0, "getsockopt(TCP_CONGESTION)");
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// A connected loopback pair whose client uses congestion control `cc`, with a thread
/// draining the server side.
pub struct LoopbackFlow {
    pub client: TcpStream,
    drain: Option<std::thread::JoinHandle<u64>>,
}

impl LoopbackFlow {
    pub fn open(cc: &str) -> LoopbackFlow {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let drain = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = vec![0u8; 1 << 16];
            let mut total = 0u64;
            while let Ok(n) = s.read(&mut buf) {
                if n == 0 {
                    break;
                }
                total += n as u64;
            }
            total
        });
        let sock =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        set_congestion(sock.as_raw_fd(), cc).unwrap_or_else(|e| panic!("TCP_CONGESTION {cc}: {e}"));
        sock.connect(&addr.into()).unwrap();
        LoopbackFlow {
            client: sock.into(),
            drain: Some(drain),
        }
    }

    /// Sends for `d`, returns the bytes written.
    pub fn send_for(&mut self, d: Duration) -> u64 {
        let buf = vec![0x5au8; 1 << 16];
        let end = Instant::now() + d;
        let mut n = 0;
        while Instant::now() < end {
            self.client.write_all(&buf).unwrap();
            n += buf.len() as u64;
        }
        n
    }

    /// Closes the client and returns the bytes the server received.
    pub fn finish(mut self) -> u64 {
        let _ = self.client.shutdown(std::net::Shutdown::Write);
        self.drain.take().unwrap().join().unwrap()
    }
}

/// Kernel log lines that signal a kernel problem.
/// Kernel warnings, bugs and traces logged since `mark`.
///
/// One warning is reported but not counted: `tcp_snd_cwnd_set`'s WARN_ON_ONCE((int)cwnd <= 0)
/// reached from tcp_undo_cwnd_reduction. Our undo_cwnd programs return at least 2 and at most
/// 2^24 (`lh_undo_cwnd`), so that warning can only come from an undo_cwnd call the kernel made
/// without running the program (crates/kernel/README.md, "Skipped callbacks"), which no
/// program can prevent; the programs repair the window it leaves on the next ACK.
pub fn dmesg_problems_since(mark: usize) -> Vec<String> {
    let mut problems = Vec::new();
    let mut skip_next_trace = false;
    for l in dmesg_lines().into_iter().skip(mark) {
        if l.contains("WARNING:")
            && l.contains("include/net/tcp.h")
            && l.contains("tcp_undo_cwnd_reduction")
        {
            eprintln!("kernel skipped an undo_cwnd callback (not counted as a problem): {l}");
            skip_next_trace = true;
            continue;
        }
        if l.contains("Call Trace") && skip_next_trace {
            skip_next_trace = false;
            continue;
        }
        if l.contains("WARNING:")
            || l.contains("BUG:")
            || l.contains("Call Trace")
            || l.contains("refcount_t")
            || l.contains("general protection")
        {
            problems.push(l);
        }
    }
    problems
}

pub fn dmesg_mark() -> usize {
    dmesg_lines().len()
}

fn dmesg_lines() -> Vec<String> {
    let out = Command::new("dmesg").output().expect("running dmesg");
    assert!(
        out.status.success(),
        "dmesg: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}
