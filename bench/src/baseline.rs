//! Hand-written Rust baselines (the "hand-tuned CPU" column): dot product and Black-Scholes
//! with rayon, on the same inputs the NESL programs build, timed in-process.

use rayon::prelude::*;
use std::time::Instant;

/// A small deterministic generator (xorshift64*), so the baselines need no dependency.
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Dot product of `n` elements: returns the core time in seconds (inputs built untimed)
/// and the result, so the caller can check it.
pub fn dotp(n: usize) -> (f64, f64) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let xs: Vec<f64> = (0..n).map(|i| i as f64 / 1000.0).collect();
    let ys: Vec<f64> = (0..n).map(|_| rng.next_f64()).collect();
    let t = Instant::now();
    let r: f64 = xs.par_iter().zip(ys.par_iter()).map(|(x, y)| x * y).sum();
    (t.elapsed().as_secs_f64(), r)
}

fn cnd(d: f64) -> f64 {
    let k = 1.0 / (1.0 + 0.2316419 * d.abs());
    let poly = k
        * (0.31938153
            + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))));
    let w = 1.0 - 0.3989422804014327 * (-d * d / 2.0).exp() * poly;
    if d < 0.0 {
        1.0 - w
    } else {
        w
    }
}

/// Black-Scholes European call prices for `n` options with the inputs of
/// `programs/blackscholes.nesl`: returns the core time in seconds and the sum of prices.
pub fn blackscholes(n: usize) -> (f64, f64) {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let ss: Vec<f64> = (0..n).map(|_| 5.0 + 25.0 * rng.next_f64()).collect();
    let xs: Vec<f64> = (0..n).map(|_| 1.0 + 99.0 * rng.next_f64()).collect();
    let ts: Vec<f64> = (0..n).map(|_| 0.25 + 9.75 * rng.next_f64()).collect();
    let (r, v) = (0.02, 0.30);
    let t0 = Instant::now();
    let prices: Vec<f64> = ss
        .par_iter()
        .zip(xs.par_iter())
        .zip(ts.par_iter())
        .map(|((&s, &x), &t)| {
            let sqt = t.sqrt();
            let d1 = ((s / x).ln() + (r + v * v / 2.0) * t) / (v * sqt);
            let d2 = d1 - v * sqt;
            s * cnd(d1) - x * (-r * t).exp() * cnd(d2)
        })
        .collect();
    let el = t0.elapsed().as_secs_f64();
    (el, prices.iter().sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotp_matches_serial_sum() {
        let (_, r) = dotp(1000);
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let serial: f64 = (0..1000).map(|i| i as f64 / 1000.0 * rng.next_f64()).sum();
        assert!((r - serial).abs() < 1e-9 * serial.abs().max(1.0));
    }

    #[test]
    fn call_prices_are_within_bounds() {
        // price of an at-the-money one-year call with r = 2%, v = 30% is about 12.8% of s
        let p = {
            let (s, x, t, r, v) = (100.0f64, 100.0f64, 1.0f64, 0.02, 0.30);
            let d1 = ((s / x).ln() + (r + v * v / 2.0) * t) / (v * t.sqrt());
            let d2 = d1 - v * t.sqrt();
            s * cnd(d1) - x * (-r * t).exp() * cnd(d2)
        };
        assert!((p - 12.82).abs() < 0.05, "price {p}");
        let (_, total) = blackscholes(100);
        assert!(total > 0.0);
    }
}
