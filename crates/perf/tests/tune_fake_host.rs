//! `longhaul tune` against a fake /proc/sys and /sys/class/net tree: reading, the report, --apply.

use longhaul_perf::tune::{apply_fixes, check_host, HostRoots, PathSpec, Status};
use std::path::Path;
use std::time::Duration;

fn put(root: &Path, rel: &str, value: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, format!("{value}\n")).unwrap();
}

/// A host as a stock kernel leaves it: 208 KiB core maxima, 6 MiB/4 MiB autotuning maxima, Reno.
fn stock_host(dir: &Path) -> HostRoots {
    let sys = dir.join("proc_sys");
    put(&sys, "net/core/rmem_max", "212992");
    put(&sys, "net/core/wmem_max", "212992");
    put(&sys, "net/ipv4/tcp_rmem", "4096\t131072\t6291456");
    put(&sys, "net/ipv4/tcp_wmem", "4096\t16384\t4194304");
    put(&sys, "net/core/netdev_max_backlog", "1000");
    put(&sys, "net/ipv4/tcp_congestion_control", "reno");
    put(
        &sys,
        "net/ipv4/tcp_available_congestion_control",
        "reno cubic bbr",
    );
    put(&sys, "net/core/default_qdisc", "fq_codel");
    put(&sys, "net/ipv4/tcp_mtu_probing", "0");
    put(&sys, "net/ipv4/tcp_window_scaling", "1");
    put(&sys, "net/ipv4/tcp_sack", "1");
    put(&sys, "net/ipv4/tcp_timestamps", "1");
    let net = dir.join("sys_class_net");
    for (dev, mtu, txq, state, ty) in [
        ("eth0", "1500", "1000", "up", "1"),
        ("eth1", "9000", "1000", "down", "1"),
        ("lo", "65536", "1000", "unknown", "772"),
    ] {
        put(&net, &format!("{dev}/mtu"), mtu);
        put(&net, &format!("{dev}/tx_queue_len"), txq);
        put(&net, &format!("{dev}/operstate"), state);
        put(&net, &format!("{dev}/type"), ty);
    }
    HostRoots {
        proc_sys: sys,
        sys_class_net: net,
    }
}

fn path(rate: f64, rtt_ms: u64) -> PathSpec {
    PathSpec {
        rate_bps: rate,
        rtt: Duration::from_millis(rtt_ms),
        mtu: 1500,
    }
}

#[test]
fn stock_host_falls_short_for_one_gigabit_at_180_ms() {
    let dir = tempfile::tempdir().unwrap();
    let roots = stock_host(dir.path());
    let report = check_host(&path(1e9, 180), &roots, None).unwrap();
    let get = |n: &str| {
        report
            .checks
            .iter()
            .find(|c| c.name == n)
            .unwrap_or_else(|| panic!("{n}"))
    };

    let rmem = get("net.core.rmem_max");
    assert_eq!(rmem.current.as_deref(), Some("212992"));
    assert_eq!(rmem.recommended, "67108864"); // 2 × 22.5 MB → 64 MiB
    assert_eq!(rmem.status, Status::Short);
    assert_eq!(rmem.command, "sysctl -w net.core.rmem_max=67108864");
    let tcp_rmem = get("net.ipv4.tcp_rmem");
    assert_eq!(tcp_rmem.current.as_deref(), Some("4096 131072 6291456"));
    assert_eq!(tcp_rmem.recommended, "4096 131072 67108864");
    assert_eq!(
        tcp_rmem.command,
        "sysctl -w net.ipv4.tcp_rmem='4096 131072 67108864'"
    );
    assert_eq!(get("net.ipv4.tcp_wmem").recommended, "4096 16384 67108864");
    // 1 Gb/s needs neither a longer backlog nor txqueuelen: the stock 1000 is fine.
    assert_eq!(get("net.core.netdev_max_backlog").status, Status::Ok);
    assert_eq!(get("eth0 txqueuelen").status, Status::Ok);
    // Reno needs 2700 s to recover from one loss here; bbr is available.
    let cc = get("net.ipv4.tcp_congestion_control");
    assert_eq!((cc.status, cc.recommended.as_str()), (Status::Short, "bbr"));
    assert!(cc.why.contains("2700 s"), "{}", cc.why);
    assert_eq!(get("net.ipv4.tcp_mtu_probing").status, Status::Short);
    assert_eq!(get("net.ipv4.tcp_sack").status, Status::Ok);
    assert_eq!(get("net.core.default_qdisc").status, Status::Advice);
    let mtu = get("eth0 mtu");
    assert_eq!(mtu.status, Status::Advice);
    // Interfaces that are down and loopback are not checked.
    assert!(report
        .checks
        .iter()
        .all(|c| !c.name.starts_with("eth1") && !c.name.starts_with("lo ")));

    let text = report.to_string();
    assert!(text.contains("22,500,000 bytes"), "{text}");
    assert!(text.contains("15,000 packets"), "{text}");
    assert!(
        text.contains("sysctl -w net.core.wmem_max=67108864"),
        "{text}"
    );
}

#[test]
fn ten_gigabit_needs_txqueuelen_and_backlog() {
    let dir = tempfile::tempdir().unwrap();
    let roots = stock_host(dir.path());
    let report = check_host(&path(10e9, 85), &roots, Some("eth0")).unwrap();
    let get = |n: &str| report.checks.iter().find(|c| c.name == n).unwrap();
    // 10 Gb/s × 85 ms = 106.25 MB; 2 × = 212.5 MB → 256 MiB.
    assert_eq!(
        get("net.core.rmem_max").recommended,
        (256u64 << 20).to_string()
    );
    assert_eq!(get("net.core.netdev_max_backlog").recommended, "30000");
    let txq = get("eth0 txqueuelen");
    assert_eq!(
        (txq.status, txq.recommended.as_str()),
        (Status::Short, "10000")
    );
    assert_eq!(txq.command, "ip link set dev eth0 txqueuelen 10000");
    assert!(check_host(&path(10e9, 85), &roots, Some("nosuch0")).is_err());
}

#[test]
fn apply_writes_what_falls_short_and_reports_before_and_after() {
    let dir = tempfile::tempdir().unwrap();
    let roots = stock_host(dir.path());
    let p = path(10e9, 85);
    let report = check_host(&p, &roots, None).unwrap();
    let applied = apply_fixes(&report, &roots);
    let names: Vec<&str> = applied.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "net.core.rmem_max",
            "net.core.wmem_max",
            "net.ipv4.tcp_rmem",
            "net.ipv4.tcp_wmem",
            "net.core.netdev_max_backlog",
            "net.ipv4.tcp_congestion_control",
            "net.ipv4.tcp_mtu_probing",
            "eth0 txqueuelen",
        ]
    );
    let rmem = &applied[0];
    assert_eq!(rmem.before.as_deref(), Some("212992"));
    assert_eq!(rmem.after.as_ref().unwrap().as_deref(), Some("268435456"));
    assert_eq!(
        std::fs::read_to_string(roots.proc_sys.join("net/ipv4/tcp_wmem")).unwrap(),
        "4096 16384 268435456\n"
    );
    assert_eq!(
        std::fs::read_to_string(roots.sys_class_net.join("eth0/tx_queue_len")).unwrap(),
        "10000\n"
    );
    // MTU and qdisc are advice: untouched.
    assert_eq!(
        std::fs::read_to_string(roots.sys_class_net.join("eth0/mtu")).unwrap(),
        "1500\n"
    );
    // After applying, the same path finds nothing short.
    let again = check_host(&p, &roots, None).unwrap();
    assert_eq!(again.short().count(), 0, "{again}");
}

#[test]
fn a_missing_setting_is_reported_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let roots = stock_host(dir.path());
    std::fs::remove_file(roots.proc_sys.join("net/core/netdev_max_backlog")).unwrap();
    let report = check_host(&path(1e9, 180), &roots, None).unwrap();
    let c = report
        .checks
        .iter()
        .find(|c| c.name == "net.core.netdev_max_backlog")
        .unwrap();
    assert_eq!(c.status, Status::Missing);
    assert_eq!(c.current, None);
}
