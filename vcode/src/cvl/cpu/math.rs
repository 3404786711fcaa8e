//! Element functions of the CPU library written as straight-line arithmetic, so that the
//! element-wise kernels' loops vectorise them (the C library's `exp` is a call per
//! element, about 5 ns each: three of them were a third of Black-Scholes).
//!
//! Only additions, multiplications, one division and bit operations, no fused
//! multiply-add: the baseline, AVX2 and AVX-512 builds of a kernel compute the same bits,
//! and so do a vector of one element held on the host and a long vector. Accuracy is that
//! of the C library's functions to within one unit in the last place.

/// `ln 2` split in two: the high part has its low 21 bits zero, so `k * LN2_HI` is exact
/// for every `|k| < 2^21`.
const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;
const INV_LN2: f64 = 1.442_695_040_888_963_387_00;

/// `1.5 * 2^52`: adding it to a value under `2^51` in magnitude rounds the value to an
/// integer (to nearest, ties to even) and leaves that integer in the low bits.
const ROUNDER: f64 = 6_755_399_441_055_744.0;

/// Coefficients of the approximation of `r (e^r + 1) / (e^r - 1)` on `|r| <= ln 2 / 2`,
/// the classic minimax polynomial in `r^2`.
const P1: f64 = 1.666_666_666_666_660_190_37e-1;
const P2: f64 = -2.777_777_777_701_559_338_42e-3;
const P3: f64 = 6.613_756_321_437_934_361_17e-5;
const P4: f64 = -1.653_390_220_546_525_153_90e-6;
const P5: f64 = 4.138_136_797_057_238_460_39e-8;

/// Above this, `e^x` is past the largest float.
const EXP_OVERFLOW: f64 = 7.097_827_128_933_839_730_96e2;
/// Below this, `e^x` rounds to zero.
const EXP_UNDERFLOW: f64 = -7.451_332_191_019_411_084_20e2;

/// `2^k` for `-1022 <= k <= 1023` (other `k`: some float).
#[inline(always)]
fn pow2(k: i64) -> f64 {
    f64::from_bits((k.wrapping_add(1023) as u64) << 52)
}

/// `e^x`: `x = k ln 2 + r` with `|r| <= ln 2 / 2` (`r` kept as `hi - lo`, `ln 2` in two
/// parts), `e^r = 1 + 2r / (R(r) - r)` with `R` the polynomial above, then times `2^k` as
/// two factors of normal range (one rounding, also into the subnormals).
#[inline(always)]
pub(super) fn exp(x: f64) -> f64 {
    // Inside the clamp every step is finite; the ends and NaN are chosen at the end.
    let xc = x.clamp(-746.0, 710.0);
    let big = xc * INV_LN2 + ROUNDER;
    let kf = big - ROUNDER;
    // The integer `kf` is the low bits of `big` (|k| <= 1077).
    let k = (big.to_bits() as i64).wrapping_sub(ROUNDER.to_bits() as i64);
    let hi = xc - kf * LN2_HI;
    let lo = kf * LN2_LO;
    let r = hi - lo;
    let t = r * r;
    let c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
    let y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
    // `k = k1 + k2`, each in `-538..=512`: `y * 2^k1` is exact, the second product rounds.
    // (Wrapping: for a NaN `x`, `k` is any bits, and the result is chosen below.)
    let k1 = ((k.wrapping_add(2048) as u64) >> 1) as i64 - 1024;
    let v = y * pow2(k1) * pow2(k.wrapping_sub(k1));
    if x > EXP_OVERFLOW {
        f64::INFINITY
    } else if x < EXP_UNDERFLOW {
        0.0
    } else if x.is_nan() {
        x
    } else {
        v
    }
}

/// Coefficients of the approximation of `(ln(1 + f) - 2s) / s` in `s^2`, `s = f / (2 + f)`,
/// on `sqrt(2)/2 - 1 <= f <= sqrt(2) - 1`: the classic minimax polynomial, split in its
/// odd and even terms.
const LG1: f64 = 6.666_666_666_666_735_130e-1;
const LG2: f64 = 3.999_999_999_940_941_908e-1;
const LG3: f64 = 2.857_142_874_366_239_149e-1;
const LG4: f64 = 2.222_219_843_214_978_396e-1;
const LG5: f64 = 1.818_357_216_161_805_012e-1;
const LG6: f64 = 1.531_383_769_920_937_332e-1;
const LG7: f64 = 1.479_819_860_511_658_591e-1;

/// `k` as a float, for `|k| < 2^51` (integer to float conversion without the instruction
/// AVX2 lacks).
#[inline(always)]
fn int_to_float(k: i64) -> f64 {
    f64::from_bits((ROUNDER.to_bits() as i64).wrapping_add(k) as u64) - ROUNDER
}

/// `ln x`: `x = 2^k m` with `sqrt(2)/2 <= m < sqrt(2)` (subnormals scaled up first), then
/// `ln m = ln(1 + f)` from the polynomial in `s = f / (2 + f)`, added to `k ln 2` in two
/// parts. Zero gives `-inf`, a negative number or NaN gives NaN, `inf` itself.
#[inline(always)]
pub(super) fn ln(x: f64) -> f64 {
    let tiny = x < f64::MIN_POSITIVE;
    let xs = if tiny { x * TWO54 } else { x };
    let bits = xs.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i64 - 1023 - if tiny { 54 } else { 0 };
    let m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    let up = m >= std::f64::consts::SQRT_2;
    let m = if up { m * 0.5 } else { m };
    let k = int_to_float(e + up as i64);
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG2 + w * (LG4 + w * LG6));
    let t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
    let r = t2 + t1;
    let hfsq = 0.5 * f * f;
    let v = k * LN2_HI - ((hfsq - (s * (hfsq + r) + k * LN2_LO)) - f);
    if x > 0.0 && x < f64::INFINITY {
        v
    } else if x == 0.0 {
        f64::NEG_INFINITY
    } else if x == f64::INFINITY {
        x
    } else {
        f64::NAN
    }
}

/// `2^54`, which takes a subnormal to a normal number.
const TWO54: f64 = 18_014_398_509_481_984.0;

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in units in the last place between two finite floats of one sign.
    fn ulps(a: f64, b: f64) -> u64 {
        (a.to_bits() as i64).abs_diff(b.to_bits() as i64)
    }

    /// Pseudo-random floats in `lo..hi`, the same every run.
    fn draws(n: usize, lo: f64, hi: f64) -> Vec<f64> {
        let mut next = super::super::test_rng(n as u64);
        (0..n).map(|_| lo + (hi - lo) * ((next() >> 7) as f64 / (1u64 << 24) as f64 + (next() >> 7) as f64 / (1u64 << 48) as f64)).collect()
    }

    /// Asserts that `f` is within one ulp of `reference` at every `x`, naming the worst.
    fn within_one_ulp(name: &str, xs: &[f64], f: fn(f64) -> f64, reference: fn(f64) -> f64) {
        let (d, x) = xs.iter().map(|&x| (ulps(f(x), reference(x)), x)).fold((0, 0.0), |w, c| if c.0 > w.0 { c } else { w });
        assert!(d <= 1, "{name}({x:e}) = {:e} is {d} ulps from {:e}", f(x), reference(x));
    }

    #[test]
    fn exp_is_within_one_ulp_of_the_c_library_everywhere() {
        let mut xs = draws(200_000, -746.0, 710.0);
        xs.extend(draws(200_000, -2.0, 2.0));
        xs.extend(draws(50_000, -1e-6, 1e-6));
        xs.extend(draws(50_000, -745.2, -700.0)); // subnormal results and their edge
        xs.extend(draws(20_000, 700.0, 709.8)); // the top of the range
        within_one_ulp("exp", &xs, exp, f64::exp);
    }

    #[test]
    fn ln_is_within_one_ulp_of_the_c_library_everywhere() {
        let mut xs = draws(200_000, 0.0, 1e6);
        xs.extend(draws(200_000, 0.5, 2.0));
        xs.extend(draws(100_000, 1.0 - 1e-6, 1.0 + 1e-6));
        xs.extend(draws(100_000, 0.0, 1.0).iter().map(|&u| f64::from_bits((u * (0x7fef_ffff_ffff_ffffu64 as f64)) as u64)));
        xs.extend(draws(50_000, 0.0, 1.0).iter().map(|&u| f64::from_bits((u * (1u64 << 52) as f64) as u64 + 1)));
        within_one_ulp("ln", &xs, ln, f64::ln);
    }

    #[test]
    fn ln_of_the_special_values() {
        assert_eq!(ln(1.0), 0.0);
        assert_eq!(ln(0.0), f64::NEG_INFINITY);
        assert_eq!(ln(-0.0), f64::NEG_INFINITY);
        assert_eq!(ln(f64::INFINITY), f64::INFINITY);
        assert!(ln(-1.0).is_nan() && ln(f64::NEG_INFINITY).is_nan() && ln(f64::NAN).is_nan());
        assert_eq!(ln(f64::MAX), f64::MAX.ln());
        assert_eq!(ln(f64::MIN_POSITIVE), f64::MIN_POSITIVE.ln());
        assert_eq!(ln(5e-324), 5e-324f64.ln(), "the smallest subnormal");
        assert!(ulps(ln(std::f64::consts::E), 1.0) <= 1);
        for k in -1074..=1023 {
            let x = 2f64.powi(k);
            assert!(ulps(ln(x), x.ln()) <= 1, "ln(2^{k})");
        }
    }

    #[test]
    fn exp_of_the_special_values() {
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-0.0), 1.0);
        assert_eq!(exp(f64::INFINITY), f64::INFINITY);
        assert_eq!(exp(f64::NEG_INFINITY), 0.0);
        assert!(exp(f64::NAN).is_nan());
        assert_eq!(exp(709.8), f64::INFINITY);
        assert_eq!(exp(1000.0), f64::INFINITY);
        assert_eq!(exp(-745.2), 0.0);
        assert_eq!(exp(-1000.0), 0.0);
        assert_eq!(exp(EXP_OVERFLOW), EXP_OVERFLOW.exp());
        assert_eq!(exp(-745.0), (-745.0f64).exp(), "the smallest subnormal");
        assert!(ulps(exp(1.0), std::f64::consts::E) <= 1);
        for k in -20..=20 {
            let x = k as f64 * std::f64::consts::LN_2;
            assert!(ulps(exp(x), x.exp()) <= 1, "exp({k} ln 2)");
        }
    }
}
