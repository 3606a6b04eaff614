//! Which TCP sockets use which congestion control, from the kernel's sock_diag interface
//! (the INET_DIAG_CONG attribute `ss -i` shows), for the current network namespace.

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
use std::net::SocketAddr as IpSocketAddr;

/// One TCP socket and its congestion control.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketCc {
    pub local: IpSocketAddr,
    pub remote: IpSocketAddr,
    /// TCP state (include/net/tcp_states.h: 1 ESTABLISHED, 10 LISTEN, ...).
    pub state: u8,
    pub congestion_control: String,
}

/// Every TCP socket (IPv4 and IPv6) of this network namespace that reports a congestion control.
pub fn tcp_sockets() -> Result<Vec<SocketCc>, KernelError> {
    let mut out = Vec::new();
    for family in [AF_INET, AF_INET6] {
        dump(family, &mut out)?;
    }
    Ok(out)
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
