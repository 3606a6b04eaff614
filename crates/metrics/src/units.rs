//! Units of the field and how longhaul prints them.
//!
//! Rates are bits per second with decimal prefixes (1 Mb/s = 10^6 b/s), as iperf, tc and seed 000's
//! Table 1 use them. Transfer volumes in seed 000's Table 1 are binary gigabytes (2^30 bytes): 925 Mb/s
//! for 3,600 s is 416.25 × 10^9 bytes, which the table prints as "387 GB" = 416.25e9 / 2^30 = 387.66,
//! truncated (every row of that column is truncated, not rounded). The
//! distance-rate product (b·m/s) is printed in 10^15 b·m/s as seed 000 does, and in Tb·m/s or Pb·m/s
//! as the Internet2 Land Speed Record does (seed 004, "terabit-meters/sec", "Petabmps").

/// Bytes of TCP/IP header in every MTU-sized packet: 20 (IPv4) + 20 (TCP, no options).
/// Seed 000: utilization is computed "excluding the (40-byte) overhead of TCP/IP headers".
pub const TCP_IP_HEADER_BYTES: u32 = 40;

/// The standard Ethernet MTU used in all of seed 000's experiments.
pub const STANDARD_MTU: u32 = 1500;

/// Bytes in one binary gigabyte, the unit of seed 000's "transfer GB" column.
pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Bits per second → Mb/s (decimal).
pub fn to_mbps(bps: f64) -> f64 {
    bps / 1e6
}

/// b·m/s → units of 10^15 b·m/s (seed 000's "bmps 10^15" column).
pub fn bmps_to_e15(bmps: f64) -> f64 {
    bmps / 1e15
}

/// b·m/s → terabit-meters per second (Land Speed Record unit).
pub fn bmps_to_tbmps(bmps: f64) -> f64 {
    bmps / 1e12
}

/// b·m/s → petabit-meters per second ("Petabmps").
pub fn bmps_to_pbmps(bmps: f64) -> f64 {
    bmps / 1e15
}

/// A rate for humans: `925.0 Mb/s`, `8.61 Gb/s`, `56.0 kb/s`, with three significant digits.
pub fn format_rate(bps: f64) -> String {
    if !bps.is_finite() {
        return "-".to_string();
    }
    let (v, unit) = if bps.abs() >= 1e12 {
        (bps / 1e12, "Tb/s")
    } else if bps.abs() >= 1e9 {
        (bps / 1e9, "Gb/s")
    } else if bps.abs() >= 1e6 {
        (bps / 1e6, "Mb/s")
    } else if bps.abs() >= 1e3 {
        (bps / 1e3, "kb/s")
    } else {
        (bps, "b/s")
    };
    format!("{} {unit}", three_significant(v))
}

/// b·m/s the way seed 000's Table 1 prints it: `9.28` (× 10^15 b·m/s), two decimals.
pub fn format_bmps_e15(bmps: f64) -> String {
    if !bmps.is_finite() {
        return "-".to_string();
    }
    format!("{:.2}", bmps_to_e15(bmps))
}

/// b·m/s the way the Land Speed Record tables print it: `272,400.00 Tb·m/s`.
pub fn format_bmps_lsr(bmps: f64) -> String {
    if !bmps.is_finite() {
        return "-".to_string();
    }
    format!("{} Tb·m/s", group_thousands(bmps_to_tbmps(bmps), 2))
}

/// b·m/s in petabit-meters per second, as the LSR press releases put large records:
/// `104.5 Pb·m/s` (the "100 petabump threshold").
pub fn format_bmps_pbmps(bmps: f64) -> String {
    if !bmps.is_finite() {
        return "-".to_string();
    }
    format!("{:.1} Pb·m/s", bmps_to_pbmps(bmps))
}

/// `value` with `decimals` decimals and thousands separated by commas: 272400.0 → "272,400.00".
pub fn group_thousands(value: f64, decimals: usize) -> String {
    let s = format!("{:.*}", decimals, value.abs());
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i.to_string(), Some(f.to_string())),
        None => (s.clone(), None),
    };
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let sign = if value < 0.0 && s.chars().any(|c| c.is_ascii_digit() && c != '0') {
        "-"
    } else {
        ""
    };
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

fn three_significant(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_print_with_decimal_prefixes() {
        assert_eq!(format_rate(925e6), "925 Mb/s");
        assert_eq!(format_rate(8.609e9), "8.61 Gb/s");
        assert_eq!(format_rate(56_000.0), "56.0 kb/s");
        assert_eq!(format_rate(f64::NAN), "-");
    }

    #[test]
    fn seed_000_transfer_column_is_binary_gigabytes() {
        // Table 1, 1 flow: 925 Mb/s for 3,600 s is printed as 387 GB (387.66 GiB, truncated;
        // every row of the column is truncated, not rounded).
        let bytes = 925e6 * 3600.0 / 8.0;
        assert_eq!((bytes / GIB).floor(), 387.0);
        // 7 flows: 6,123 Mb/s for 21,600 s → 15,396 GB (15,396.8).
        assert_eq!((6123e6 * 21600.0 / 8.0 / GIB).floor(), 15_396.0);
        // 10 flows: 8,609 Mb/s for 21,600 s is printed as 21,647 GB (21,647.94 truncated).
        let bytes = 8609e6 * 21600.0 / 8.0;
        assert_eq!((bytes / GIB).floor(), 21_647.0);
    }

    #[test]
    fn bmps_formats_match_both_conventions() {
        // Seed 000: 925 Mb/s × 10,037 km = 9.28 × 10^15 b·m/s.
        assert_eq!(format_bmps_e15(925e6 * 10_037e3), "9.28");
        // LSR: 9.08 Gb/s × 30,000 km = 272,400 Tb·m/s.
        assert_eq!(format_bmps_lsr(9.08e9 * 30_000e3), "272,400.00 Tb·m/s");
        // LSR 2004: 104.5 Pb·m/s, "the first time the 100 petabump threshold has been broken".
        assert_eq!(format_bmps_pbmps(104.5e15), "104.5 Pb·m/s");
        assert_eq!(format_bmps_lsr(104.5e15), "104,500.00 Tb·m/s");
    }

    #[test]
    fn thousands_grouping() {
        assert_eq!(group_thousands(1234567.891, 1), "1,234,567.9");
        assert_eq!(group_thousands(999.0, 0), "999");
        assert_eq!(group_thousands(-1000.0, 0), "-1,000");
        assert_eq!(group_thousands(0.0, 2), "0.00");
    }
}
