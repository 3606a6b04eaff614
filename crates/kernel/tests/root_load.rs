//! Root tests: load, list, use and unload each congestion control; the loader's errors; unload
//! while connections are active. Each test checks the kernel log for warnings it caused.

mod common;

use common::*;
use longhaul_kernel::{catalog::Algorithm, loader, sockets, KernelError, LoadOptions, ParamValues};
use std::os::fd::AsRawFd;
use std::time::Duration;

/// Load, list (with the parameters read back from the kernel), use through setsockopt, see the
/// socket in sock_diag, unload, and check the name is gone and new sockets cannot select it.
fn load_list_use_unload(algorithm: Algorithm, name: &str, settings: &[&str]) {
    let mark = dmesg_mark();
    let cc = LoadedCc::load(algorithm, name, settings);

    let listed = loader::list().unwrap();
    let entry = listed.iter().find(|l| l.name == name).expect("listed");
    assert_eq!(entry.algorithm, algorithm);
    assert!(entry.registered);
    // What the program holds: the settings through its fixed point (Lion's Q16 fractions are
    // not the decimal values given).
    let given = ParamValues::from_settings(algorithm, settings).unwrap();
    let expected = ParamValues::decode(algorithm, &given.encode()).unwrap();
    assert_eq!(
        entry.params.as_ref().expect("parameters readable"),
        &expected
    );
    // The repair counter is pinned and readable, and starts at zero.
    assert_eq!(entry.repairs, Some(0), "repair counter of {name}");

    let mut flow = LoopbackFlow::open(name);
    assert_eq!(get_congestion(flow.client.as_raw_fd()), name);
    let sent = flow.send_for(Duration::from_millis(300));
    let info = tcp_info(flow.client.as_raw_fd());
    assert!(info.snd_cwnd >= 2, "cwnd {}", info.snd_cwnd);
    let users = sockets::using(name).unwrap();
    assert!(
        users
            .iter()
            .any(|s| s.local == flow.client.local_addr().unwrap()),
        "sock_diag does not show the client using {name}: {users:?}"
    );
    assert_eq!(flow.finish(), sent, "bytes lost on the way");

    drop(cc);
    assert!(!loader::available().unwrap().contains(&name.to_string()));
    assert!(!loader::list().unwrap().iter().any(|l| l.name == name));
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let err = set_congestion(s.as_raw_fd(), name).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENOENT), "{err}");
    let problems = dmesg_problems_since(mark);
    assert!(problems.is_empty(), "kernel log: {problems:#?}");
}

#[test]
fn fast_loads_lists_serves_and_unloads() {
    if require_root("fast_loads_lists_serves_and_unloads") {
        load_list_use_unload(
            Algorithm::Fast,
            "lhl_fast",
            &["alpha=30", "beta=45", "gamma=0.25"],
        );
    }
}

#[test]
fn scalable_loads_lists_serves_and_unloads() {
    if require_root("scalable_loads_lists_serves_and_unloads") {
        load_list_use_unload(
            Algorithm::Scalable,
            "lhl_scalable",
            &["legacy_threshold=16", "legacy_decrease=1"],
        );
    }
}

#[test]
fn highspeed_loads_lists_serves_and_unloads() {
    if require_root("highspeed_loads_lists_serves_and_unloads") {
        load_list_use_unload(Algorithm::HighSpeed, "lhl_highspeed", &[]);
    }
}

#[test]
fn vegas_loads_lists_serves_and_unloads() {
    if require_root("vegas_loads_lists_serves_and_unloads") {
        load_list_use_unload(Algorithm::Vegas, "lhl_vegas", &["alpha=3", "beta=5"]);
    }
}

#[test]
fn lion_loads_lists_serves_and_unloads() {
    if require_root("lion_loads_lists_serves_and_unloads") {
        load_list_use_unload(
            Algorithm::Lion,
            "lhl_lion",
            &["mbs_initial=8", "probe_gain=0.1", "queue_threshold=0.002"],
        );
    }
}

#[test]
fn a_name_the_kernel_already_has_is_refused() {
    if !require_root("a_name_the_kernel_already_has_is_refused") {
        return;
    }
    // cubic or reno is always there; registering over it must fail before anything loads.
    let taken = loader::available().unwrap().into_iter().next().unwrap();
    let err = loader::load(&LoadOptions {
        params: ParamValues::defaults(Algorithm::Scalable),
        name: Some(taken.clone()),
    })
    .unwrap_err();
    assert!(matches!(err, KernelError::NameTaken { .. }), "{err}");
    assert!(err.to_string().contains("--name"), "{err}");
    // And a name loaded twice.
    let _cc = LoadedCc::load(Algorithm::Vegas, "lhl_twice", &[]);
    let err = loader::load(&LoadOptions {
        params: ParamValues::defaults(Algorithm::Vegas),
        name: Some("lhl_twice".into()),
    })
    .unwrap_err();
    assert!(err.to_string().contains("loaded by longhaul"), "{err}");
}

#[test]
fn names_longer_than_the_kernel_allows_are_refused() {
    if !require_root("names_longer_than_the_kernel_allows_are_refused") {
        return;
    }
    let err = loader::load(&LoadOptions {
        params: ParamValues::defaults(Algorithm::Fast),
        name: Some("a_very_long_cc_name".into()),
    })
    .unwrap_err();
    assert!(matches!(err, KernelError::NameTooLong(_)), "{err}");
}

#[test]
fn a_verifier_rejection_reports_the_program_and_the_log() {
    if !require_root("a_verifier_rejection_reports_the_program_and_the_log") {
        return;
    }
    let err = loader::load_rejected_program().unwrap_err();
    eprintln!("{err}");
    let KernelError::Verifier { program, log, .. } = &err else {
        panic!("expected a verifier error, got: {err}");
    };
    assert_eq!(program, "lh_reject_cong_avoid_op");
    // The kernel's own words (net/ipv4/bpf_tcp_ca.c) must reach the user.
    assert!(log.contains("no write support to tcp_sock"), "log: {log}");
    assert!(err.to_string().contains("verifier log"), "{err}");
}

#[test]
fn unloading_what_is_not_loaded_says_so() {
    if !require_root("unloading_what_is_not_loaded_says_so") {
        return;
    }
    let err = loader::unload("lhl_nothing").unwrap_err();
    assert!(matches!(err, KernelError::NotLoaded(_)), "{err}");
}

/// Unload while a connection is sending: the kernel unregisters the name at once, the
/// connection keeps its congestion control and keeps delivering every byte, and nothing
/// appears in the kernel log.
#[test]
fn unload_while_connections_are_active() {
    if !require_root("unload_while_connections_are_active") {
        return;
    }
    let mark = dmesg_mark();
    for (algorithm, name) in [
        (Algorithm::Fast, "lhu_fast"),
        (Algorithm::Scalable, "lhu_scalable"),
        (Algorithm::HighSpeed, "lhu_highspeed"),
        (Algorithm::Vegas, "lhu_vegas"),
        (Algorithm::Lion, "lhu_lion"),
    ] {
        let cc = LoadedCc::load(algorithm, name, &[]);
        let mut flows: Vec<LoopbackFlow> = (0..3).map(|_| LoopbackFlow::open(name)).collect();
        let mut sent = vec![0u64; flows.len()];
        for (f, s) in flows.iter_mut().zip(&mut sent) {
            *s += f.send_for(Duration::from_millis(50));
        }
        loader::unload(name).unwrap();
        assert!(!loader::available().unwrap().contains(&name.to_string()));
        for (f, s) in flows.iter_mut().zip(&mut sent) {
            // The socket still runs the unregistered algorithm.
            assert_eq!(get_congestion(f.client.as_raw_fd()), name);
            *s += f.send_for(Duration::from_millis(100));
        }
        drop(cc);
        // Load again under the same name while the old sockets still run the unregistered
        // ops, and start a new connection on the new registration beside them.
        let again = LoadedCc::load(algorithm, name, &[]);
        let mut fresh = LoopbackFlow::open(name);
        let fresh_sent = fresh.send_for(Duration::from_millis(50));
        for (f, s) in flows.into_iter().zip(sent) {
            assert_eq!(f.finish(), s, "{name}: bytes lost after unload");
        }
        assert_eq!(fresh.finish(), fresh_sent);
        drop(again);
    }
    let problems = dmesg_problems_since(mark);
    assert!(problems.is_empty(), "kernel log: {problems:#?}");
}

/// A controller used inside another network namespace is found there: sock_diag answers for
/// the asking socket's namespace only, and `kernel list` showed 0 sockets for it.
#[test]
fn sockets_in_other_network_namespaces_are_found() {
    if !require_root("sockets_in_other_network_namespaces_are_found") {
        return;
    }
    let name = "lhl_vegas_ns";
    let cc = LoadedCc::load(Algorithm::Vegas, name, &[]);
    let ns = format!("lh-k-{}", std::process::id());
    let ip = |args: &[&str]| {
        let st = std::process::Command::new("ip")
            .args(args)
            .status()
            .unwrap();
        assert!(st.success(), "ip {args:?}");
    };
    ip(&["netns", "add", &ns]);
    ip(&["-n", &ns, "link", "set", "lo", "up"]);
    let path = format!("/run/netns/{ns}");
    let (mut flow, local) = std::thread::spawn(move || {
        let f = std::fs::File::open(path).unwrap();
        nix::sched::setns(&f, nix::sched::CloneFlags::CLONE_NEWNET).unwrap();
        let flow = LoopbackFlow::open(name);
        let local = flow.client.local_addr().unwrap();
        (flow, local)
    })
    .join()
    .unwrap();
    flow.send_for(Duration::from_millis(50));
    let users = sockets::using(name).unwrap();
    let found = users.iter().any(|s| s.local == local && s.netns == ns);
    flow.finish();
    ip(&["netns", "delete", &ns]);
    drop(cc);
    assert!(found, "the client in {ns} is not among {users:?}");
}
