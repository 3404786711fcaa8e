//! `PACK`: the kept elements of every segment and the new lengths. Flags are held as bits
//! ([`Ones`]: a `BOOL` vector's are gathered once; a pack root's flag trees write theirs
//! as bits directly), counted per chunk (whole segments, long ones cut into blocks) in
//! parallel, then every chunk packs its kept elements, branch-free, straight into its
//! place in the result.

use super::data::Elem;
use super::par::{chunks, split_mut, Chunk, Par};
use super::mem::{alloc, build};
use super::seg::Seg;
use crate::trap::Trap;
use std::mem::MaybeUninit;

/// Kept elements per segment, the chunks with each chunk's kept count, and the flags.
pub(super) struct Counts {
    pub lens: Vec<i64>,
    chunks: Vec<(Chunk, usize)>,
    pub kept: usize,
    ones: Ones,
}

/// Counts the true flags of every segment of `s`, from the flags as bits and the count of
/// true flags before each 64-flag word ([`Ones`]): a segment's count is the difference of
/// two prefix counts, each one lookup and one masked popcount, whatever its length (no
/// loop over its flags whose trip count varies from one segment to the next). Every chunk
/// writes its segments' counts straight into its part of the lengths; of a segment cut
/// into pieces, the first piece writes its count and the others' counts are added
/// afterwards.
pub(super) fn count(par: &Par, ones: Ones, s: &Seg) -> Result<Counts, Trap> {
    // The callers checked the lengths (`check::pack`, the pack root's descriptor check).
    debug_assert_eq!(ones.len, s.total());
    let cs = chunks(par, s, true);
    // A later piece: a chunk covering part of one segment, not its start.
    let later: Vec<bool> = cs.iter().map(|c| c.s1 > c.s0 && c.e0 > s.start(c.s0)).collect();
    let mut totals = Vec::new();
    let mut lens = build::<i64>(s.m(), |out| {
        let parts = split_mut(out, cs.iter().zip(&later).map(|(c, &l)| if l { 0 } else { c.s1 - c.s0 }));
        let items: Vec<_> = cs.iter().zip(parts).collect();
        totals = par.map(s.total() + s.m(), items, |(c, part)| {
            let Some(lens) = c.whole(s) else {
                let n = ones.upto(c.e1) - ones.upto(c.e0);
                if let Some(o) = part.first_mut() {
                    o.write(n as i64);
                }
                return n;
            };
            segment_counts(&ones, part, lens, c.e0)
        });
        Ok(())
    })?;
    for ((c, _), &n) in cs.iter().zip(&later).zip(&totals).filter(|((_, &l), _)| l) {
        lens[c.s0] += n as i64;
    }
    let kept = totals.iter().sum();
    Ok(Counts { lens, chunks: cs.into_iter().zip(totals).collect(), kept, ones })
}

/// Flags as bits, for counting the true ones below any position in constant time and
/// for reading them 64 at a time.
pub(super) struct Ones {
    /// Bit `i` of word `w` is flag `64 w + i`; one word more than the flags fill, so that
    /// the position just past the last flag has a word; bits past the last flag are 0.
    bits: Vec<u64>,
    /// The true flags in the words below each word.
    before: Vec<usize>,
    /// The number of flags.
    len: usize,
}

/// Flags packed into words per parallel block: a multiple of 64 flags.
const ONES_BLOCK: usize = 1 << 12;

/// The words that hold `n` flags as [`Ones`] holds them.
pub(super) fn words_for(n: usize) -> usize {
    n / 64 + 1
}

impl Ones {
    /// The flags of a `BOOL` vector.
    pub(super) fn of_bools(par: &Par, f: &[bool]) -> Result<Ones, Trap> {
        let words = words_for(f.len());
        let mut bits = build::<u64>(words, |out| {
            let parts: Vec<_> = out.chunks_mut(ONES_BLOCK).enumerate().collect();
            par.each(f.len(), parts, |(b, part)| {
                for (i, o) in part.iter_mut().enumerate() {
                    o.write(word_of(f, (b * ONES_BLOCK + i) * 64));
                }
            });
            Ok(())
        })?;
        if crate::interrupt::abandoned() {
            // Blocks may have been skipped: not written.
            bits.clear();
            return Err(Trap::new(crate::trap::TrapKind::Interrupted));
        }
        let before = prefix_counts(&bits);
        Ok(Ones { bits, before, len: f.len() })
    }
    /// `len` flags already written as bits ([`words_for`]`(len)` words, as [`word_of`]
    /// writes them: bits past the last flag 0); `None` when `bits` is not that long.
    pub(super) fn of_bits(bits: Vec<u64>, len: usize) -> Option<Ones> {
        (bits.len() == words_for(len)).then(|| Ones { before: prefix_counts(&bits), bits, len })
    }
    /// Flags `p..p + 64` as the bits of a word (flag `p + k` in bit `k`; past the last
    /// flag, 0), `p` at most the number of flags.
    #[inline(always)]
    fn window(&self, p: usize) -> u64 {
        let (w, s) = (p / 64, p % 64);
        let lo = self.bits[w] >> s;
        match (s, self.bits.get(w + 1)) {
            (1.., Some(&hi)) => lo | hi << (64 - s),
            _ => lo,
        }
    }
    /// The number of true flags below position `x` (at most the number of flags).
    #[inline(always)]
    fn upto(&self, x: usize) -> usize {
        let (w, b) = (x / 64, x % 64);
        self.before[w] + (self.bits[w] & ((1u64 << b) - 1)).count_ones() as usize
    }
}

/// Whether the processor counts the bits of a word in one instruction (`POPCNT`). The
/// build targets baseline x86-64, whose `count_ones` takes a dozen instructions; the loops
/// that count bits per flag word or per segment then run in a copy compiled for it.
#[cfg(target_arch = "x86_64")]
fn popcnt() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| std::arch::is_x86_feature_detected!("popcnt"))
}

/// The true flags in the words of `bits` below each word.
fn prefix_counts(bits: &[u64]) -> Vec<usize> {
    #[inline(always)]
    fn body(bits: &[u64]) -> Vec<usize> {
        let mut before = Vec::with_capacity(bits.len());
        let mut sum = 0usize;
        for w in bits {
            before.push(sum);
            sum += w.count_ones() as usize;
        }
        before
    }
    #[cfg(target_arch = "x86_64")]
    if popcnt() {
        #[target_feature(enable = "popcnt")]
        fn fast(bits: &[u64]) -> Vec<usize> {
            body(bits)
        }
        // SAFETY: the processor has POPCNT (checked just above).
        return unsafe { fast(bits) };
    }
    body(bits)
}

/// Writes the true flags of each of the whole segments of lengths `lens`, which start at
/// flag `e0` one after another, into `out`; returns their sum.
fn segment_counts(ones: &Ones, out: &mut [MaybeUninit<i64>], lens: &[i64], e0: usize) -> usize {
    #[inline(always)]
    fn body(ones: &Ones, out: &mut [MaybeUninit<i64>], lens: &[i64], e0: usize) -> usize {
        let (mut e, first) = (e0, ones.upto(e0));
        let mut below = first;
        for (o, &l) in out.iter_mut().zip(lens) {
            e += l as usize;
            let upto = ones.upto(e);
            o.write((upto - below) as i64);
            below = upto;
        }
        below - first
    }
    #[cfg(target_arch = "x86_64")]
    if popcnt() {
        #[target_feature(enable = "popcnt")]
        fn fast(ones: &Ones, out: &mut [MaybeUninit<i64>], lens: &[i64], e0: usize) -> usize {
            body(ones, out, lens, e0)
        }
        // SAFETY: the processor has POPCNT (checked just above).
        return unsafe { fast(ones, out, lens, e0) };
    }
    body(ones, out, lens, e0)
}

/// Flags `at..at + 8` as the bits of a byte (flag `at + k` in bit `k`), from one 8-byte
/// load whose bytes (each 0 or 1) a multiply gathers into its top byte.
#[inline(always)]
fn bits8(f: &[bool], at: usize) -> u8 {
    assert!(at + 8 <= f.len());
    // SAFETY: `at + 8 <= f.len()` (asserted); a `bool` is one byte, 0 or 1.
    let w = u64::from_le(unsafe { std::ptr::read_unaligned(f.as_ptr().add(at) as *const u64) });
    // Byte k's low bit lands in bit k of the top byte (no two products overlap).
    (w.wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
}

/// Flags `at..at + 64` (fewer at the end, the rest false) as the bits of a word, eight at
/// a time ([`bits8`]).
#[inline(always)]
pub(super) fn word_of(f: &[bool], at: usize) -> u64 {
    let mut w = 0u64;
    if at + 64 <= f.len() {
        for j in 0..8 {
            w |= (bits8(f, at + 8 * j) as u64) << (8 * j);
        }
    } else {
        for (i, &b) in f.iter().enumerate().skip(at) {
            w |= (b as u64) << (i - at);
        }
    }
    w
}

/// Packs `v` by the flags `at..at + v.len()` of `ones` into `out`, which has room for
/// exactly the kept ones: every element is stored at the next free slot, which advances
/// only past kept ones (flags are unpredictable; a branch per element mispredicts often).
fn pack_piece<T: Copy>(v: &[T], ones: &Ones, at: usize, out: &mut [MaybeUninit<T>]) {
    debug_assert!(at + v.len() <= ones.len);
    #[cfg(target_arch = "x86_64")]
    if std::mem::size_of::<T>() == 8 && std::mem::align_of::<T>() == 8 && compress() {
        // SAFETY: `compress` checked the processor has AVX-512F and POPCNT; `T` is an
        // 8-byte plain value (`i64` or `f64`), so its elements move as `i64` bits; `out`
        // was sized by `count` from these flags.
        unsafe {
            let v64 = std::slice::from_raw_parts(v.as_ptr() as *const i64, v.len());
            let o64 = std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut MaybeUninit<i64>, out.len());
            pack8_avx512(v64, ones, at, o64);
        }
        return;
    }
    pack_scalar(v, ones, at, out)
}

/// Whether [`pack_piece`] packs 8-byte elements with AVX-512 compresses: on x86-64
/// processors that have AVX-512F (and POPCNT, for the kept counts), unless
/// `NESL_NO_AVX512` is set (to compare). The result is the same either way (a test
/// compares the two loops).
#[cfg(target_arch = "x86_64")]
fn compress() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| std::arch::is_x86_feature_detected!("avx512f") && popcnt() && std::env::var_os("NESL_NO_AVX512").is_none())
}

/// [`pack_piece`] for 8-byte elements with AVX-512: every 8 flags (a byte of a 64-flag
/// [`Ones::window`]) compress their 8 elements' kept ones to the front of a register,
/// which a masked store writes at the next free slot (never past the kept ones, so never
/// past `out`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn pack8_avx512(v: &[i64], ones: &Ones, at: usize, out: &mut [MaybeUninit<i64>]) {
    use std::arch::x86_64::{_mm512_loadu_si512, _mm512_mask_storeu_epi64, _mm512_maskz_compress_epi64, _mm512_storeu_si512};
    let n = v.len();
    let (mut i, mut j) = (0usize, 0usize);
    while i + 8 <= n {
        let w = ones.window(at + i);
        // Up to 8 groups of 8 from this window, all inside `v`.
        let groups = ((n - i) / 8).min(8);
        for g in 0..groups {
            let mask = (w >> (8 * g)) as u8;
            if mask != 0 {
                let kept = mask.count_ones() as usize;
                // The count of these flags is part of `out.len()`: the store stays inside.
                debug_assert!(j + kept <= out.len());
                // `i + 8 * g + 8 <= n`: the load stays inside `v`.
                unsafe {
                    let x = _mm512_loadu_si512(v.as_ptr().add(i + 8 * g) as *const _);
                    let c = _mm512_maskz_compress_epi64(mask, x);
                    if j + 8 <= out.len() {
                        // All 8 lanes fit: the ones past the kept are overwritten by the
                        // next group's (or are past the last kept, inside `out`).
                        _mm512_storeu_si512(out.as_mut_ptr().add(j) as *mut _, c);
                    } else {
                        _mm512_mask_storeu_epi64(out.as_mut_ptr().add(j) as *mut i64, ((1u16 << kept) - 1) as u8, c);
                    }
                }
                j += kept;
            }
        }
        i += 8 * groups;
    }
    pack_scalar(&v[i..], ones, at + i, &mut out[j..]);
}

/// [`pack_piece`] one element at a time.
fn pack_scalar<T: Copy>(v: &[T], ones: &Ones, at: usize, out: &mut [MaybeUninit<T>]) {
    let mut j = 0usize;
    for (c, block) in v.chunks(64).enumerate() {
        let w = ones.window(at + 64 * c);
        for (k, &x) in block.iter().enumerate() {
            // Past the last kept element `j` reaches `out.len()`: nothing more is stored.
            if let Some(o) = out.get_mut(j) {
                o.write(x);
            }
            j += (w >> k) as usize & 1;
        }
    }
    debug_assert_eq!(j, out.len());
}

/// The kept elements of `v` by the flags counted into `c`.
pub(super) fn pack<T: Elem>(par: &Par, v: &[T], s: &Seg, c: &Counts) -> Result<Vec<T>, Trap> {
    build(c.kept, |out| {
        let parts = split_mut(out, c.chunks.iter().map(|&(_, n)| n));
        par.each(s.total() + s.m(), c.chunks.iter().zip(parts).collect(), |(&(ch, _), part)| {
            pack_piece(&v[ch.e0..ch.e1], &c.ones, ch.e0, part)
        });
        Ok(())
    })
}

/// What a pack takes its elements from.
pub(super) enum Elems<'a, T> {
    /// A vector.
    Stored(&'a [T]),
    /// Elements made chunk by chunk where a chunk keeps any: `make(lo, hi, buf)` writes
    /// elements `lo..hi` into `buf` (an `INDEX` not written out: `max_index` packs the
    /// positions of millions of elements and keeps one).
    Made(&'a (dyn Fn(usize, usize, &mut Vec<T>) + Sync)),
}

/// The kept elements of `v` by each of the flag vectors counted into `cs` (one
/// [`Counts`] each), in one pass over `v`: every chunk of it packs into each result in
/// turn while it is in cache.
pub(super) fn pack_many<T: Elem>(par: &Par, v: Elems<T>, s: &Seg, cs: &[Counts]) -> Result<Vec<Vec<T>>, Trap> {
    let Some(c0) = cs.first() else { return Ok(Vec::new()) };
    // `count` cuts every flag vector of one descriptor into the same chunks.
    let same = cs.iter().all(|c| c.chunks.len() == c0.chunks.len() && c.chunks.iter().zip(&c0.chunks).all(|(a, b)| a.0 == b.0));
    if !same {
        return Err(Trap::ty("PACK counts of different segment descriptors"));
    }
    let mut outs = cs.iter().map(|c| alloc::<T>(c.kept)).collect::<Result<Vec<_>, _>>()?;
    let mut items: Vec<(Chunk, Vec<&mut [MaybeUninit<T>]>)> = c0.chunks.iter().map(|&(ch, _)| (ch, Vec::with_capacity(cs.len()))).collect();
    for (o, c) in outs.iter_mut().zip(cs) {
        let parts = split_mut(&mut o.spare_capacity_mut()[..c.kept], c.chunks.iter().map(|&(_, n)| n));
        for (item, part) in items.iter_mut().zip(parts) {
            item.1.push(part);
        }
    }
    par.each(s.total() + s.m(), items, |(ch, mut parts)| {
        let mut made = Vec::new();
        let x = match v {
            Elems::Stored(v) => &v[ch.e0..ch.e1],
            Elems::Made(_) if parts.iter().all(|p| p.is_empty()) => return,
            Elems::Made(make) => {
                make(ch.e0, ch.e1, &mut made);
                &made[..]
            }
        };
        for (c, part) in cs.iter().zip(parts.iter_mut()) {
            pack_piece(x, &c.ones, ch.e0, part);
        }
    });
    if crate::interrupt::abandoned() {
        // Chunks may have been skipped: not written.
        return Err(Trap::new(crate::trap::TrapKind::Interrupted));
    }
    for (o, c) in outs.iter_mut().zip(cs) {
        // SAFETY: every chunk packed exactly its `count`ed kept elements of each flag
        // vector into its part, the parts cover the `kept` elements, and none was skipped.
        unsafe { o.set_len(c.kept) };
    }
    Ok(outs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per-segment counts and the total from the bit prefix counts equal a count flag by
    /// flag: segments ending on and beside 64-flag word boundaries, empty ones, and a
    /// segment longer than a block (counted in pieces), on one thread and on two.
    #[test]
    fn counts_match_counting_flag_by_flag() {
        use super::super::data::Data;
        use super::super::par::BLOCK;
        use std::sync::Arc;
        let mut next = super::super::test_rng(11);
        let layouts: Vec<Vec<i64>> = vec![
            vec![],
            vec![0],
            vec![63, 1, 64, 0, 65, 127, 128, 129, 0, 1],
            (0..5000).map(|k| (k % 7) as i64).collect(),
            vec![3, BLOCK as i64 * 2 + 77, 0, 64, BLOCK as i64 + 1, 5],
            vec![1; 100_000],
        ];
        for lens in layouts {
            let n: usize = lens.iter().map(|&l| l as usize).sum();
            for density in [0, 1, 2, 3] {
                let f: Vec<bool> = (0..n).map(|_| match density { 0 => false, 1 => true, _ => next() % density == 0 }).collect();
                let mut want = Vec::new();
                let mut e = 0;
                for &l in &lens {
                    want.push(f[e..e + l as usize].iter().filter(|&&b| b).count() as i64);
                    e += l as usize;
                }
                for threads in [1, 2] {
                    let par = Par::new(threads);
                    let s = Seg::new(&par, Arc::new(Data::Int(lens.clone()))).unwrap();
                    let c = count(&par, Ones::of_bools(&par, &f).unwrap(), &s).unwrap();
                    assert_eq!(c.lens, want, "{} segments, density {density}, {threads} threads", lens.len());
                    assert_eq!(c.kept, f.iter().filter(|&&b| b).count());
                    assert_eq!(c.chunks.iter().map(|&(_, k)| k).sum::<usize>(), c.kept);
                }
            }
        }
    }

    /// Both pack loops keep exactly the flagged elements: every length from 0 to 150
    /// (whole 64-flag windows, groups of 8 and tails), flags all false, all true and
    /// mixed, at starts on and off word boundaries; the flags as bits from a `BOOL`
    /// vector and written directly agree.
    #[test]
    fn packs_keep_the_flagged_elements() {
        let mut next = super::super::test_rng(7);
        let par = Par::new(1);
        let v: Vec<i64> = (0..300).map(|_| next() as i64 - (1 << 30)).collect();
        for len in 0..=150 {
            for start in [0, 1, 5, 63, 64, 70] {
                for mode in 0..4 {
                    let f: Vec<bool> = (0..start + len).map(|_| match mode { 0 => false, 1 => true, _ => next() % 3 != 0 }).collect();
                    let ones = Ones::of_bools(&par, &f).unwrap();
                    let bits: Vec<u64> = (0..words_for(f.len())).map(|w| word_of(&f, 64 * w)).collect();
                    assert_eq!(Ones::of_bits(bits, f.len()).unwrap().bits, ones.bits);
                    assert!(Ones::of_bits(vec![0; words_for(f.len()) + 1], f.len()).is_none());
                    let (src, fl) = (&v[start..start + len], &f[start..]);
                    let kept = fl.iter().filter(|&&b| b).count();
                    let want: Vec<i64> = src.iter().zip(fl).filter(|(_, &b)| b).map(|(&e, _)| e).collect();
                    let read = |o: &[MaybeUninit<i64>]| o.iter().map(|e| unsafe { e.assume_init() }).collect::<Vec<_>>();
                    let mut a = vec![MaybeUninit::<i64>::uninit(); kept];
                    pack_scalar(src, &ones, start, &mut a);
                    assert_eq!(read(&a), want, "scalar, length {len}, start {start}, mode {mode}");
                    #[cfg(target_arch = "x86_64")]
                    if std::arch::is_x86_feature_detected!("avx512f") && popcnt() {
                        let mut b = vec![MaybeUninit::<i64>::uninit(); kept];
                        // SAFETY: the processor has AVX-512F and POPCNT (checked above);
                        // `b` holds `kept`.
                        unsafe { pack8_avx512(src, &ones, start, &mut b) };
                        assert_eq!(read(&b), want, "AVX-512, length {len}, start {start}, mode {mode}");
                    }
                }
            }
        }
    }
}
