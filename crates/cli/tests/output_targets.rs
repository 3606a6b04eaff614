//! Every command that writes a JSON file, pointed at every kind of path: a character device
//! (made with mknod in a temporary directory, as root), a FIFO with a reader, a symlink to a
//! file, `/dev/stdout`, a process substitution (`>(…)`), and a regular file beside a user's
//! `PATH.tmp`. Afterwards the device is still a device, the FIFO a FIFO, the link a link, and
//! the JSON arrived where it was sent. Report directories get the same rules for the files in
//! them.

use nix::sys::stat::{mknod, Mode, SFlag};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const SCENARIO: &str = r#"
duration = "1s"
[[links]]
name = "l"
rate = "10mbit"
delay = "10ms"
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "reno"
"#;

/// True when the test may run; without root it says it is skipped (and fails under CI=true).
fn root_or_skip(test: &str) -> bool {
    longhaul_testenv::root_or_skip(test, "needs root (mknod, namespaces)")
}

fn scenario(dir: &Path) -> PathBuf {
    let path = dir.join("s.toml");
    std::fs::write(&path, SCENARIO).unwrap();
    path
}

/// `longhaul` with `args`, `{OUT}` replaced by `out`, standard output captured.
fn longhaul(args: &[String], out: &str) -> Output {
    let args: Vec<String> = args.iter().map(|a| a.replace("{OUT}", out)).collect();
    let o = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args(&args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn json(bytes: &[u8], what: &str) -> serde_json::Value {
    serde_json::from_slice(bytes).unwrap_or_else(|e| {
        panic!(
            "{what}: not JSON alone ({e}): {}",
            String::from_utf8_lossy(bytes)
        )
    })
}

/// Point `args`' `{OUT}` at each kind of path in turn, checking each afterwards.
fn every_target(args: &[&str], device: bool) {
    let t = tempfile::tempdir().unwrap();
    let s = scenario(t.path());
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{SCENARIO}", s.to_str().unwrap()))
        .collect();
    let what = args.join(" ");

    // A regular file, with a file of the user's named like the old temporary file beside it.
    let file = t.path().join("out.json");
    let theirs = t.path().join("out.json.tmp");
    std::fs::write(&theirs, "mine").unwrap();
    longhaul(&args, file.to_str().unwrap());
    json(&std::fs::read(&file).unwrap(), &what);
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "mine", "{what}");

    // A symlink to a file: written through, still a link.
    let target = t.path().join("target.json");
    std::fs::write(&target, "old").unwrap();
    let link = t.path().join("link.json");
    std::os::unix::fs::symlink("target.json", &link).unwrap();
    longhaul(&args, link.to_str().unwrap());
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    json(&std::fs::read(&target).unwrap(), &what);

    // A FIFO with a reader.
    let fifo = t.path().join("fifo");
    nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    longhaul(&args, fifo.to_str().unwrap());
    // Checked before joining: had the FIFO been renamed over, its reader would wait forever.
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    json(&reader.join().unwrap(), &what);

    // /dev/stdout: standard output holds the JSON alone, as for `-`.
    let o = longhaul(&args, "/dev/stdout");
    json(&o.stdout, &what);

    // A process substitution: bash passes /dev/fd/N, a pipe to `cat`.
    let got = t.path().join("substituted.json");
    let words: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_longhaul").to_string())
        .chain(args.iter().cloned())
        .map(|a| match a.as_str() {
            "{OUT}" => format!(
                ">(cat > {})",
                shlex::try_quote(got.to_str().unwrap()).unwrap()
            ),
            _ => shlex::try_quote(&a).unwrap().into_owned(),
        })
        .collect();
    let line = format!("{}; status=$?; wait $!; exit $status", words.join(" "));
    let o = Command::new("bash")
        .args(["-c", &line])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{line}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    json(&std::fs::read(&got).unwrap(), &what);

    // A character device (the null device's numbers, made here so a mistake harms nothing).
    if device {
        let dev = t.path().join("nulldev");
        mknod(
            &dev,
            SFlag::S_IFCHR,
            Mode::from_bits_truncate(0o666),
            nix::sys::stat::makedev(1, 3),
        )
        .unwrap();
        longhaul(&args, dev.to_str().unwrap());
        let meta = std::fs::symlink_metadata(&dev).unwrap();
        assert!(meta.file_type().is_char_device(), "{what}: {meta:?}");
    }
    let mut left: Vec<String> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    left.sort();
    assert!(left.is_empty(), "{what}: temporary files left: {left:?}");
}

#[test]
fn sim_json_goes_where_it_is_pointed() {
    every_target(
        &["sim", "{SCENARIO}", "--json", "{OUT}", "-q"],
        root_or_skip("sim_json_goes_where_it_is_pointed"),
    );
}

#[test]
fn reproduce_json_goes_where_it_is_pointed() {
    every_target(
        &["reproduce", "lion-contest", "--json", "{OUT}"],
        root_or_skip("reproduce_json_goes_where_it_is_pointed"),
    );
}

/// One emulator at a time: the emulated paths share the machine's two cores.
static EMULATOR: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn emu_shell_json_goes_where_it_is_pointed() {
    if !root_or_skip("emu_shell_json_goes_where_it_is_pointed") {
        return;
    }
    let _one = EMULATOR.lock().unwrap_or_else(|e| e.into_inner());
    every_target(
        &[
            "emu", "shell", "--delay", "1ms", "--rate", "100mbit", "--json", "{OUT}", "--", "true",
        ],
        true,
    );
}

#[cfg(feature = "kernel")]
#[test]
fn lab_json_goes_where_it_is_pointed() {
    if !root_or_skip("lab_json_goes_where_it_is_pointed") {
        return;
    }
    let _one = EMULATOR.lock().unwrap_or_else(|e| e.into_inner());
    let short = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/lab/short.toml"
    );
    every_target(
        &[
            "lab",
            short,
            "--duration",
            "1s",
            "--variant",
            "cubic",
            "--json",
            "{OUT}",
            "-q",
        ],
        true,
    );
}

#[test]
fn report_files_are_written_through_links_and_beside_users_files() {
    let t = tempfile::tempdir().unwrap();
    let s = scenario(t.path());
    let report = t.path().join("report");
    std::fs::create_dir(&report).unwrap();
    let elsewhere = t.path().join("kept-summary.json");
    std::os::unix::fs::symlink(&elsewhere, report.join("summary.json")).unwrap();
    std::fs::write(report.join("report.html.tmp"), "mine").unwrap();
    let r = report.to_str().unwrap().to_string();
    longhaul(
        &[
            "sim".into(),
            s.to_str().unwrap().into(),
            "--report".into(),
            r.clone(),
            "-q".into(),
        ],
        "",
    );
    assert!(std::fs::symlink_metadata(report.join("summary.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    json(&std::fs::read(&elsewhere).unwrap(), "sim --report");
    assert_eq!(
        std::fs::read_to_string(report.join("report.html.tmp")).unwrap(),
        "mine"
    );
    // compare writes its overlay the same way.
    let a = t.path().join("a.json");
    longhaul(
        &[
            "sim".into(),
            s.to_str().unwrap().into(),
            "--json".into(),
            a.to_str().unwrap().into(),
            "-q".into(),
        ],
        "",
    );
    let overlay = t.path().join("overlay");
    std::fs::create_dir(&overlay).unwrap();
    let page = t.path().join("kept-overlay.html");
    std::os::unix::fs::symlink(&page, overlay.join("report.html")).unwrap();
    longhaul(
        &[
            "compare".into(),
            a.to_str().unwrap().into(),
            a.to_str().unwrap().into(),
            "--report".into(),
            overlay.to_str().unwrap().into(),
        ],
        "",
    );
    assert!(std::fs::read_to_string(&page).unwrap().contains("<html"));
    assert!(std::fs::symlink_metadata(overlay.join("report.html"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn an_unwritable_output_is_refused_before_the_run() {
    let t = tempfile::tempdir().unwrap();
    let s = scenario(t.path());
    let missing = t.path().join("no/such/dir/out.json");
    let o = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args([
            "sim",
            s.to_str().unwrap(),
            "--json",
            missing.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--json") && err.contains("does not exist: create it"),
        "{err}"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args([
            "sim",
            s.to_str().unwrap(),
            "--json",
            t.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is a directory"), "{err}");
}
