//! A receiving disk slower than the network. The receiver's threads run in a cgroup (v1
//! `blkio`) that throttles their writes to the disk the test directory is on. The bytes waiting
//! for that disk count against the receive window, so the sender is held back while the
//! connection's buffer stays empty, and the file's bytes still arrive straight in the pieces
//! the writer takes (`Received::in_place`) rather than through that buffer, copied twice. A
//! file's last bytes still count once its end has arrived, while they wait for the disk, so a
//! tree of files does not pile up files being written behind a slow disk.
//! Needs root (a cgroup): says it was skipped otherwise, and fails under `CI=true`.

use longhaul_cc::CcSpec;
use longhaul_net::admission::Limits;
use longhaul_net::recv::{Event, Received, Receiver, RecvOptions};
use longhaul_net::send::{send_paths, Outcome, SendOptions, SendReport};
use longhaul_proto::Config;
use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const NAME: &str = "a_disk_slower_than_the_network_holds_the_sender_back_and_the_bytes_still_land";
/// Where cgroup v1's `blkio` controller is mounted.
const BLKIO: &str = "/sys/fs/cgroup/blkio";
/// The receiver's disk, throttled: bytes per second.
const DISK_RATE: u64 = 32 << 20;
/// The receive window: a sixth of the file, so that a sender the window did not hold back
/// would be far ahead of the disk.
const WINDOW: u64 = 8 << 20;
/// Bytes sent in each case: one file, or a tree of files of [`SMALL`] bytes.
const FILE: usize = 48 << 20;
const SMALL: usize = 4 << 20;

/// The whole disk ("major:minor") holding `dir`, or `None` when no block device does (tmpfs).
fn disk_of(dir: &Path) -> Option<String> {
    let dev = std::fs::metadata(dir).ok()?.dev();
    let sys = PathBuf::from(format!(
        "/sys/dev/block/{}:{}",
        libc::major(dev),
        libc::minor(dev)
    ));
    // A partition's own directory sits in its disk's.
    let dev_file = if sys.join("partition").exists() {
        sys.join("../dev")
    } else {
        sys.join("dev")
    };
    Some(std::fs::read_to_string(dev_file).ok()?.trim().to_string())
}

/// A `blkio` cgroup whose writes to one disk are throttled; removed when dropped.
struct Throttle {
    dir: PathBuf,
}

impl Throttle {
    fn new(disk: &str, bytes_per_second: u64) -> Throttle {
        let dir = Path::new(BLKIO).join(format!("longhaul-slow-disk-{}", std::process::id()));
        std::fs::create_dir(&dir).unwrap();
        let t = Throttle { dir };
        std::fs::write(
            t.dir.join("blkio.throttle.write_bps_device"),
            format!("{disk} {bytes_per_second}"),
        )
        .unwrap();
        t
    }

    /// Move the calling thread into `cgroup` (a v1 `tasks` file takes threads): the threads
    /// it starts from then on are in it too.
    fn move_here(cgroup: &Path) {
        // SAFETY: gettid has no preconditions and cannot fail.
        let tid = unsafe { libc::gettid() };
        std::fs::write(cgroup.join("tasks"), tid.to_string()).unwrap();
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        // The receiver's threads have ended; the kernel lets go of them shortly after.
        for _ in 0..100 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn config() -> Config {
    let mut c = Config::new(CcSpec::default_for("fast").unwrap());
    c.recv_window = WINDOW;
    c.send_buffer = WINDOW;
    c.idle_timeout = Some(Duration::from_secs(10));
    // 64 KiB datagrams from the start, each read alone: the ones that can land in a piece.
    c.mss = c.mss_for(65_535);
    c
}

/// Threads of this process now named `name`.
fn threads_named(name: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|tasks| {
            tasks
                .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
                .filter(|comm| comm.trim() == name)
                .count()
        })
        .unwrap_or(0)
}

/// What a transfer into the throttled disk did.
struct Outcomes {
    report: SendReport,
    received: Received,
    took: Duration,
    /// The most files being written at once (their writing threads).
    writers: usize,
}

/// Send `paths` to a receiver whose threads are in `cgroup`, into `dst`.
fn send_to_throttled(cgroup: &Path, dst: &Path, paths: &[PathBuf]) -> Outcomes {
    let opts = RecvOptions {
        config: config(),
        dir: dst.to_path_buf(),
        overwrite: false,
        discard: false,
        max_size: 1 << 40,
        limits: Limits::default(),
        offload: true,
        recv_thread: Some(false),
        sender_name: None,
        service: None,
        transfers: true,
    };
    let mut r = Receiver::bind("127.0.0.1:0".parse().unwrap(), opts).unwrap();
    let addr = r.local_addr();
    let cgroup = cgroup.to_path_buf();
    let rx = std::thread::spawn(move || {
        Throttle::move_here(&cgroup);
        let mut got = Vec::new();
        r.serve(&AtomicBool::new(false), Some(1), |e| {
            if let Event::Session(t) = e {
                got.push(t.clone())
            }
        })
        .unwrap();
        drop(r);
        Throttle::move_here(Path::new(BLKIO));
        got.remove(0)
    });
    let (stop, writers) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicUsize::new(0)),
    );
    let watch = {
        let (stop, writers) = (Arc::clone(&stop), Arc::clone(&writers));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                writers.fetch_max(threads_named("longhaul-write"), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let send = SendOptions {
        config: config(),
        name: None,
        follow_links: false,
        resume: true,
        rate_limit: None,
        interval: Duration::from_millis(100),
        connect_timeout: Duration::from_secs(5),
        offload: true,
        send_thread: Some(false),
        on_peer_key: None,
    };
    let start = Instant::now();
    let report = send_paths(paths, addr, send, &AtomicBool::new(false), |_| {}).unwrap();
    let took = start.elapsed();
    let received = rx.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    watch.join().unwrap();
    for f in &report.files {
        // A directory is made, not sent: skipped.
        let ok = matches!(f.outcome, Outcome::Stored(_) | Outcome::Skipped(_));
        assert!(ok, "{}: {:?}", f.path, f.outcome);
    }
    Outcomes {
        report,
        received,
        took,
        writers: writers.load(Ordering::Relaxed),
    }
}

fn random_file(path: &Path, len: usize, seed: u64) -> Vec<u8> {
    let mut data = vec![0u8; len];
    SmallRng::seed_from_u64(seed).fill_bytes(&mut data);
    std::fs::write(path, &data).unwrap();
    data
}

#[test]
fn a_disk_slower_than_the_network_holds_the_sender_back_and_the_bytes_still_land() {
    if !longhaul_testenv::root_or_skip(NAME, "needs root (a cgroup that throttles the disk)") {
        return;
    }
    let dst = tempfile::tempdir().unwrap();
    let disk = disk_of(dst.path());
    let blkio = Path::new(BLKIO)
        .join("blkio.throttle.write_bps_device")
        .exists();
    let needs = "needs the temporary directory on a block device and cgroup v1's blkio \
                 controller at /sys/fs/cgroup/blkio";
    if !longhaul_testenv::require(NAME, disk.is_some() && blkio, needs) {
        return;
    }
    let throttle = Throttle::new(&disk.unwrap(), DISK_RATE);
    // The throttle holds: a transfer takes at least most of the time the disk's rate allows
    // (the cgroup lets a first burst through).
    let floor = Duration::from_secs_f64(0.8 * FILE as f64 / DISK_RATE as f64);

    // One file: its bytes land in place.
    let src = tempfile::tempdir().unwrap();
    let path = src.path().join("slow.bin");
    let data = random_file(&path, FILE, 5);
    let one = send_to_throttled(&throttle.dir, dst.path(), &[path]);
    assert!(
        std::fs::read(dst.path().join("slow.bin")).unwrap() == data,
        "the file differs"
    );
    assert!(
        one.took >= floor,
        "the disk was not slowed: {FILE} bytes stored in {:?}",
        one.took
    );
    // The bytes waiting for the disk closed the window: the connection's buffer stayed empty,
    // and the file's bytes landed in its pieces. With the window blind to them the pages
    // take the backlog, and every byte after its first goes through them.
    let in_place = one.received.in_place;
    assert!(
        in_place * 100 >= FILE as u64 * 80,
        "{in_place} of {FILE} bytes received in place (in {:?})",
        one.took
    );

    // A tree of files, each half the window, through the same disk: every file arrives whole,
    // and the files whose end has arrived count against the window until their bytes are on
    // the disk, so few files are being written at once: the two the window holds, one
    // beginning, one being placed, and two for the disk taking several files' pieces in turn
    // (4 measured). Were their bytes let go at their end, all twelve were written at once.
    let tree = src.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    let files: Vec<Vec<u8>> = (0..FILE / SMALL)
        .map(|i| random_file(&tree.join(format!("f{i:02}")), SMALL, 100 + i as u64))
        .collect();
    let many = send_to_throttled(&throttle.dir, dst.path(), &[tree]);
    drop(throttle);
    for (i, data) in files.iter().enumerate() {
        let got = std::fs::read(dst.path().join(format!("tree/f{i:02}"))).unwrap();
        assert!(got == *data, "file {i} differs");
    }
    let stored = many.report.files.iter();
    let stored = stored.filter(|f| matches!(f.outcome, Outcome::Stored(_)));
    assert_eq!(stored.count(), files.len());
    assert!(
        many.took >= floor,
        "the disk was not slowed: {:?}",
        many.took
    );
    let most = (WINDOW as usize / SMALL) + 4;
    assert!(
        many.writers <= most,
        "{} files were written at once (at most {most} expected)",
        many.writers
    );
}
