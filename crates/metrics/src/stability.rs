//! Stability: the coefficient of variation (CoV) of throughput over 1-second intervals.
//!
//! CoV = σ / μ of the per-interval throughputs x1..xn of a flow (or of the aggregate). docs/measurements.md
//! fixes the interval at 1 s; FAST's evaluations (Jin, Wei, Low, INFOCOM 2004) use the same
//! "stability" measure.
//!
//! σ is the **population** standard deviation, √(Σ(xi − μ)²/n): the intervals of a run are the
//! whole population being described, not a sample from a larger one, and the population form is
//! what gives 0 for a constant series and stays defined for a single interval. [`cov_sample`] gives
//! the n − 1 (Bessel-corrected) form for comparison with tools that use it; for 300 one-second
//! intervals the two differ by a factor √(300/299) ≈ 1.0017.
//!
//! Intervals are taken from the start of the measurement; a trailing partial interval is dropped
//! (it would read low for no reason of the algorithm's). See [`crate::online::IntervalBinner`].

/// Population coefficient of variation σ/μ. `None` for an empty series or a zero mean.
pub fn cov(xs: &[f64]) -> Option<f64> {
    let (mean, var) = mean_and_variance(xs, 0)?;
    if mean == 0.0 {
        return None;
    }
    Some(var.sqrt() / mean)
}

/// Sample (n − 1) coefficient of variation. `None` for fewer than 2 values or a zero mean.
pub fn cov_sample(xs: &[f64]) -> Option<f64> {
    let (mean, var) = mean_and_variance(xs, 1)?;
    if mean == 0.0 {
        return None;
    }
    Some(var.sqrt() / mean)
}

/// Mean and variance with `ddof` delta degrees of freedom (0 = population, 1 = sample),
/// two-pass for accuracy. `None` when n ≤ ddof or a value is not finite.
fn mean_and_variance(xs: &[f64], ddof: usize) -> Option<(f64, f64)> {
    if xs.len() <= ddof || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    Some((mean, ss / (n - ddof as f64)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn constant_throughput_has_zero_cov() {
        assert_eq!(cov(&[925e6; 10]), Some(0.0));
    }

    #[test]
    fn population_versus_sample() {
        // 1,2,3,4: μ = 2.5, population variance 1.25, sample variance 5/3.
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert!(close(cov(&xs).unwrap(), 1.25f64.sqrt() / 2.5)); // 0.4472
        assert!(close(cov_sample(&xs).unwrap(), (5.0f64 / 3.0).sqrt() / 2.5)); // 0.5164
    }

    #[test]
    fn alternating_rates() {
        // 900 and 1000 Mb/s alternating: μ = 950, σ = 50, CoV = 1/19.
        let xs: Vec<f64> = (0..10)
            .map(|i| if i % 2 == 0 { 900.0 } else { 1000.0 })
            .collect();
        assert!(close(cov(&xs).unwrap(), 50.0 / 950.0));
    }

    #[test]
    fn undefined_cases() {
        assert_eq!(cov(&[]), None);
        assert_eq!(cov(&[0.0, 0.0]), None);
        assert_eq!(cov_sample(&[5.0]), None);
        assert_eq!(cov(&[5.0]), Some(0.0));
        assert_eq!(cov(&[1.0, f64::INFINITY]), None);
    }
}
