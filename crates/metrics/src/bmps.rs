//! The distance-rate product: bit-meters per second (b·m/s).
//!
//! Seed 000 (Table 1) reports "the product of throughput and distance of transfer, measured in
//! bit-meter-per-second", in units of 10^15 b·m/s; seed 004 (the Internet2 Land Speed Record FAQ)
//! says "Internet speed records are measured in terabit-meters/sec" (1 Tb·m/s = 10^12 b·m/s) and
//! speaks of "Petabmps" (10^15). The LSR counts the terrestrial distance of the path; an
//! emulated path has none, so [`equivalent_distance_km`] converts its one-way delay to the fibre
//! distance it stands for (about 2 × 10^8 m/s), and reports must say which one they used.
//! Formatting lives in crate::units.

/// The distance-rate product in bit-meters per second: throughput × path distance.
/// `distance_km` is the terrestrial distance of the path (what the Land Speed Record counts).
pub fn bmps(throughput_bps: f64, distance_km: f64) -> f64 {
    throughput_bps * distance_km * 1e3
}

/// Propagation speed of light in optical fibre, m/s (refractive index ≈ 1.5).
pub const FIBRE_SPEED_M_PER_S: f64 = 2.0e8;

/// The distance a one-way propagation delay corresponds to in fibre, in km: what an emulated
/// path "is worth" in b·m/s when it has no real distance (90 ms one way ≈ 18,000 km).
pub fn equivalent_distance_km(one_way_delay_s: f64) -> f64 {
    one_way_delay_s * FIBRE_SPEED_M_PER_S / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::bmps_to_tbmps;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn land_speed_record_units() {
        // Seed 004 / Internet2 LSR: 9.08 Gb/s × 30,000 km = 272,400 Tb·m/s.
        assert!(close(
            bmps_to_tbmps(bmps(9.08e9, 30_000.0)),
            272_400.0,
            1e-6
        ));
        // Seed 000's first row in LSR units: 9,284.2 Tb·m/s.
        assert!(close(bmps_to_tbmps(bmps(925e6, 10_037.0)), 9_284.225, 1e-6));
    }

    #[test]
    fn equivalent_distance_of_an_emulated_path() {
        // 90 ms one way in fibre ≈ 18,000 km; 10 Gb/s over it ≈ 180,000 Tb·m/s.
        assert!(close(equivalent_distance_km(0.090), 18_000.0, 1e-9));
        let d = equivalent_distance_km(0.090);
        assert!(close(bmps_to_tbmps(bmps(10e9, d)), 180_000.0, 1e-6));
    }
}
