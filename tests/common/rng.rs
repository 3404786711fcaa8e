//! xorshift64*, the small deterministic generator of the fuzz tests (`#[path]`-included
//! by each, so every test binary has its own copy of the code, not of the source).

/// xorshift64*.
pub struct Rng(pub u64);

#[allow(dead_code)] // each fuzz test uses its own subset
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    /// One of `xs` (which must not be empty).
    pub fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}
