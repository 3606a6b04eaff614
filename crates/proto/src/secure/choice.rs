//! Which AEAD suite this host prefers: the one that seals and opens a datagram fastest here,
//! measured once per process.
//!
//! Which suite is cheaper depends on the CPU: AES-256-GCM is several times faster than
//! ChaCha20-Poly1305 where the CPU has AES and carry-less multiplication instructions (aws-lc
//! picks its AES-NI, VAES or ARMv8 code at run time), and slower where AES runs in software.
//! A feature test only guesses that; a measurement settles it, including CPUs whose AES units
//! are slow. So the first call seals and opens [`BATCH`] datagrams of [`DATAGRAM`] bytes with
//! each suite, [`ROUNDS`] times in turn, and keeps each suite's fastest round: a round the
//! scheduler interrupted (another process on the core, a page fault) is slower, never faster,
//! so the minimum is the suite's cost without them. The whole measurement takes well under a
//! millisecond. A server picks its own preference when the client offers it (see
//! `handshake.rs`), so the end that chooses is the one that measured.

use super::seal::{Cipher, PacketKey};
use crate::packet::SEAL_OVERHEAD;
use std::sync::OnceLock;
use std::time::Instant;

/// Bytes of inner packet per measured datagram: a full data packet at a 1500-byte MTU.
pub const DATAGRAM: usize = 1416;
/// Datagrams sealed and opened per round.
pub const BATCH: usize = 32;
/// Rounds per suite, taken in turn.
pub const ROUNDS: usize = 5;

/// One suite's measured cost on this host.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SuiteRate {
    /// The suite.
    pub cipher: Cipher,
    /// Payload bytes per second one core seals and opens (`DATAGRAM`-byte datagrams), in GB/s.
    pub gbytes_per_s: f64,
}

/// Every suite's rate, measured on the first call and remembered for the process.
pub fn measured() -> &'static [SuiteRate] {
    static RATES: OnceLock<Vec<SuiteRate>> = OnceLock::new();
    RATES.get_or_init(measure)
}

/// The suite with the highest rate (the first in [`Cipher::ALL`] on a tie).
pub fn fastest(rates: &[SuiteRate]) -> Cipher {
    rates
        .iter()
        .fold(None::<SuiteRate>, |best, r| match best {
            Some(b) if b.gbytes_per_s >= r.gbytes_per_s => Some(b),
            _ => Some(*r),
        })
        .map(|r| r.cipher)
        .unwrap_or(Cipher::ALL[0])
}

/// Seal and open `BATCH` datagrams per suite, `ROUNDS` rounds in turn; each suite's best round.
fn measure() -> Vec<SuiteRate> {
    let keys: Vec<(Cipher, PacketKey)> = Cipher::ALL
        .into_iter()
        .map(|c| (c, PacketKey::new(c, &[0x5a; 32])))
        .collect();
    let mut buf = vec![0xa5u8; DATAGRAM + SEAL_OVERHEAD];
    let mut best = vec![f64::INFINITY; keys.len()];
    let mut seal_number = 0u64;
    for _ in 0..ROUNDS {
        for (i, (_, key)) in keys.iter().enumerate() {
            let start = Instant::now();
            for _ in 0..BATCH {
                seal_number += 1;
                let n = key
                    .seal(0, seal_number, &mut buf, DATAGRAM)
                    .expect("the buffer has room for the seal");
                let opened = key.open(seal_number, &mut buf[..n]);
                debug_assert_eq!(opened, Ok(DATAGRAM));
                std::hint::black_box(&buf);
            }
            best[i] = best[i].min(start.elapsed().as_secs_f64());
        }
    }
    keys.iter()
        .zip(best)
        .map(|((cipher, _), secs)| SuiteRate {
            cipher: *cipher,
            // A round too short for the clock to see counts as one nanosecond.
            gbytes_per_s: (BATCH * DATAGRAM) as f64 / secs.max(1e-9) / 1e9,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(cipher: Cipher, gbytes_per_s: f64) -> SuiteRate {
        SuiteRate {
            cipher,
            gbytes_per_s,
        }
    }

    #[test]
    fn the_fastest_suite_wins_and_a_tie_goes_to_the_first() {
        let aes = Cipher::Aes256Gcm;
        let chacha = Cipher::ChaCha20Poly1305;
        assert_eq!(fastest(&[rate(aes, 1.0), rate(chacha, 2.0)]), chacha);
        assert_eq!(fastest(&[rate(aes, 3.0), rate(chacha, 2.0)]), aes);
        assert_eq!(fastest(&[rate(chacha, 2.0), rate(aes, 2.0)]), chacha);
        assert_eq!(fastest(&[]), Cipher::ALL[0]);
    }

    #[test]
    fn every_suite_is_measured_once_with_a_plausible_rate() {
        let rates = measured();
        assert_eq!(
            rates.iter().map(|r| r.cipher).collect::<Vec<_>>(),
            Cipher::ALL.to_vec()
        );
        for r in rates {
            // Slower than 10 MB/s or faster than memory is not a measurement of the suite.
            assert!(
                (0.01..200.0).contains(&r.gbytes_per_s),
                "{}: {} GB/s",
                r.cipher,
                r.gbytes_per_s
            );
        }
        assert!(std::ptr::eq(rates, measured()), "measured once");
    }

    /// With AES and carry-less multiplication instructions, both AES-based suites are several
    /// times ChaCha20-Poly1305's rate (on the development machine, 1,400-byte datagrams:
    /// AES-256-GCM 2.6×, AEGIS-256X4 5.4×; bench/README.md): the measurement must see it. A host
    /// without them may measure either way.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn hardware_aes_measures_faster_than_chacha() {
        if !(std::is_x86_feature_detected!("aes") && std::is_x86_feature_detected!("pclmulqdq")) {
            eprintln!("skipped: this CPU has no AES-NI and PCLMULQDQ");
            return;
        }
        let rates = measured();
        let rate = |c| rates.iter().find(|r| r.cipher == c).unwrap().gbytes_per_s;
        let chacha = rate(Cipher::ChaCha20Poly1305);
        for aes in [Cipher::Aes256Gcm, Cipher::Aegis256X4] {
            assert!(rate(aes) > chacha, "{aes}: {rates:?}");
        }
        assert_ne!(Cipher::preferred(), Cipher::ChaCha20Poly1305, "{rates:?}");
    }
}
