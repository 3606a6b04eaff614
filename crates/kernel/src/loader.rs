//! Load, list and unload the congestion controls.
//!
//! A load opens the algorithm's skeleton, writes the parameters into its read-only globals and
//! the registered name into its `tcp_congestion_ops`, loads the programs (the verifier runs
//! here), and registers the ops through a `struct_ops` link. The link is pinned in bpffs, so
//! the congestion control stays registered after the loading process exits:
//!
//! ```text
//! /sys/fs/bpf/longhaul/<name>/link          the struct_ops link: registered while it exists
//! /sys/fs/bpf/longhaul/<name>/params_<alg>  the .rodata map: the parameters the programs use
//! /sys/fs/bpf/longhaul/<name>/repairs       the .bss map: callbacks the kernel skipped, repaired
//! ```
//!
//! Unloading removes the pins. The last reference to the link goes, the kernel unregisters
//! the congestion control (no new socket can select it), and sockets still using it keep their
//! own reference to the ops until they close or switch, so unload is safe with live connections.

use crate::catalog::{Algorithm, ParamValues};
use crate::error::KernelError;
use crate::skel;
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{ErrorKind, Link, MapCore, MapFlags, MapHandle, PrintLevel};
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where longhaul pins its congestion controls.
pub const PIN_ROOT: &str = "/sys/fs/bpf/longhaul";
const BTF_PATH: &str = "/sys/kernel/btf/vmlinux";
const AVAILABLE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";
const DEFAULT_CC: &str = "/proc/sys/net/ipv4/tcp_congestion_control";
/// struct_ops links (`.struct_ops.link`, BPF_LINK_TYPE_STRUCT_OPS) arrived in Linux 6.4.
const MIN_KERNEL: (u32, u32) = (6, 4);
const BPF_FS_MAGIC: i64 = 0xcafe4a11;
/// The pinned .bss map; its first 8 bytes are `lh_repairs`, the programs' only .bss global.
const REPAIRS_PIN: &str = "repairs";
/// TCP_CA_NAME_MAX is 16 bytes including the NUL.
const NAME_MAX: usize = 15;

/// What to load.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The parameters to load the programs with.
    pub params: ParamValues,
    /// The registered congestion-control name; the algorithm's name when `None`.
    pub name: Option<String>,
}

/// A congestion control longhaul has loaded.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The name sockets select it by.
    pub name: String,
    /// Which algorithm's programs.
    pub algorithm: Algorithm,
    /// The parameters the loaded programs use, read back from the kernel.
    pub params: Option<ParamValues>,
    /// Listed in tcp_available_congestion_control.
    pub registered: bool,
    /// Windows the programs found left implausible by a callback the kernel skipped, and
    /// repaired (`lh_repair_if_skipped` in `bpf/include/lh_bpf.h`); `None` when the pinned
    /// programs carry no such counter (a load by an older build).
    pub repairs: Option<u64>,
    /// Where its programs and maps are pinned (under `/sys/fs/bpf/longhaul/`).
    pub pin_dir: PathBuf,
}

impl Loaded {
    /// What `longhaul kernel load` says after loading: the name, parameters and pins, then how
    /// to use it.
    pub fn describe(&self) -> String {
        let params = self
            .params
            .as_ref()
            .map(|p| p.to_string())
            .unwrap_or_else(|| "?".into());
        format!(
            "loaded {} as `{}` ({}), pinned at {}\n\
             use it with: sysctl net.ipv4.tcp_congestion_control={1}  or  setsockopt(TCP_CONGESTION, \"{1}\")",
            self.algorithm,
            self.name,
            if params.is_empty() {
                "no parameters".to_string()
            } else {
                params
            },
            self.pin_dir.display()
        )
    }
}

/// The names in /proc/sys/net/ipv4/tcp_available_congestion_control.
pub fn available() -> Result<Vec<String>, KernelError> {
    let text = std::fs::read_to_string(AVAILABLE).map_err(KernelError::io(AVAILABLE))?;
    Ok(text.split_whitespace().map(str::to_string).collect())
}

/// The system-wide default congestion control (net.ipv4.tcp_congestion_control).
pub fn default_congestion_control() -> Result<String, KernelError> {
    let text = std::fs::read_to_string(DEFAULT_CC).map_err(KernelError::io(DEFAULT_CC))?;
    Ok(text.trim().to_string())
}

/// Checks the kernel can take a BPF congestion control and we may load one.
pub fn check_environment(action: &'static str) -> Result<(), KernelError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(KernelError::NotRoot { action });
    }
    if !Path::new(BTF_PATH).exists() {
        return Err(KernelError::NoBtf {
            path: BTF_PATH.into(),
        });
    }
    let release = nix::sys::utsname::uname()
        .map(|u| u.release().to_string_lossy().into_owned())
        .unwrap_or_default();
    if !kernel_at_least(&release, MIN_KERNEL) {
        return Err(KernelError::UnsupportedKernel {
            release,
            needed: "6.4",
        });
    }
    Ok(())
}

/// True when a release string such as "6.18.44-foo" is at least `major.minor`.
pub fn kernel_at_least(release: &str, (major, minor): (u32, u32)) -> bool {
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<u32>().unwrap_or(0));
    let have = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    have >= (major, minor)
}

/// Loads and registers a congestion control; it stays registered after this process exits.
pub fn load(opts: &LoadOptions) -> Result<Loaded, KernelError> {
    check_environment("loading a congestion control")?;
    let algorithm = opts.params.algorithm;
    let name = opts
        .name
        .clone()
        .unwrap_or_else(|| algorithm.name().to_string());
    if name.len() > NAME_MAX {
        return Err(KernelError::NameTooLong(name));
    }
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic() && b != b'/') {
        return Err(KernelError::BadParam {
            algorithm: algorithm.name(),
            message: format!("`{name}` is not a valid congestion-control name"),
        });
    }
    let pin_dir = Path::new(PIN_ROOT).join(&name);
    if available()?.contains(&name) {
        let owner = if pin_dir.exists() {
            "loaded by longhaul; `longhaul kernel unload` it first".to_string()
        } else {
            "built into the kernel, a module, or another eBPF program".to_string()
        };
        return Err(KernelError::NameTaken { name, owner });
    }
    ensure_bpffs()?;
    if pin_dir.exists() {
        // Pins left behind by a registration that is gone (e.g. removed by hand).
        remove_pins(&pin_dir)?;
    }
    std::fs::create_dir_all(&pin_dir)
        .map_err(KernelError::io(format!("creating {}", pin_dir.display())))?;
    let raw = opts.params.encode();
    let result = match algorithm {
        Algorithm::Fast => load_fast(&name, &raw, &pin_dir),
        Algorithm::Scalable => load_scalable(&name, &raw, &pin_dir),
        Algorithm::HighSpeed => load_highspeed(&name, &raw, &pin_dir),
        Algorithm::Vegas => load_vegas(&name, &raw, &pin_dir),
        Algorithm::Lion => load_lion(&name, &raw, &pin_dir),
    };
    if let Err(e) = result {
        let _ = remove_pins(&pin_dir);
        return Err(e);
    }
    Ok(Loaded {
        registered: available()?.contains(&name),
        params: read_params(algorithm, &pin_dir),
        repairs: read_repairs(&pin_dir),
        name,
        algorithm,
        pin_dir,
    })
}

/// libbpf's messages of the load in progress (the verifier log among them).
static LIBBPF_LOG: Mutex<String> = Mutex::new(String::new());

fn capture_libbpf(_level: PrintLevel, msg: String) {
    if let Ok(mut log) = LIBBPF_LOG.lock() {
        log.push_str(&msg);
    }
}

fn start_capture() {
    if let Ok(mut log) = LIBBPF_LOG.lock() {
        log.clear();
    }
    libbpf_rs::set_print(Some((PrintLevel::Warn, capture_libbpf)));
}

fn captured() -> String {
    LIBBPF_LOG.lock().map(|l| l.clone()).unwrap_or_default()
}

/// A failed `load()`: the verifier's rejection, with its log.
fn verifier_error(e: libbpf_rs::Error) -> KernelError {
    let log = captured();
    let program = log
        .lines()
        .find_map(|l| {
            let start = l.find("prog '")? + 6;
            let end = l[start..].find('\'')? + start;
            Some(l[start..end].to_string())
        })
        .unwrap_or_else(|| "the program".to_string());
    KernelError::Verifier {
        program,
        message: e.to_string(),
        log,
    }
}

fn attach(name: &str, map: &mut libbpf_rs::MapMut<'_>) -> Result<Link, KernelError> {
    map.attach_struct_ops().map_err(|e| {
        if e.kind() == ErrorKind::AlreadyExists {
            KernelError::NameTaken {
                name: name.to_string(),
                owner: "registered meanwhile by another program".to_string(),
            }
        } else {
            KernelError::Register {
                name: name.to_string(),
                message: format!("{e}; {}", captured().trim()),
            }
        }
    })
}

fn set_name(field: &mut [i8; 16], name: &str) {
    *field = [0; 16];
    for (dst, b) in field.iter_mut().zip(name.bytes()) {
        *dst = b as i8;
    }
}

fn pin_all(
    link: &mut Link,
    rodata: &mut libbpf_rs::MapMut<'_>,
    bss: &mut libbpf_rs::MapMut<'_>,
    algorithm: Algorithm,
    dir: &Path,
) -> Result<(), KernelError> {
    let params = dir.join(format!("params_{}", algorithm.name()));
    rodata
        .pin(&params)
        .map_err(KernelError::bpf(format!("pinning {}", params.display())))?;
    let repairs = dir.join(REPAIRS_PIN);
    bss.pin(&repairs)
        .map_err(KernelError::bpf(format!("pinning {}", repairs.display())))?;
    let link_path = dir.join("link");
    link.pin(&link_path)
        .map_err(KernelError::bpf(format!("pinning {}", link_path.display())))?;
    // The pin holds the registration now. Dropping `link` closes our descriptor only: for a
    // real struct_ops link libbpf's detach is close(fd), which leaves a pinned link in place.
    // (Disconnecting instead would leak the descriptor and keep the registration alive for
    // as long as this process runs, so a later unload from the same process could not work.)
    Ok(())
}

macro_rules! loader_fn {
    ($fn_name:ident, $module:ident, $builder:ident, $ops:ident, $ops_mut:ident, $algorithm:expr, $with_params:tt) => {
        fn $fn_name(name: &str, raw: &[u32], dir: &Path) -> Result<(), KernelError> {
            use skel::$module::*;
            start_capture();
            #[allow(unused_mut)]
            let mut storage = MaybeUninit::uninit();
            let mut open = $builder::default()
                .open(&mut storage)
                .map_err(KernelError::bpf("opening the eBPF object"))?;
            loader_fn!(@params $with_params, open, raw);
            set_name(&mut open.struct_ops.$ops_mut().name, name);
            let mut skel = open.load().map_err(verifier_error)?;
            let mut link = attach(name, &mut skel.maps.$ops)?;
            pin_all(
                &mut link,
                &mut skel.maps.rodata,
                &mut skel.maps.bss,
                $algorithm,
                dir,
            )
        }
    };
    (@params true, $open:ident, $raw:ident) => {
        let data = $open
            .maps
            .rodata_data
            .as_deref_mut()
            .expect("the parameter block is in .rodata");
        data.lh_params = params_from_raw($raw);
    };
    (@params false, $open:ident, $raw:ident) => {};
}

fn params_from_raw<T: Copy>(raw: &[u32]) -> T {
    assert_eq!(std::mem::size_of::<T>(), std::mem::size_of_val(raw));
    // SAFETY: every parameter block is a #[repr(C)] struct of u32 fields, as many as `raw`
    // holds (checked above), so any bit pattern is a valid value.
    unsafe { std::ptr::read_unaligned(raw.as_ptr().cast::<T>()) }
}

loader_fn!(
    load_fast,
    fast,
    FastSkelBuilder,
    lh_fast,
    lh_fast_mut,
    Algorithm::Fast,
    true
);
loader_fn!(
    load_scalable,
    scalable,
    ScalableSkelBuilder,
    lh_scalable,
    lh_scalable_mut,
    Algorithm::Scalable,
    true
);
loader_fn!(
    load_vegas,
    vegas,
    VegasSkelBuilder,
    lh_vegas,
    lh_vegas_mut,
    Algorithm::Vegas,
    true
);
loader_fn!(
    load_lion,
    lion,
    LionSkelBuilder,
    lh_lion,
    lh_lion_mut,
    Algorithm::Lion,
    true
);
loader_fn!(
    load_highspeed,
    highspeed,
    HighspeedSkelBuilder,
    lh_highspeed,
    lh_highspeed_mut,
    Algorithm::HighSpeed,
    true
);

/// Loads a program the verifier must refuse (it writes a field BPF congestion controls may
/// not write), so that tests can check a rejection reaches the user as
/// [`KernelError::Verifier`] with the verifier's log. Never registers anything.
#[doc(hidden)]
pub fn load_rejected_program() -> Result<(), KernelError> {
    check_environment("loading a congestion control")?;
    use skel::reject::*;
    start_capture();
    let mut storage = MaybeUninit::uninit();
    let open = RejectSkelBuilder::default()
        .open(&mut storage)
        .map_err(KernelError::bpf("opening the eBPF object"))?;
    let _skel = open.load().map_err(verifier_error)?;
    Err(KernelError::Register {
        name: "lh_reject".into(),
        message: "the verifier accepted a program it must refuse".into(),
    })
}

/// The congestion controls longhaul has pinned.
pub fn list() -> Result<Vec<Loaded>, KernelError> {
    let root = Path::new(PIN_ROOT);
    if !root.exists() {
        return Ok(Vec::new());
    }
    let available = available()?;
    let mut out = Vec::new();
    let entries = std::fs::read_dir(root).map_err(KernelError::io(format!(
        "reading {PIN_ROOT} (listing needs root)"
    )))?;
    for entry in entries.flatten() {
        let dir = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(algorithm) = algorithm_of(&dir) else {
            continue;
        };
        out.push(Loaded {
            registered: available.contains(&name) && dir.join("link").exists(),
            params: read_params(algorithm, &dir),
            repairs: read_repairs(&dir),
            name,
            algorithm,
            pin_dir: dir,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn algorithm_of(dir: &Path) -> Option<Algorithm> {
    std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
        let file = e.file_name().to_string_lossy().into_owned();
        Algorithm::parse(file.strip_prefix("params_")?).ok()
    })
}

/// The repair counter of a loaded program, from its pinned .bss map.
fn read_repairs(dir: &Path) -> Option<u64> {
    let map = MapHandle::from_pinned_path(dir.join(REPAIRS_PIN)).ok()?;
    let value = map.lookup(&0u32.to_ne_bytes(), MapFlags::ANY).ok()??;
    Some(u64::from_ne_bytes(value.get(..8)?.try_into().ok()?))
}

/// The parameter block of a loaded program, from its pinned .rodata map.
fn read_params(algorithm: Algorithm, dir: &Path) -> Option<ParamValues> {
    let map = MapHandle::from_pinned_path(dir.join(format!("params_{}", algorithm.name()))).ok()?;
    let value = map.lookup(&0u32.to_ne_bytes(), MapFlags::ANY).ok()??;
    let raw: Vec<u32> = value
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    ParamValues::decode(algorithm, &raw)
}

/// Unregisters a congestion control longhaul loaded. Sockets still using it keep working.
pub fn unload(name: &str) -> Result<(), KernelError> {
    check_environment("unloading a congestion control")?;
    let dir = Path::new(PIN_ROOT).join(name);
    if name.is_empty() || name.contains('/') || !dir.is_dir() {
        return Err(KernelError::NotLoaded(name.to_string()));
    }
    if default_congestion_control()? == name {
        return Err(KernelError::Register {
            name: name.to_string(),
            message: "it is the system default (net.ipv4.tcp_congestion_control); set another \
                      default first, e.g. `sysctl net.ipv4.tcp_congestion_control=cubic`"
                .to_string(),
        });
    }
    remove_pins(&dir)?;
    // The kernel unregisters when the link's last reference is released, which can lag the
    // unlink by an RCU grace period.
    let deadline = Instant::now() + Duration::from_secs(5);
    while available()?.iter().any(|n| n == name) {
        if Instant::now() > deadline {
            return Err(KernelError::Register {
                name: name.to_string(),
                message: "pins removed but the kernel still lists it after 5 s (another \
                          process may hold its link)"
                    .to_string(),
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

fn remove_pins(dir: &Path) -> Result<(), KernelError> {
    // The link first: that is what unregisters; the maps go with their last reference.
    let link = dir.join("link");
    if link.exists() {
        std::fs::remove_file(&link)
            .map_err(KernelError::io(format!("removing {}", link.display())))?;
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            std::fs::remove_file(&p)
                .map_err(KernelError::io(format!("removing {}", p.display())))?;
        }
    }
    std::fs::remove_dir(dir).map_err(KernelError::io(format!("removing {}", dir.display())))
}

/// Mounts bpffs on /sys/fs/bpf when nothing is mounted there yet.
#[allow(clippy::unnecessary_cast)] // f_type is i64 on x86-64 but narrower elsewhere
fn ensure_bpffs() -> Result<(), KernelError> {
    let base = Path::new("/sys/fs/bpf");
    let is_bpffs = nix::sys::statfs::statfs(base)
        .map(|s| s.filesystem_type().0 as i64 == BPF_FS_MAGIC)
        .unwrap_or(false);
    if is_bpffs {
        return Ok(());
    }
    std::fs::create_dir_all(base).map_err(KernelError::io("creating /sys/fs/bpf"))?;
    nix::mount::mount(
        Some("bpf"),
        base,
        Some("bpf"),
        nix::mount::MsFlags::empty(),
        None::<&str>,
    )
    .map_err(|e| KernelError::Io {
        context: "mounting bpffs on /sys/fs/bpf".to_string(),
        source: e.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_versions_compare_by_major_then_minor() {
        assert!(kernel_at_least("6.18.44-fc-v669", (6, 4)));
        assert!(kernel_at_least("6.4.0", (6, 4)));
        assert!(!kernel_at_least("6.3.12-arch1", (6, 4)));
        assert!(!kernel_at_least("5.15.0-91-generic", (6, 4)));
        assert!(kernel_at_least("7.0-rc1", (6, 4)));
        assert!(!kernel_at_least("", (6, 4)));
    }

    #[test]
    fn names_are_written_nul_padded() {
        let mut field = [1i8; 16];
        set_name(&mut field, "lh_fast");
        assert_eq!(&field[..8], &[108, 104, 95, 102, 97, 115, 116, 0]);
        assert!(field[8..].iter().all(|&b| b == 0));
    }
}
