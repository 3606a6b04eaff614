//! Which TCP sockets use which congestion control, from the kernel's sock_diag interface
//! (the INET_DIAG_CONG attribute `ss -i` shows), in every network namespace.
//!
//! sock_diag answers for the namespace of the socket that asks, and a congestion control is
//! registered once for all namespaces: a controller used by the emulator's hosts or a
//! container is invisible from the caller's namespace. So the dump is repeated in each
//! namespace there is — those named under `/run/netns` and those of every process
//! (`/proc/PID/ns/net`), the same namespace counted once by its inode — from a thread that
//! enters it with `setns(2)` and ends (the caller's threads stay where they are). Entering
//! another namespace needs CAP_SYS_ADMIN; without it only the caller's namespace is seen.

use crate::error::KernelError;
use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_DUMP, NLM_F_REQUEST,
};
use netlink_packet_sock_diag::{
    constants::{AF_INET, AF_INET6, IPPROTO_TCP},
    inet::{nlas::Nla, ExtensionFlags, InetRequest, SocketId, StateFlags},
    SockDiagMessage,
};
use netlink_sys::{protocols::NETLINK_SOCK_DIAG, Socket, SocketAddr};
use std::collections::HashSet;
use std::net::SocketAddr as IpSocketAddr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One TCP socket and its congestion control.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketCc {
    /// The socket's local address.
    pub local: IpSocketAddr,
    /// The peer's address.
    pub remote: IpSocketAddr,
    /// TCP state (include/net/tcp_states.h: 1 ESTABLISHED, 10 LISTEN, ...).
    pub state: u8,
    /// The congestion control's name, as `ss -i` shows it.
    pub congestion_control: String,
    /// The network namespace: its name under `/run/netns`, `pid N` for one known by a process
    /// only, or `this` for the caller's.
    pub netns: String,
}

/// Every TCP socket (IPv4 and IPv6) that reports a congestion control, in every network
/// namespace this process may enter.
pub fn tcp_sockets() -> Result<Vec<SocketCc>, KernelError> {
    let mut out = here("this")?;
    for ns in other_namespaces() {
        // A namespace that vanished or may not be entered is skipped.
        if let Ok(mut found) = within(&ns) {
            out.append(&mut found);
        }
    }
    Ok(out)
}

/// The sockets of the caller's namespace, labelled `netns`.
fn here(netns: &str) -> Result<Vec<SocketCc>, KernelError> {
    let mut out = Vec::new();
    for family in [AF_INET, AF_INET6] {
        dump(family, &mut out)?;
    }
    for s in &mut out {
        s.netns = netns.to_string();
    }
    Ok(out)
}

/// A network namespace other than the caller's: a path that opens it, and its label.
struct Namespace {
    path: PathBuf,
    label: String,
}

/// Every network namespace but the caller's, each once: named ones first, then those only a
/// process knows.
fn other_namespaces() -> Vec<Namespace> {
    let key = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let mut seen: HashSet<(u64, u64)> = key(Path::new("/proc/self/ns/net")).into_iter().collect();
    let mut out = Vec::new();
    let mut add = |path: PathBuf, label: String| {
        if let Some(k) = key(&path) {
            if seen.insert(k) {
                out.push(Namespace { path, label });
            }
        }
    };
    if let Ok(dir) = std::fs::read_dir("/run/netns") {
        let mut names: Vec<String> = dir
            .filter_map(|e| Some(e.ok()?.file_name().to_str()?.to_string()))
            .collect();
        names.sort();
        for name in names {
            add(Path::new("/run/netns").join(&name), name);
        }
    }
    if let Ok(dir) = std::fs::read_dir("/proc") {
        let mut pids: Vec<u32> = dir
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect();
        pids.sort();
        for pid in pids {
            add(
                PathBuf::from(format!("/proc/{pid}/ns/net")),
                format!("pid {pid}"),
            );
        }
    }
    out
}

/// The sockets of namespace `ns`, dumped from a thread that enters it.
fn within(ns: &Namespace) -> Result<Vec<SocketCc>, KernelError> {
    let file = std::fs::File::open(&ns.path).map_err(|source| KernelError::Io {
        context: format!("opening {}", ns.path.display()),
        source,
    })?;
    std::thread::scope(|s| {
        s.spawn(|| {
            nix::sched::setns(&file, nix::sched::CloneFlags::CLONE_NEWNET).map_err(|e| {
                KernelError::Io {
                    context: format!("entering {}", ns.path.display()),
                    source: e.into(),
                }
            })?;
            here(&ns.label)
        })
        .join()
        .unwrap_or_else(|_| {
            Err(KernelError::Io {
                context: "sock_diag thread".into(),
                source: std::io::Error::other("panicked"),
            })
        })
    })
}

/// The sockets using congestion control `name`.
pub fn using(name: &str) -> Result<Vec<SocketCc>, KernelError> {
    Ok(tcp_sockets()?
        .into_iter()
        .filter(|s| s.congestion_control == name)
        .collect())
}

fn io_err(context: &str) -> impl FnOnce(std::io::Error) -> KernelError + '_ {
    move |source| KernelError::Io {
        context: format!("sock_diag: {context}"),
        source,
    }
}

fn dump(family: u8, out: &mut Vec<SocketCc>) -> Result<(), KernelError> {
    let mut socket = Socket::new(NETLINK_SOCK_DIAG).map_err(io_err("socket"))?;
    socket.bind_auto().map_err(io_err("bind"))?;
    socket
        .connect(&SocketAddr::new(0, 0))
        .map_err(io_err("connect"))?;

    let mut header = NetlinkHeader::default();
    header.flags = NLM_F_REQUEST | NLM_F_DUMP;
    let socket_id = if family == AF_INET {
        SocketId::new_v4()
    } else {
        SocketId::new_v6()
    };
    let mut request = NetlinkMessage::new(
        header,
        SockDiagMessage::InetRequest(InetRequest {
            family,
            protocol: IPPROTO_TCP,
            extensions: ExtensionFlags::CONG,
            states: StateFlags::all(),
            socket_id,
        })
        .into(),
    );
    request.finalize();
    let mut buf = vec![0; request.buffer_len()];
    request.serialize(&mut buf[..]);
    socket.send(&buf[..], 0).map_err(io_err("send"))?;

    let mut rx = vec![0u8; 1 << 16];
    loop {
        let size = socket.recv(&mut &mut rx[..], 0).map_err(io_err("recv"))?;
        let mut offset = 0;
        while offset < size {
            let msg =
                <NetlinkMessage<SockDiagMessage>>::deserialize(&rx[offset..size]).map_err(|e| {
                    KernelError::Io {
                        context: "sock_diag: malformed reply".to_string(),
                        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
                    }
                })?;
            let len = msg.header.length as usize;
            match msg.payload {
                NetlinkPayload::InnerMessage(SockDiagMessage::InetResponse(r)) => {
                    let cc = r.nlas.iter().find_map(|n| match n {
                        Nla::Congestion(s) => Some(s.clone()),
                        _ => None,
                    });
                    if let Some(congestion_control) = cc {
                        let id = &r.header.socket_id;
                        out.push(SocketCc {
                            local: IpSocketAddr::new(id.source_address, id.source_port),
                            remote: IpSocketAddr::new(id.destination_address, id.destination_port),
                            state: r.header.state,
                            congestion_control,
                            netns: String::new(),
                        });
                    }
                }
                NetlinkPayload::Done(_) => return Ok(()),
                NetlinkPayload::Error(e) => {
                    return Err(KernelError::Io {
                        context: "sock_diag dump".to_string(),
                        source: std::io::Error::other(format!("{e:?}")),
                    })
                }
                _ => {}
            }
            if len == 0 {
                break;
            }
            offset += len;
        }
    }
}
