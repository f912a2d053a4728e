//! The arithmetic of the local encoder: 8-bit matrix products and the float steps around them
//! (layer normalisation, GELU, attention).
//!
//! A linear layer's weights are quantised once, per output channel, to signed 8 bits; each
//! product's input rows are quantised as it runs, per row, to unsigned 8 bits over the row's
//! own range (`x ≈ scale · (q - zero)`: a row after GELU, nearly all positive, keeps twice the
//! resolution it would have around zero), the zero taken off again through each column's
//! weight sum. The sums are exact 32-bit integers, so every way of computing them gives the same numbers:
//! AVX-512 VNNI (`vpdpbusd`, 64 products an instruction) where the CPU has it, else plain
//! loops that the compiler vectorises (for AVX2 when the CPU has it). The float steps are plain
//! loops too, compiled for AVX-512 or AVX2 when the CPU has them.

use rayon::prelude::*;

/// Columns a VNNI block holds (one 512-bit register of 32-bit sums); also the running sums
/// of the float loops.
const LANES: usize = 16;

/// 1.5 · 2^23: adding it to a float of magnitude under 2^22 rounds it to an integer (ties to
/// even), held in the low bits of the sum.
const ROUND: f32 = 12_582_912.0;

/// A function whose body is compiled three times, for AVX-512 (with AVX2 and FMA), for AVX2
/// with FMA, and plain, and run in the best form the CPU has: the loops are plain, and the
/// compiler vectorises them for the instructions it may use.
macro_rules! per_cpu {
    ($(#[$doc:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) $body:block) => {
        $(#[$doc])*
        $vis fn $name($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
                fn wide($($arg: $ty),*) $body
                #[target_feature(enable = "avx2,fma")]
                fn avx2($($arg: $ty),*) $body
                if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw")
                    && is_x86_feature_detected!("avx512vl") && is_x86_feature_detected!("fma") {
                    // SAFETY: the CPU has the features `wide` is compiled for, checked above.
                    return unsafe { wide($($arg),*) };
                }
                if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
                    // SAFETY: the CPU has AVX2 and FMA, checked above.
                    return unsafe { avx2($($arg),*) };
                }
            }
            $body
        }
    };
}

/// Which instructions the products use, chosen once from what the CPU has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    /// AVX-512 F/BW with VNNI.
    Vnni,
    /// Portable loops (compiled for AVX2 when the CPU has it).
    Portable,
}

impl Isa {
    /// The best this CPU can run.
    pub fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vnni")
        {
            return Isa::Vnni;
        }
        Isa::Portable
    }
}

/// A linear layer (`y = x·Wᵀ + b`) with its weights in 8 bits, laid out for its [`Isa`].
#[derive(Debug)]
pub struct QuantLinear {
    isa: Isa,
    /// Input width (`k`) and output width (`n`).
    k: usize,
    n: usize,
    /// `k` rounded up to a multiple of 4 (the quantised rows' stride).
    kp: usize,
    /// The weights: for `Vnni`, blocks of 16 columns, each `kp / 4` groups of 16 lanes × 4
    /// bytes; for `Portable`, `n` rows of `kp` bytes. Padding is zero.
    w: Vec<i8>,
    /// Per column (padded to a multiple of 16): the weight scale, the weight sum, the bias.
    scale: Vec<f32>,
    wsum: Vec<i32>,
    bias: Vec<f32>,
}

impl QuantLinear {
    /// Quantises `weight` (`n` rows of `k`, row-major as PyTorch stores it) and keeps `bias`.
    pub fn new(isa: Isa, weight: &[f32], bias: &[f32], n: usize, k: usize) -> QuantLinear {
        assert_eq!(weight.len(), n * k);
        assert_eq!(bias.len(), n);
        let kp = k.div_ceil(4) * 4;
        let np = n.div_ceil(LANES) * LANES;
        let mut scale = vec![0f32; np];
        let mut wsum = vec![0i32; np];
        let mut padded_bias = vec![0f32; np];
        padded_bias[..n].copy_from_slice(bias);
        let mut rows = vec![0i8; np * kp];
        for (c, row) in weight.chunks_exact(k).enumerate() {
            let max = row.iter().fold(0f32, |m, v| m.max(v.abs()));
            let s = if max > 0.0 { max / 127.0 } else { 1.0 };
            scale[c] = s;
            let q = &mut rows[c * kp..c * kp + k];
            for (q, v) in q.iter_mut().zip(row) {
                *q = (v / s).round().clamp(-127.0, 127.0) as i8;
            }
            wsum[c] = q.iter().map(|&v| v as i32).sum::<i32>();
        }
        let w = match isa {
            Isa::Portable => rows,
            Isa::Vnni => {
                let mut w = vec![0i8; np * kp];
                for c in 0..np {
                    let (block, lane) = (c / LANES, c % LANES);
                    for kk in 0..kp {
                        let at = ((block * (kp / 4) + kk / 4) * LANES + lane) * 4 + kk % 4;
                        w[at] = rows[c * kp + kk];
                    }
                }
                w
            }
        };
        QuantLinear {
            isa,
            k,
            n,
            kp,
            w,
            scale,
            wsum,
            bias: padded_bias,
        }
    }

    /// Output width.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `x` (`rows` × `k`) times the weights plus the bias, into `out` (`rows` × `n`), the
    /// rows split between rayon's threads.
    pub fn forward(&self, x: &[f32], out: &mut [f32]) {
        let rows = x.len() / self.k;
        assert_eq!(x.len(), rows * self.k);
        assert_eq!(out.len(), rows * self.n);
        // Four tasks a thread (a thread the system holds back leaves work for the other to
        // take), of at least four rows (one tile's); each quantises its own rows.
        let threads = rayon::current_num_threads().max(1);
        let per = rows.div_ceil(4 * threads).max(4);
        out.par_chunks_mut(per * self.n)
            .zip(x.par_chunks(per * self.k))
            .for_each(|(out, x)| {
                let rows = x.len() / self.k;
                let mut q = vec![0u8; rows * self.kp];
                let mut s = vec![0f32; rows];
                let mut z = vec![0i32; rows];
                quantize_rows(x, self.k, &mut q, self.kp, &mut s, &mut z);
                self.product(&q, &s, &z, out)
            });
    }

    /// The product of quantised rows `q` (scales `s`, zeros `z`) into `out`, on this thread.
    fn product(&self, q: &[u8], s: &[f32], z: &[i32], out: &mut [f32]) {
        match self.isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Vnni` is chosen only when the CPU has AVX-512 F, BW and VNNI.
            Isa::Vnni => unsafe { vnni::product(self, q, s, z, out) },
            _ => portable_product(self, q, s, z, out),
        }
    }
}

per_cpu! {
    /// Quantises each row of `x` (width `k`) to unsigned 8 bits in `q` (stride `kp`, its padding
    /// left as it is), with its scale and zero: `x ≈ scale · (q - zero)`. The range is the row's
    /// own, widened to hold 0.
    pub fn quantize_rows(x: &[f32], k: usize, q: &mut [u8], kp: usize, scale: &mut [f32], zero: &mut [i32]) {
        for (((row, q), s), z) in x
            .chunks_exact(k)
            .zip(q.chunks_exact_mut(kp))
            .zip(scale)
            .zip(zero)
        {
            let (lo, hi) = range(row);
            *s = if hi > lo { (hi - lo) / 255.0 } else { 1.0 };
            let inv = 1.0 / *s;
            let zf = (-lo * inv).round().clamp(0.0, 255.0);
            *z = zf as i32;
            for (q, v) in q.iter_mut().zip(row) {
                // ROUND + r rounds r to the nearest integer (ties to even) and leaves it in the
                // low byte of its bits: no float-to-integer conversion, which would not vectorise.
                let r = (v * inv + zf).clamp(0.0, 255.0) + ROUND;
                *q = r.to_bits() as u8;
            }
        }
    }
}

/// The least and the greatest of `row` and 0.
#[inline(always)]
fn range(row: &[f32]) -> (f32, f32) {
    let (mut lo, mut hi) = ([0f32; LANES], [0f32; LANES]);
    let chunks = row.chunks_exact(LANES);
    let tail = chunks.remainder();
    for c in chunks {
        for i in 0..LANES {
            lo[i] = lo[i].min(c[i]);
            hi[i] = hi[i].max(c[i]);
        }
    }
    let lo = tail.iter().chain(&lo).fold(0f32, |a, &b| a.min(b));
    let hi = tail.iter().chain(&hi).fold(0f32, |a, &b| a.max(b));
    (lo, hi)
}

per_cpu! {
    /// The row-by-column loops of the product, for CPUs without VNNI; the `Portable` layout.
    fn portable_product(l: &QuantLinear, q: &[u8], s: &[f32], z: &[i32], out: &mut [f32]) {
        let rows = q.chunks_exact(l.kp).zip(s).zip(z);
        for (((row, &rs), &rz), out) in rows.zip(out.chunks_exact_mut(l.n)) {
            for (c, o) in out.iter_mut().enumerate() {
                let w = &l.w[c * l.kp..(c + 1) * l.kp];
                let sum: i32 = row.iter().zip(w).map(|(&a, &b)| a as i32 * b as i32).sum();
                *o = (sum - rz * l.wsum[c]) as f32 * (rs * l.scale[c]) + l.bias[c];
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod vnni {
    use std::arch::x86_64::*;

    use super::{QuantLinear, LANES};

    /// Rows a tile takes at once.
    const MR: usize = 4;
    /// Blocks of 16 columns a tile takes at once.
    const NB: usize = 4;

    /// The product of quantised rows `q` (scales `s`) by `l`'s weights into `out`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) fn product(l: &QuantLinear, q: &[u8], s: &[f32], z: &[i32], out: &mut [f32]) {
        let rows = s.len();
        assert!(q.len() >= rows * l.kp && out.len() >= rows * l.n);
        let blocks = l.n.div_ceil(LANES);
        // A band of column blocks stays in cache while every row passes over it.
        for b0 in (0..blocks).step_by(NB) {
            let nb = NB.min(blocks - b0);
            let mut r0 = 0;
            while r0 < rows {
                let mr = MR.min(rows - r0);
                macro_rules! go {
                    ($r:literal, $b:literal) => {
                        tile::<$r, $b>(l, q, s, z, out, r0, b0)
                    };
                }
                match (mr, nb) {
                    (4, 4) => go!(4, 4),
                    (4, 3) => go!(4, 3),
                    (4, 2) => go!(4, 2),
                    (4, _) => go!(4, 1),
                    (3, 4) => go!(3, 4),
                    (3, 3) => go!(3, 3),
                    (3, 2) => go!(3, 2),
                    (3, _) => go!(3, 1),
                    (2, 4) => go!(2, 4),
                    (2, 3) => go!(2, 3),
                    (2, 2) => go!(2, 2),
                    (2, _) => go!(2, 1),
                    (_, 4) => go!(1, 4),
                    (_, 3) => go!(1, 3),
                    (_, 2) => go!(1, 2),
                    (_, _) => go!(1, 1),
                }
                r0 += mr;
            }
        }
    }

    /// `R` rows from `r0` by `B` column blocks from `b0`: the sums in registers over all of
    /// `kp`, less each row's zero times each column's weight sum, then scaled and stored.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    fn tile<const R: usize, const B: usize>(
        l: &QuantLinear,
        q: &[u8],
        s: &[f32],
        z: &[i32],
        out: &mut [f32],
        r0: usize,
        b0: usize,
    ) {
        let kp = l.kp;
        let block_len = kp * LANES;
        // Bounds the raw reads below: rows r0..r0+R of q, blocks b0..b0+B of the weights.
        assert!((r0 + R) * kp <= q.len() && (b0 + B) * block_len <= l.w.len());
        let a = q[r0 * kp..].as_ptr();
        let w = l.w[b0 * block_len..].as_ptr();
        let mut acc = [[_mm512_setzero_si512(); B]; R];
        for g in 0..kp / 4 {
            let mut wv = [_mm512_setzero_si512(); B];
            for (j, wv) in wv.iter_mut().enumerate() {
                // SAFETY: block b0 + j < blocks and group g < kp / 4, inside `l.w` (asserted).
                *wv = unsafe { _mm512_loadu_si512(w.add(j * block_len + g * 64).cast()) };
            }
            for (r, acc) in acc.iter_mut().enumerate() {
                // SAFETY: row r0 + r, bytes 4g..4g+4 < kp, inside `q` (asserted).
                let four = unsafe { (a.add(r * kp + g * 4) as *const i32).read_unaligned() };
                let av = _mm512_set1_epi32(four);
                for j in 0..B {
                    acc[j] = _mm512_dpbusd_epi32(acc[j], av, wv[j]);
                }
            }
        }
        for (r, acc) in acc.iter().enumerate() {
            let row = r0 + r;
            let rs = _mm512_set1_ps(s[row]);
            let rz = _mm512_set1_epi32(z[row]);
            for (j, &acc) in acc.iter().enumerate() {
                let c = (b0 + j) * LANES;
                let width = LANES.min(l.n - c);
                let wsum = &l.wsum[c..c + LANES];
                let scale = &l.scale[c..c + LANES];
                let bias = &l.bias[c..c + LANES];
                let dst = &mut out[row * l.n + c..row * l.n + c + width];
                // SAFETY: each slice above holds the 16 values read (the column arrays are
                // padded to a multiple of 16); the store writes `width` lanes of `dst`.
                unsafe {
                    let off = _mm512_mullo_epi32(rz, _mm512_loadu_si512(wsum.as_ptr().cast()));
                    let sc = _mm512_mul_ps(rs, _mm512_loadu_ps(scale.as_ptr()));
                    let v = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc, off));
                    let y = _mm512_fmadd_ps(v, sc, _mm512_loadu_ps(bias.as_ptr()));
                    let mask: __mmask16 = if width == LANES {
                        0xffff
                    } else {
                        (1u16 << width) - 1
                    };
                    _mm512_mask_storeu_ps(dst.as_mut_ptr(), mask, y);
                }
            }
        }
    }
}

per_cpu! {
    /// `x ← layer_norm(x + residual)` per row of width `gamma.len()`; `residual` gets the
    /// result too (the next block's residual).
    pub fn add_layer_norm(x: &mut [f32], residual: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
        let w = gamma.len();
        for (x, r) in x.chunks_exact_mut(w).zip(residual.chunks_exact_mut(w)) {
            for (x, r) in x.iter_mut().zip(r.iter()) {
                *x += r;
            }
            norm_row(x, gamma, beta, eps);
            r.copy_from_slice(x);
        }
    }
}

per_cpu! {
    /// `x ← layer_norm(x)` per row of width `gamma.len()`.
    pub fn layer_norm(x: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
        for x in x.chunks_exact_mut(gamma.len()) {
            norm_row(x, gamma, beta, eps);
        }
    }
}

#[inline(always)]
fn norm_row(x: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
    let n = x.len() as f32;
    let mean = sum(x) / n;
    let mut sq = [0f32; LANES];
    let chunks = x.chunks_exact(LANES);
    let mut var: f32 = chunks
        .remainder()
        .iter()
        .map(|v| (v - mean) * (v - mean))
        .sum();
    for c in chunks {
        for i in 0..LANES {
            sq[i] += (c[i] - mean) * (c[i] - mean);
        }
    }
    var += sq.iter().sum::<f32>();
    let inv = 1.0 / (var / n + eps).sqrt();
    for ((x, g), b) in x.iter_mut().zip(gamma).zip(beta) {
        *x = (*x - mean) * inv * g + b;
    }
}

#[inline(always)]
fn sum(x: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let chunks = x.chunks_exact(LANES);
    let tail: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for i in 0..LANES {
            acc[i] += c[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

per_cpu! {
    /// `x ← GELU(x) = x · Φ(x)`, with erf to about 1e-7 (the exact GELU of BERT).
    pub fn gelu(x: &mut [f32]) {
        for v in x.iter_mut() {
            *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
        }
    }
}

#[inline(always)]
fn softmax_row(row: &mut [f32]) {
    let max = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    for v in row.iter_mut() {
        *v = exp(*v - max);
    }
    let inv = 1.0 / sum(row);
    for v in row.iter_mut() {
        *v *= inv;
    }
}

per_cpu! {
    /// One attention head over one text: for each row of `q` (width `d`), the softmax of its
    /// scaled dot products with the keys, and `out`'s row the sum of the rows of `v` so
    /// weighted. The keys come transposed, `kt` (`d` rows of one number per token), so that
    /// a query's scores build up as whole rows rather than as dot products each summed
    /// across its lanes; `scores` is room for one query's (one per token).
    pub fn attend(q: &[f32], kt: &[f32], v: &[f32], d: usize, scale: f32, scores: &mut [f32], out: &mut [f32]) {
        let len = scores.len();
        for (q, out) in q.chunks_exact(d).zip(out.chunks_exact_mut(d)) {
            scores.fill(0.0);
            for (&qc, k) in q.iter().zip(kt.chunks_exact(len)) {
                let qc = qc * scale;
                for (s, k) in scores.iter_mut().zip(k) {
                    *s += qc * k;
                }
            }
            softmax_row(scores);
            out.fill(0.0);
            for (p, v) in scores.iter().zip(v.chunks_exact(d)) {
                for (o, v) in out.iter_mut().zip(v) {
                    *o += p * v;
                }
            }
        }
    }
}

/// `e^x` to about 1 ulp for x in [-87, 88] (clamped beyond), without branches so that it
/// vectorises: `2^n · p(r)` with `r = x - n·ln 2`, `|r| ≤ ln 2 / 2`.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let x = x.clamp(-87.0, 88.0);
    let shifted = x * std::f32::consts::LOG2_E + ROUND;
    let n = shifted - ROUND;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    // Taylor series to r^7 (error under 2e-8 relative for |r| ≤ 0.35).
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0
                    + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r / 5040.0))))));
    // The low bits of `shifted` hold n (two's complement): n + 127 shifted into the
    // exponent is 2^n.
    p * f32::from_bits(shifted.to_bits().wrapping_add(127) << 23)
}

/// The error function to about 2e-7, without branches (both forms are computed and one
/// kept, so that it vectorises): its Taylor series near 0, where the other form would lose
/// digits to cancellation, else Abramowitz and Stegun's 7.1.26 (error under 1.5e-7).
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    const P: f32 = 0.327_591_1;
    const A: [f32; 5] = [
        0.254_829_6,
        -0.284_496_74,
        1.421_413_8,
        -1.453_152,
        1.061_405_4,
    ];
    // 2/√π · (−1)^n / (n! (2n+1)), n = 0..=6.
    const S: [f32; 7] = [
        std::f32::consts::FRAC_2_SQRT_PI,
        -0.376_126_4,
        0.112_837_92,
        -0.026_866_17,
        0.005_223_977_6,
        -0.000_854_832_7,
        0.000_120_553_3,
    ];
    let ax = x.abs();
    let t = 1.0 / (1.0 + P * ax);
    let poly = t * (A[0] + t * (A[1] + t * (A[2] + t * (A[3] + t * A[4]))));
    let far = (1.0 - poly * exp(-ax * ax)).copysign(x);
    let x2 = x * x;
    let near = x
        * (S[0] + x2 * (S[1] + x2 * (S[2] + x2 * (S[3] + x2 * (S[4] + x2 * (S[5] + x2 * S[6]))))));
    if ax < 0.6 {
        near
    } else {
        far
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn random(rng: &mut rand::rngs::StdRng, n: usize, spread: f32) -> Vec<f32> {
        (0..n).map(|_| rng.gen_range(-spread..spread)).collect()
    }

    /// The product computed the plain way from the quantised numbers.
    fn reference(x: &[f32], w: &[f32], bias: &[f32], n: usize, k: usize) -> Vec<f32> {
        let rows = x.len() / k;
        let mut out = vec![0f32; rows * n];
        for r in 0..rows {
            let xr = &x[r * k..(r + 1) * k];
            let lo = xr.iter().fold(0f32, |m, &v| m.min(v));
            let hi = xr.iter().fold(0f32, |m, &v| m.max(v));
            let xs = if hi > lo { (hi - lo) / 255.0 } else { 1.0 };
            let z = (-lo * (1.0 / xs)).round().clamp(0.0, 255.0);
            // Rounded as the product rounds (ties to even, after one multiply).
            let xq: Vec<i64> = xr
                .iter()
                .map(|a| (a * (1.0 / xs) + z).clamp(0.0, 255.0).round_ties_even() as i64 - z as i64)
                .collect();
            for c in 0..n {
                let wr = &w[c * k..(c + 1) * k];
                let ws = wr.iter().fold(0f32, |m, v| m.max(v.abs())) / 127.0;
                let ws = if ws > 0.0 { ws } else { 1.0 };
                let sum: i64 = xq
                    .iter()
                    .zip(wr)
                    .map(|(a, b)| a * (b / ws).round() as i64)
                    .sum();
                out[r * n + c] = sum as f32 * xs * ws + bias[c];
            }
        }
        out
    }

    #[test]
    fn quantised_products_equal_the_plain_reference_on_every_isa() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let shapes = [
            (1, 1, 1),
            (3, 5, 7),
            (5, 17, 33),
            (9, 48, 64),
            (13, 100, 131),
            (4, 384, 64),
        ];
        let isas: Vec<Isa> = [Isa::Portable, Isa::detect()].into_iter().collect();
        for &(rows, n, k) in &shapes {
            let x = random(&mut rng, rows * k, 3.0);
            let w = random(&mut rng, n * k, 0.2);
            let bias = random(&mut rng, n, 1.0);
            let want = reference(&x, &w, &bias, n, k);
            for &isa in &isas {
                let l = QuantLinear::new(isa, &w, &bias, n, k);
                let mut got = vec![f32::NAN; rows * n];
                l.forward(&x, &mut got);
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        (g - w).abs() <= 1e-4 * (1.0 + w.abs()),
                        "{isa:?} {rows}x{n}x{k} at {i}: {g} != {w}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_quantised_product_is_close_to_the_float_one() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let (rows, n, k) = (7, 40, 96);
        let x = random(&mut rng, rows * k, 1.0);
        let w = random(&mut rng, n * k, 0.1);
        let bias = vec![0.5; n];
        let mut got = vec![0f32; rows * n];
        QuantLinear::new(Isa::detect(), &w, &bias, n, k).forward(&x, &mut got);
        for r in 0..rows {
            for c in 0..n {
                let exact: f32 = (0..k).map(|i| x[r * k + i] * w[c * k + i]).sum::<f32>() + 0.5;
                assert!((got[r * n + c] - exact).abs() < 0.02, "{r},{c}");
            }
        }
    }

    #[test]
    fn float_steps_equal_their_plain_definitions() {
        for i in -2000..=2000 {
            let x = i as f32 / 100.0;
            let e = exp(x);
            let want = (x as f64).exp();
            assert!(
                ((e as f64 - want) / want).abs() < 4e-7,
                "exp({x}) = {e}, want {want}"
            );
            let g = erf(x) as f64;
            let want = erf64(x as f64);
            assert!((g - want).abs() < 2e-7, "erf({x}) = {g}, want {want}");
        }
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        for w in [1, 7, 16, 37, 384] {
            let x = random(&mut rng, 3 * w, 4.0);
            let mut g = x.clone();
            gelu(&mut g);
            for (v, g) in x.iter().zip(&g) {
                let want = 0.5 * *v as f64 * (1.0 + erf64(*v as f64 / 2f64.sqrt()));
                assert!((*g as f64 - want).abs() < 1e-6, "gelu({v})");
            }
            let gamma = random(&mut rng, w, 1.0);
            let beta = random(&mut rng, w, 1.0);
            let mut n = x.clone();
            layer_norm(&mut n, &gamma, &beta, 1e-12);
            let mut y = vec![0f32; 3 * w];
            let mut r = x.clone();
            add_layer_norm(&mut y, &mut r, &gamma, &beta, 1e-12);
            assert_eq!(y, n);
            assert_eq!(r, n);
            for (row, got) in x.chunks(w).zip(n.chunks(w)) {
                let mean = row.iter().map(|&v| v as f64).sum::<f64>() / w as f64;
                let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / w as f64;
                for i in 0..w {
                    let want = (row[i] as f64 - mean) / (var + 1e-12).sqrt() * gamma[i] as f64
                        + beta[i] as f64;
                    if w > 1 {
                        assert!((got[i] as f64 - want).abs() < 1e-4, "layer norm {w}");
                    }
                }
            }
        }
    }

    #[test]
    fn attention_equals_its_plain_definition() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(9);
        for (len, d) in [(1, 1), (2, 7), (5, 16), (37, 64), (3, 33)] {
            let q = random(&mut rng, len * d, 2.0);
            let k = random(&mut rng, len * d, 2.0);
            let v = random(&mut rng, len * d, 2.0);
            let mut kt = vec![0f32; len * d];
            for j in 0..len {
                for c in 0..d {
                    kt[c * len + j] = k[j * d + c];
                }
            }
            let mut scores = vec![0f32; len];
            let mut out = vec![f32::NAN; len * d];
            attend(&q, &kt, &v, d, 0.125, &mut scores, &mut out);
            for i in 0..len {
                let s: Vec<f64> = (0..len)
                    .map(|j| {
                        0.125
                            * (0..d)
                                .map(|c| (q[i * d + c] * k[j * d + c]) as f64)
                                .sum::<f64>()
                    })
                    .collect();
                let max = s.iter().cloned().fold(f64::MIN, f64::max);
                let total: f64 = s.iter().map(|x| (x - max).exp()).sum();
                for c in 0..d {
                    let want: f64 = (0..len)
                        .map(|j| (s[j] - max).exp() / total * v[j * d + c] as f64)
                        .sum();
                    let got = out[i * d + c] as f64;
                    assert!(
                        (got - want).abs() < 1e-5,
                        "{len}x{d} at {i},{c}: {got} != {want}"
                    );
                }
            }
        }
    }

    /// erf in double precision (a series, then a continued fraction for large |x|).
    fn erf64(x: f64) -> f64 {
        if x.abs() < 3.0 {
            let mut sum = 0.0;
            let mut term = x;
            for n in 0..200 {
                sum += term / (2 * n + 1) as f64;
                term *= -x * x / (n + 1) as f64;
            }
            sum * 2.0 / std::f64::consts::PI.sqrt()
        } else {
            let ax = x.abs();
            let mut f = 0.0;
            for n in (1..60).rev() {
                f = n as f64 / 2.0 / (ax + f);
            }
            let erfc = (-ax * ax).exp() / std::f64::consts::PI.sqrt() / (ax + f);
            (1.0 - erfc).copysign(x)
        }
    }
}
