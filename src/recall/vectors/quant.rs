//! Vectors kept as int8: each unit vector scaled so that its largest component is ±127, with
//! that scale kept beside it as an f16 (386 bytes for 384 numbers). On LoCoMo's dev split
//! int8 kept the recall of float32 (benches/locomo_recall.rs measures it).

use crate::embed::F16;

/// `v` as int8 numbers and the scale that turns them back (`x ≈ q * scale`). The scale is
/// the f16 at or just above the largest component over 127, and the numbers are rounded
/// against that very scale, so that reading the scale back adds no error of its own.
pub fn quantize(v: &[f32]) -> (Vec<i8>, F16) {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let exact = max / 127.0;
    let mut scale = F16::from_f32(exact);
    if scale.to_f32() < exact {
        scale = F16::from_bits(scale.to_bits() + 1);
    }
    let s = scale.to_f32();
    if max == 0.0 || !max.is_finite() || s == 0.0 || !s.is_finite() {
        return (vec![0; v.len()], F16::ZERO);
    }
    let q = v
        .iter()
        .map(|x| (x / s).round().clamp(-127.0, 127.0) as i8)
        .collect();
    (q, scale)
}

/// The dot product of two int8 vectors of one length.
#[inline(always)]
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    // In blocks of 32, each summed in i32 lanes, which the compiler turns into wide
    // multiply-adds.
    let mut sum = 0i32;
    let mut ca = a.chunks_exact(32);
    let mut cb = b.chunks_exact(32);
    for (x, y) in (&mut ca).zip(&mut cb) {
        let mut s = 0i32;
        for i in 0..32 {
            s += x[i] as i32 * y[i] as i32;
        }
        sum += s;
    }
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        sum += *x as i32 * *y as i32;
    }
    sum
}

/// `out[i] = dot(query, vectors[i·d..(i+1)·d]) · scale[i] · query_scale` for each vector
/// `i` of `vectors` (rows of `d` numbers): the scan of a search by meaning, with AVX2 when
/// the processor has it (checked at run time; the portable build targets older x86-64).
pub fn dots(query: &[i8], vectors: &[i8], scales: &[F16], query_scale: f32, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        #[allow(unsafe_code)]
        unsafe {
            dots_avx2(query, vectors, scales, query_scale, out)
        };
        return;
    }
    dots_plain(query, vectors, scales, query_scale, out);
}

/// [`dots`] with AVX2: each vector's numbers widened to i16 sixteen at a time and multiplied
/// and summed in pairs into i32 lanes (`vpmaddwd`), the query widened once.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dots_avx2(query: &[i8], vectors: &[i8], scales: &[F16], query_scale: f32, out: &mut [f32]) {
    use std::arch::x86_64::*;
    let d = query.len().max(1);
    let blocks = query.len() / 16;
    // SAFETY (each load): 16 bytes from `b * 16` with `b < blocks`, inside the slice.
    #[allow(unsafe_code)]
    let widened: Vec<__m256i> = (0..blocks)
        .map(|b| unsafe {
            _mm256_cvtepi8_epi16(_mm_loadu_si128(query.as_ptr().add(b * 16).cast()))
        })
        .collect();
    for ((o, v), s) in out.iter_mut().zip(vectors.chunks_exact(d)).zip(scales) {
        let mut acc = _mm256_setzero_si256();
        for (b, q) in widened.iter().enumerate() {
            #[allow(unsafe_code)]
            let x = unsafe { _mm256_cvtepi8_epi16(_mm_loadu_si128(v.as_ptr().add(b * 16).cast())) };
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, *q));
        }
        let four = _mm_add_epi32(
            _mm256_castsi256_si128(acc),
            _mm256_extracti128_si256(acc, 1),
        );
        let two = _mm_add_epi32(four, _mm_shuffle_epi32(four, 0b01_00_11_10));
        let one = _mm_add_epi32(two, _mm_shuffle_epi32(two, 0b10_11_00_01));
        let mut sum = _mm_cvtsi128_si32(one);
        for (x, y) in v[blocks * 16..].iter().zip(&query[blocks * 16..]) {
            sum += *x as i32 * *y as i32;
        }
        *o = sum as f32 * s.to_f32() * query_scale;
    }
}

#[inline(always)]
fn dots_plain(query: &[i8], vectors: &[i8], scales: &[F16], query_scale: f32, out: &mut [f32]) {
    let d = query.len().max(1);
    for ((o, v), s) in out.iter_mut().zip(vectors.chunks_exact(d)).zip(scales) {
        *o = dot_i8(query, v) as f32 * s.to_f32() * query_scale;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantized_cosine_is_close_to_the_float_one() {
        let a: Vec<f32> = (0..384)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) / 40.0)
            .collect();
        let b: Vec<f32> = (0..384)
            .map(|i| ((i * 5 % 11) as f32 - 5.0) / 35.0)
            .collect();
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let (qa, sa) = quantize(&a);
        let (qb, sb) = quantize(&b);
        let approx = dot_i8(&qa, &qb) as f32 * sa.to_f32() * sb.to_f32();
        assert!(
            (exact - approx).abs() < 0.01 * exact.abs().max(1.0),
            "{exact} {approx}"
        );
        // The scan gives the same, with and without AVX2, whatever the length.
        for d in [384, 7, 33] {
            let qa: Vec<i8> = (0..d)
                .map(|i| ((i * 37 % 255) as i32 - 127) as i8)
                .collect();
            let vs: Vec<i8> = (0..3 * d)
                .map(|i| ((i * 91 % 255) as i32 - 127) as i8)
                .collect();
            let want: Vec<f32> = vs
                .chunks(d)
                .map(|v| dot_i8(&qa, v) as f32 * 0.5 * 0.25)
                .collect();
            let mut out = vec![0f32; 3];
            dots(&qa, &vs, &[F16::from_f32(0.5); 3], 0.25, &mut out);
            assert_eq!(out, want);
            dots_plain(&qa, &vs, &[F16::from_f32(0.5); 3], 0.25, &mut out);
            assert_eq!(out, want);
        }
        assert_eq!(quantize(&[0.0, 0.0]), (vec![0, 0], F16::ZERO));
        // The f16 just above 1/127 makes 0.5 a little under 63.5.
        let (q, s) = quantize(&[0.5, -1.0]);
        assert_eq!(q, vec![63, -127]);
        assert!(s.to_f32() >= 1.0 / 127.0);
    }
}
