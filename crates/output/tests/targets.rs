//! Every kind of path an output can name, written through `longhaul_output::write`: what is
//! there afterwards, and what happens when the write cannot be done. Tests that need root (a
//! device made with mknod, a read-only or full tmpfs) say they were skipped without it, and fail
//! under `CI=true`.

use longhaul_output::{check, create_dir, create_new, resolve, write, Target};
use nix::sys::stat::{mknod, Mode, SFlag};
use std::fs;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;

/// True when the test may run; without root it says it is skipped (and fails under CI=true).
fn require_root(test: &str) -> bool {
    longhaul_testenv::root_or_skip(test, "needs root (mknod and mount)")
}

/// The names in `dir`, sorted: what a write left behind.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A tmpfs mounted on a directory for one test, unmounted when dropped.
struct Tmpfs<'a>(&'a Path);

impl<'a> Tmpfs<'a> {
    fn mount(dir: &'a Path, flags: nix::mount::MsFlags, size: &str) -> Tmpfs<'a> {
        nix::mount::mount(
            Some("tmpfs"),
            dir,
            Some("tmpfs"),
            flags,
            Some(format!("size={size},mode=0755").as_str()),
        )
        .expect("mount a tmpfs");
        Tmpfs(dir)
    }
}

impl Drop for Tmpfs<'_> {
    fn drop(&mut self) {
        let _ = nix::mount::umount2(self.0, nix::mount::MntFlags::MNT_DETACH);
    }
}

#[test]
fn a_new_file_appears_whole_and_nothing_else_is_left() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("out.json");
    check(&out).unwrap();
    assert!(names(t.path()).is_empty(), "check leaves nothing behind");
    write(&out, b"{\"a\": 1}\n").unwrap();
    assert_eq!(fs::read(&out).unwrap(), b"{\"a\": 1}\n");
    assert_eq!(names(t.path()), ["out.json"]);
    let mode = fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    let umask = nix::sys::stat::umask(Mode::empty());
    nix::sys::stat::umask(umask);
    assert_eq!(
        mode,
        0o666 & !umask.bits(),
        "a new file gets 0666 less the umask"
    );
}

#[test]
fn replacing_a_file_keeps_its_mode_and_a_users_tmp_file() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("out.json");
    fs::write(&out, "old").unwrap();
    fs::set_permissions(&out, fs::Permissions::from_mode(0o640)).unwrap();
    // A file of the user's that the old `PATH.tmp` scheme clobbered.
    let theirs = t.path().join("out.json.tmp");
    fs::write(&theirs, "mine").unwrap();
    write(&out, b"new").unwrap();
    assert_eq!(fs::read_to_string(&out).unwrap(), "new");
    assert_eq!(fs::read_to_string(&theirs).unwrap(), "mine");
    assert_eq!(
        fs::metadata(&out).unwrap().permissions().mode() & 0o7777,
        0o640
    );
    assert_eq!(names(t.path()), ["out.json", "out.json.tmp"]);
}

#[test]
fn a_character_device_is_written_in_place_and_stays_a_device() {
    if !require_root("a_character_device_is_written_in_place_and_stays_a_device") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let null = t.path().join("nulldev");
    // The same device as /dev/null (major 1, minor 3), made where a mistake harms nothing.
    mknod(
        &null,
        SFlag::S_IFCHR,
        Mode::from_bits_truncate(0o666),
        nix::sys::stat::makedev(1, 3),
    )
    .unwrap();
    assert_eq!(
        resolve(&null).unwrap(),
        Target::InPlace {
            path: null.clone(),
            append: false
        }
    );
    check(&null).unwrap();
    write(&null, b"{\"discarded\": true}\n").unwrap();
    let meta = fs::symlink_metadata(&null).unwrap();
    assert!(meta.file_type().is_char_device(), "{meta:?}");
    assert_eq!(fs::read(&null).unwrap(), b"", "still the null device");
    assert_eq!(names(t.path()), ["nulldev"]);
    // A link to it is followed to the device, which stays a device too.
    let link = t.path().join("link");
    std::os::unix::fs::symlink(&null, &link).unwrap();
    write(&link, b"x").unwrap();
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(fs::symlink_metadata(&null)
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn a_fifo_is_written_in_place_for_its_reader() {
    let t = tempfile::tempdir().unwrap();
    let fifo = t.path().join("fifo");
    nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).unwrap();
    // The check must not open it: opening a FIFO for writing waits for a reader.
    check(&fifo).unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read(&fifo).unwrap())
    };
    let body: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect();
    write(&fifo, &body).unwrap();
    // Checked before joining: had the FIFO been renamed over, its reader would wait forever.
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(reader.join().unwrap(), body, "the reader got every byte");
    assert_eq!(names(t.path()), ["fifo"]);
}

#[test]
fn a_symlink_is_written_through_and_stays_a_link() {
    let t = tempfile::tempdir().unwrap();
    fs::create_dir(t.path().join("data")).unwrap();
    let file = t.path().join("data/result.json");
    fs::write(&file, "old").unwrap();
    // A relative link to a relative link to the file.
    let inner = t.path().join("data/latest");
    std::os::unix::fs::symlink("result.json", &inner).unwrap();
    let outer = t.path().join("out.json");
    std::os::unix::fs::symlink("data/latest", &outer).unwrap();
    write(&outer, b"new").unwrap();
    assert_eq!(fs::read_to_string(&file).unwrap(), "new");
    for link in [&outer, &inner] {
        assert!(fs::symlink_metadata(link).unwrap().file_type().is_symlink());
    }
    assert_eq!(names(&t.path().join("data")), ["latest", "result.json"]);
    // A dangling link creates what it points to.
    let dangling = t.path().join("next.json");
    std::os::unix::fs::symlink("data/next-target.json", &dangling).unwrap();
    write(&dangling, b"made").unwrap();
    assert_eq!(
        fs::read_to_string(t.path().join("data/next-target.json")).unwrap(),
        "made"
    );
    assert!(fs::symlink_metadata(&dangling)
        .unwrap()
        .file_type()
        .is_symlink());
    // A loop of links is refused, not followed forever.
    let a = t.path().join("a");
    std::os::unix::fs::symlink("b", &a).unwrap();
    std::os::unix::fs::symlink("a", t.path().join("b")).unwrap();
    let e = write(&a, b"x").unwrap_err();
    assert!(e.to_string().contains("symbolic links"), "{e}");
}

#[test]
fn a_descriptor_is_written_in_place() {
    // What `>(jq .)` passes: /dev/fd/N naming a pipe.
    let (r, w) = nix::unistd::pipe().unwrap();
    let path = format!("/dev/fd/{}", w.as_raw_fd());
    assert_eq!(
        resolve(Path::new(&path)).unwrap(),
        Target::InPlace {
            path: path.clone().into(),
            append: false
        }
    );
    check(Path::new(&path)).unwrap();
    write(Path::new(&path), b"through the pipe\n").unwrap();
    drop(w);
    let mut got = String::new();
    fs::File::from(r).read_to_string(&mut got).unwrap();
    assert_eq!(got, "through the pipe\n");

    // A regular file behind a descriptor (`3>>log`) is appended to, not replaced.
    let t = tempfile::tempdir().unwrap();
    let log = t.path().join("log");
    fs::write(&log, "before\n").unwrap();
    let held = fs::OpenOptions::new().append(true).open(&log).unwrap();
    let path = format!("/proc/self/fd/{}", held.as_raw_fd());
    write(Path::new(&path), b"after\n").unwrap();
    assert_eq!(fs::read_to_string(&log).unwrap(), "before\nafter\n");
    assert_eq!(names(t.path()), ["log"]);
}

#[test]
fn a_directory_and_a_missing_directory_are_refused_clearly() {
    let t = tempfile::tempdir().unwrap();
    let e = write(t.path(), b"x").unwrap_err();
    assert!(e.to_string().contains("is a directory"), "{e}");
    let missing = t.path().join("no/such/dir/out.json");
    let e = check(&missing).unwrap_err();
    assert!(e.to_string().contains("does not exist: create it"), "{e}");
    assert!(write(&missing, b"x").is_err());
    create_dir(&t.path().join("made/deep")).unwrap();
    assert!(names(&t.path().join("made/deep")).is_empty());
}

#[test]
fn a_read_only_directory_is_refused_and_nothing_is_left() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("ro");
    fs::create_dir(&dir).unwrap();
    // Root ignores permission bits, so root gets a read-only file system instead.
    let _mounted = if longhaul_testenv::is_root() {
        Some(Tmpfs::mount(&dir, nix::mount::MsFlags::MS_RDONLY, "64k"))
    } else {
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();
        None
    };
    let out = dir.join("out.json");
    let e = check(&out).unwrap_err();
    assert!(
        e.to_string().contains("choose a place you may write to"),
        "{e}"
    );
    let e = write(&out, b"x").unwrap_err();
    assert!(e.to_string().contains(&out.display().to_string()), "{e}");
    assert!(names(&dir).is_empty());
    let e = create_dir(&dir.join("sub")).unwrap_err();
    assert!(e.to_string().contains("choose a place"), "{e}");
    if !longhaul_testenv::is_root() {
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn a_full_file_system_leaves_the_old_file_intact() {
    if !require_root("a_full_file_system_leaves_the_old_file_intact") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let _mounted = Tmpfs::mount(t.path(), nix::mount::MsFlags::empty(), "64k");
    let out = t.path().join("summary.json");
    write(&out, b"the good result").unwrap();
    let big = vec![b'x'; 1 << 20];
    let e = write(&out, &big).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::StorageFull, "{e}");
    assert!(e.to_string().contains("free some space"), "{e}");
    assert_eq!(fs::read_to_string(&out).unwrap(), "the good result");
    assert_eq!(names(t.path()), ["summary.json"], "no temporary file left");
}

#[test]
fn of_many_creators_exactly_one_creates() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("stamp.json");
    let created: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let path = &path;
                s.spawn(move || create_new(path, format!("{i}").as_bytes()).unwrap())
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap() as usize)
            .sum()
    });
    assert_eq!(created, 1);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.parse::<u32>().unwrap() < 8);
    assert_eq!(names(t.path()), ["stamp.json"]);
}
