//! `RANK_UP` / `RANK_DOWN`: the stable rank of every element within its segment, by a
//! comparison sort for short segments and a least-significant-digit radix sort for long
//! ones; segments are spread over the threads.

use super::data::Elem;
use super::par::{chunks, split_mut, Par};
use super::mem::build;
use super::seg::Seg;
use crate::trap::Trap;

/// Keys that rank: an order-preserving map to `u64`. Floats go by their IEEE bit
/// patterns as the reference's radix sort orders them (`-0.0` before `+0.0`, NaNs at the
/// ends), which is also a total order, so no key makes the sort misbehave.
pub(super) trait RankKey: Elem {
    fn key(self) -> u64;
}
impl RankKey for i64 {
    fn key(self) -> u64 {
        (self as u64) ^ (1 << 63)
    }
}
impl RankKey for f64 {
    fn key(self) -> u64 {
        let b = self.to_bits();
        if b >> 63 == 1 {
            !b
        } else {
            b | (1 << 63)
        }
    }
}

/// Segments shorter than this are ranked by a comparison sort, longer ones by radix sort.
pub(super) const RADIX_MIN: usize = 1024;

/// Sorts `(key, position)` pairs by key, stably: a least-significant-digit radix sort,
/// one pass per byte, skipping the bytes in which all keys agree.
fn radix_sort(mut a: Vec<(u64, u32)>) -> Vec<(u64, u32)> {
    let mut b = a.clone();
    for shift in (0..64).step_by(8) {
        let mut count = [0usize; 256];
        for &(k, _) in &a {
            count[((k >> shift) & 0xff) as usize] += 1;
        }
        if count.contains(&a.len()) {
            continue;
        }
        let mut at = 0;
        for c in count.iter_mut() {
            let n = *c;
            *c = at;
            at += n;
        }
        for &(k, p) in &a {
            let d = ((k >> shift) & 0xff) as usize;
            b[count[d]] = (k, p);
            count[d] += 1;
        }
        std::mem::swap(&mut a, &mut b);
    }
    a
}

fn rank_seg<T: RankKey>(v: &[T], dst: &mut [std::mem::MaybeUninit<i64>], flip: u64) {
    if v.len() > u32::MAX as usize {
        // Positions past u32: a plain stable sort of (key, position).
        let mut pairs: Vec<(u64, usize)> = v.iter().enumerate().map(|(p, &x)| (x.key() ^ flip, p)).collect();
        pairs.sort_by_key(|&(k, _)| k);
        for (r, &(_, p)) in pairs.iter().enumerate() {
            dst[p].write(r as i64);
        }
        return;
    }
    let mut pairs: Vec<(u64, u32)> = v.iter().enumerate().map(|(p, &x)| (x.key() ^ flip, p as u32)).collect();
    if v.len() < RADIX_MIN {
        pairs.sort_by_key(|&(k, _)| k);
    } else {
        pairs = radix_sort(pairs);
    }
    for (r, &(_, p)) in pairs.iter().enumerate() {
        dst[p as usize].write(r as i64);
    }
}

/// Ranks of `v` within the segments of `s`.
pub(super) fn rank<T: RankKey>(par: &Par, v: &[T], s: &Seg, up: bool) -> Result<Vec<i64>, Trap> {
    // Descending order is ascending order of the complemented keys; equal keys keep
    // their positions' order either way (stable).
    let flip = if up { 0 } else { u64::MAX };
    build(v.len(), |out| {
        let cs = chunks(par, s, false);
        let parts = split_mut(out, cs.iter().map(|c| c.e1 - c.e0));
        par.each(v.len() + s.m(), cs.into_iter().zip(parts).collect(), |(c, part)| {
            for k in c.s0..c.s1 {
                let (st, len) = (s.start(k) - c.e0, s.len(k));
                rank_seg(&v[st + c.e0..st + c.e0 + len], &mut part[st..st + len], flip);
            }
        });
        Ok(())
    })
}
