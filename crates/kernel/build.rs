//! Builds the eBPF congestion controls and the native copy of their arithmetic.
//!
//! 1. `vmlinux.h` is generated from the build machine's kernel BTF with bpftool (or taken from
//!    `LONGHAUL_VMLINUX_H`), so the CO-RE programs match the kernel they will run on.
//! 2. Each `src/bpf/<algorithm>.bpf.c` is compiled with clang (`-target bpf -O2 -g -mcpu=v3`)
//!    and a libbpf-rs skeleton is generated for it.
//! 3. The pure arithmetic headers are compiled natively into a static library for the tests.
//!
//! Missing tools are an error, never a silent skip: the crate is useless without its programs.

use libbpf_cargo::SkeletonBuilder;
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The algorithms, plus `reject`: a program the verifier must refuse, for the error-path test.
const ALGORITHMS: &[&str] = &["fast", "scalable", "highspeed", "vegas", "lion", "reject"];
const SETUP_HINT: &str = "install the eBPF toolchain with scripts/setup.sh \
    (Debian packages clang, llvm, bpftool, libbpf-dev, libelf-dev, zlib1g-dev, pkg-config)";

fn main() {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let bpf_dir = manifest.join("src/bpf");
    let include = bpf_dir.join("include");
    let gen_include = out.join("include");
    std::fs::create_dir_all(&gen_include).expect("create OUT_DIR/include");

    println!("cargo:rerun-if-env-changed=LONGHAUL_VMLINUX_H");
    println!("cargo:rerun-if-env-changed=CLANG");
    println!("cargo:rerun-if-env-changed=BPFTOOL");
    println!("cargo:rerun-if-changed=src/bpf");
    println!("cargo:rerun-if-changed=src/native");

    let clang = find_tool("CLANG", "clang");
    write_vmlinux_h(&gen_include.join("vmlinux.h"));

    for name in ALGORITHMS {
        let src = bpf_dir.join(format!("{name}.bpf.c"));
        let skel = out.join(format!("{name}.skel.rs"));
        let result = SkeletonBuilder::new()
            .source(&src)
            .obj(out.join(format!("{name}.bpf.o")))
            .clang(&clang)
            .clang_args([
                "-mcpu=v3".to_string(),
                "-Wall".to_string(),
                format!("-I{}", gen_include.display()),
                format!("-I{}", include.display()),
            ])
            .build_and_generate(&skel);
        if let Err(e) = result {
            panic!("compiling {}: {e:#}", src.display());
        }
    }

    cc::Build::new()
        .file(manifest.join("src/native/lh_native.c"))
        .include(&include)
        .warnings(true)
        .extra_warnings(true)
        .flag_if_supported("-Wno-unused-function")
        .compile("lh_native");
}

/// A tool from the environment variable `var`, else from PATH (plus /usr/sbin for bpftool).
fn find_tool(var: &str, name: &str) -> PathBuf {
    if let Some(p) = env::var_os(var) {
        let p = PathBuf::from(p);
        if !p.is_file() {
            panic!("{var}={} does not exist ({SETUP_HINT})", p.display());
        }
        return p;
    }
    let path = env::var_os("PATH").unwrap_or_default();
    let extra = [PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")];
    for dir in env::split_paths(&path).chain(extra) {
        let candidate = dir.join(name);
        if candidate.is_file() {
            return candidate;
        }
    }
    panic!("`{name}` not found (set {var} or {SETUP_HINT})");
}

fn write_vmlinux_h(dst: &Path) {
    if let Some(given) = env::var_os("LONGHAUL_VMLINUX_H") {
        std::fs::copy(&given, dst)
            .unwrap_or_else(|e| panic!("copying LONGHAUL_VMLINUX_H={given:?}: {e}"));
        return;
    }
    let btf = Path::new("/sys/kernel/btf/vmlinux");
    if !btf.exists() {
        panic!(
            "{} is missing: this kernel has no BTF (CONFIG_DEBUG_INFO_BTF=y is required), \
             or point LONGHAUL_VMLINUX_H at a vmlinux.h generated on the target kernel",
            btf.display()
        );
    }
    let bpftool = find_tool("BPFTOOL", "bpftool");
    let output = Command::new(&bpftool)
        .args(["btf", "dump", "file"])
        .arg(btf)
        .args(["format", "c"])
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e} ({SETUP_HINT})", bpftool.display()));
    if !output.status.success() {
        panic!(
            "bpftool btf dump failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    std::fs::write(dst, &output.stdout).expect("write vmlinux.h");
}
