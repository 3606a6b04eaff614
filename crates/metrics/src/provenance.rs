//! Where a result came from: the command line, the scenario it ran (path and SHA-256 of its
//! content), the longhaul build (version and git commit), the kernel and the CPU model.
//!
//! Every driver (`sim`, `lab`, `emu`, `perf`, `reproduce`, `sweep`) records one in its summary
//! and every report prints it, so a number in a paper can be traced to the run that made it.
//! The build's identity comes from the binary (`Build`): a library cannot know which commit the
//! program that links it was built from. Facts the machine does not offer read "unknown" rather
//! than failing the run.

use crate::error::MetricsError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::Path;

/// What the machine or the build could not say.
pub const UNKNOWN: &str = "unknown";

/// The program's identity, from its build (`longhaul --version` prints the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Build {
    /// The package version, e.g. "0.1.0".
    pub version: &'static str,
    /// The git commit the binary was built from, or "unknown" (a source tarball has no history).
    pub commit: &'static str,
}

/// The scenario a run read: where, and a hash of exactly what it held.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioFile {
    /// The path as given on the command line, or a built-in's path in the repository.
    pub path: String,
    /// SHA-256 of the file's bytes, lowercase hex.
    pub sha256: String,
    /// The file's size in bytes.
    pub bytes: u64,
}

impl ScenarioFile {
    /// Hash `content`, recorded under `path`.
    pub fn of_content(path: &str, content: &[u8]) -> ScenarioFile {
        ScenarioFile {
            path: path.to_string(),
            sha256: sha256_hex(content),
            bytes: content.len() as u64,
        }
    }

    /// Read and hash the file at `path`.
    pub fn read(path: &Path) -> Result<ScenarioFile, MetricsError> {
        let content = std::fs::read(path).map_err(|source| MetricsError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self::of_content(&path.display().to_string(), &content))
    }
}

/// One run's provenance, as written in `summary.json` under `provenance`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// The program's arguments, the program name first, exactly as received.
    pub command: Vec<String>,
    /// longhaul's version (the crate version the binary was built as).
    pub version: String,
    /// The git commit the binary was built from (`unknown` from a source tarball).
    pub commit: String,
    /// The kernel release (`uname -r`).
    pub kernel: String,
    /// The CPU model (`/proc/cpuinfo`'s "model name").
    pub cpu: String,
    /// The scenario file the run read, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<ScenarioFile>,
}

impl Provenance {
    /// This process's provenance: its arguments, the given build, this machine's kernel and CPU.
    pub fn capture(build: Build) -> Provenance {
        Provenance {
            command: std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            version: build.version.to_string(),
            commit: build.commit.to_string(),
            kernel: kernel_release(),
            cpu: cpu_model(),
            scenario: None,
        }
    }

    /// The same with the scenario that was run.
    pub fn with_scenario(mut self, scenario: ScenarioFile) -> Provenance {
        self.scenario = Some(scenario);
        self
    }

    /// The command line as one shell-readable string (arguments with spaces or quotes quoted).
    pub fn command_line(&self) -> String {
        self.command
            .iter()
            .map(|a| longhaul_output::shell::word(a))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Rows for a report: (what, value), in a fixed order.
    pub fn rows(&self) -> Vec<(&'static str, String)> {
        let mut rows = vec![
            ("command", self.command_line()),
            (
                "longhaul",
                format!("{} (commit {})", self.version, self.commit),
            ),
            ("kernel", self.kernel.clone()),
            ("CPU", self.cpu.clone()),
        ];
        if let Some(s) = &self.scenario {
            rows.push(("scenario", s.path.clone()));
            rows.push((
                "scenario SHA-256",
                format!("{} ({} bytes)", s.sha256, s.bytes),
            ));
        }
        rows
    }
}

/// Rows for a report of several runs (a sweep): a value every run shares once, a value that
/// differs once per distinct value with the runs that have it ("X — runs 0, 1"), and the runs
/// that recorded none. `runs` pairs each run's label with its provenance.
pub fn merged_rows(runs: &[(String, Option<&Provenance>)]) -> Vec<(String, String)> {
    // key -> (value, labels) in first-met order.
    type Values<'a> = Vec<(String, Vec<&'a str>)>;
    let mut keys: Vec<(&'static str, Values)> = Vec::new();
    let mut without: Vec<&str> = Vec::new();
    for (label, p) in runs {
        let Some(p) = p else {
            without.push(label);
            continue;
        };
        for (k, v) in p.rows() {
            let at = match keys.iter().position(|e| e.0 == k) {
                Some(i) => i,
                None => {
                    keys.push((k, Vec::new()));
                    keys.len() - 1
                }
            };
            let values = &mut keys[at].1;
            match values.iter_mut().find(|e| e.0 == v) {
                Some(e) => e.1.push(label),
                None => values.push((v, vec![label.as_str()])),
            }
        }
    }
    let with = runs.len() - without.len();
    let mut rows = Vec::new();
    for (k, values) in keys {
        for (v, labels) in values {
            if labels.len() == with && without.is_empty() {
                rows.push((k.to_string(), v));
            } else {
                rows.push((k.to_string(), format!("{v} — runs {}", labels.join(", "))));
            }
        }
    }
    if !without.is_empty() {
        rows.push((
            "no provenance".to_string(),
            format!("runs {}", without.join(", ")),
        ));
    }
    rows
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The kernel release, as `uname -r` prints it.
fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| UNKNOWN.to_string())
}

/// The CPU model from `/proc/cpuinfo`.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| cpu_model_of(&text))
        .unwrap_or_else(|| UNKNOWN.to_string())
}

/// The first "model name" (x86) or, failing that, "Hardware"/"cpu model" line's value.
fn cpu_model_of(cpuinfo: &str) -> Option<String> {
    ["model name", "Hardware", "cpu model"]
        .iter()
        .find_map(|key| {
            cpuinfo.lines().find_map(|line| {
                let (k, v) = line.split_once(':')?;
                (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_string())
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUILD: Build = Build {
        version: "9.8.7",
        commit: "0123456789abcdef0123456789abcdef01234567",
    };

    #[test]
    fn merged_rows_show_shared_values_once_and_differing_ones_with_their_runs() {
        let a = Provenance::capture(BUILD);
        let mut b = a.clone();
        b.commit = "fedcba".into();
        let runs = vec![
            ("0".to_string(), Some(&a)),
            ("1".to_string(), Some(&b)),
            ("2".to_string(), Some(&a)),
        ];
        let rows = merged_rows(&runs);
        let of = |k: &str| -> Vec<String> {
            rows.iter()
                .filter(|r| r.0 == k)
                .map(|r| r.1.clone())
                .collect()
        };
        assert_eq!(of("kernel"), vec![a.kernel.clone()]);
        assert_eq!(
            of("longhaul"),
            [
                format!("9.8.7 (commit {}) — runs 0, 2", BUILD.commit),
                "9.8.7 (commit fedcba) — runs 1".to_string()
            ]
        );
        assert!(of("no provenance").is_empty());
        let runs = vec![("0".to_string(), Some(&a)), ("5".to_string(), None)];
        let rows = merged_rows(&runs);
        assert!(rows.contains(&("no provenance".to_string(), "runs 5".to_string())));
        assert!(rows.contains(&("CPU".to_string(), format!("{} — runs 0", a.cpu))));
    }

    #[test]
    fn capture_records_this_process_and_machine() {
        let p = Provenance::capture(BUILD);
        assert_eq!(p.command, std::env::args().collect::<Vec<_>>());
        assert_eq!(
            (p.version.as_str(), p.commit.as_str()),
            (BUILD.version, BUILD.commit)
        );
        let uname = std::process::Command::new("uname").arg("-r").output();
        if let Some(out) = uname.ok().filter(|o| o.status.success()) {
            assert_eq!(p.kernel, String::from_utf8_lossy(&out.stdout).trim());
        }
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        if cpuinfo.contains("model name") {
            assert_ne!(p.cpu, UNKNOWN);
            assert!(cpuinfo.contains(&p.cpu), "{} not in /proc/cpuinfo", p.cpu);
        }
    }

    #[test]
    fn scenario_hash_is_sha256_of_the_content() {
        // FIPS 180-2's "abc" test vector.
        let s = ScenarioFile::of_content("x.toml", b"abc");
        assert_eq!(
            s.sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(s.bytes, 3);
        let dir = std::env::temp_dir().join(format!("longhaul-prov-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("s.toml");
        std::fs::write(&file, "abc").unwrap();
        let read = ScenarioFile::read(&file).unwrap();
        assert_eq!(read.sha256, s.sha256);
        assert_eq!(read.path, file.display().to_string());
        let missing = ScenarioFile::read(&dir.join("none.toml")).unwrap_err();
        assert!(missing.to_string().contains("none.toml"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cpu_model_is_read_from_cpuinfo_layouts() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(
            cpu_model_of(x86).as_deref(),
            Some("Intel(R) Xeon(R) CPU @ 2.20GHz")
        );
        let arm = "processor\t: 0\nBogoMIPS\t: 50.00\nHardware\t: BCM2835\n";
        assert_eq!(cpu_model_of(arm).as_deref(), Some("BCM2835"));
        assert_eq!(cpu_model_of("processor : 0\n"), None);
    }

    #[test]
    fn command_line_quotes_what_a_shell_would_split() {
        let mut p = Provenance::capture(BUILD);
        p.command = vec![
            "longhaul".into(),
            "sim".into(),
            "a b.toml".into(),
            "--set".into(),
            "flows.0.cc=reno".into(),
            "it's".into(),
        ];
        assert_eq!(
            p.command_line(),
            "longhaul sim 'a b.toml' --set flows.0.cc=reno 'it'\\''s'"
        );
    }

    #[test]
    fn round_trips_through_json_and_lists_every_fact() {
        let p = Provenance::capture(BUILD).with_scenario(ScenarioFile::of_content("s.toml", b"x"));
        let back: Provenance = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
        let rows = p.rows();
        let names: Vec<&str> = rows.iter().map(|r| r.0).collect();
        assert_eq!(
            names,
            [
                "command",
                "longhaul",
                "kernel",
                "CPU",
                "scenario",
                "scenario SHA-256"
            ]
        );
        assert!(rows[1].1.contains(BUILD.commit));
    }
}
