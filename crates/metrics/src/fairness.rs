//! Jain's fairness index over flows.
//!
//! R. Jain, D. Chiu, W. Hawe, "A Quantitative Measure of Fairness and Discrimination for Resource
//! Allocation in Shared Computer Systems", DEC-TR-301, 1984:
//!
//! ```text
//! J(x1..xn) = (Σ xi)² / (n · Σ xi²)
//! ```
//!
//! J is 1 when all n flows get the same throughput and 1/n when one flow gets everything; if k of
//! n flows share equally and the rest get nothing, J = k/n. It is scale-free (throughputs in b/s
//! or Mb/s give the same index). flent computes the same expression.

/// Jain's index of `xs` (throughputs, any unit). `None` for no flows or when every flow has zero
/// throughput (the index is 0/0 there: nothing was shared, fairly or otherwise).
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let sum: f64 = xs.iter().sum();
    let sum_sq: f64 = xs.iter().map(|x| x * x).sum();
    if sum_sq == 0.0 {
        return None;
    }
    Some(sum * sum / (xs.len() as f64 * sum_sq))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn equal_shares_are_perfectly_fair() {
        assert!(close(jain_index(&[925e6, 925e6, 925e6]).unwrap(), 1.0));
    }

    #[test]
    fn one_flow_takes_everything() {
        assert!(close(jain_index(&[1.0, 0.0, 0.0, 0.0]).unwrap(), 0.25));
        // k of n sharing equally: 2 of 5 → 0.4.
        assert!(close(jain_index(&[3.0, 3.0, 0.0, 0.0, 0.0]).unwrap(), 0.4));
    }

    #[test]
    fn hand_computed_unequal_shares() {
        // (1+2+3)² / (3·(1+4+9)) = 36/42.
        assert!(close(jain_index(&[1.0, 2.0, 3.0]).unwrap(), 36.0 / 42.0));
        // Scale-free: Mb/s or b/s.
        assert!(close(
            jain_index(&[1e6, 2e6, 3e6]).unwrap(),
            jain_index(&[1.0, 2.0, 3.0]).unwrap()
        ));
    }

    #[test]
    fn undefined_cases() {
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0.0, 0.0]), None);
        assert_eq!(jain_index(&[1.0, f64::NAN]), None);
    }
}
