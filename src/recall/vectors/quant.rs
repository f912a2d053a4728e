//! Vectors kept as int8: each unit vector scaled so that its largest component is ±127, with
//! that scale kept beside it (388 bytes for 384 numbers). On LoCoMo's dev split int8 kept
//! the recall of float32 (benches/locomo_recall.rs measures it).

/// `v` as int8 numbers and the scale that turns them back (`x ≈ q * scale`).
pub fn quantize(v: &[f32]) -> (Vec<i8>, f32) {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        return (vec![0; v.len()], 0.0);
    }
    let scale = max / 127.0;
    let q = v
        .iter()
        .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
        .collect();
    (q, scale)
}

/// The dot product of two int8 vectors of one length.
#[inline]
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
        let approx = dot_i8(&qa, &qb) as f32 * sa * sb;
        assert!(
            (exact - approx).abs() < 0.01 * exact.abs().max(1.0),
            "{exact} {approx}"
        );
        assert_eq!(quantize(&[0.0, 0.0]), (vec![0, 0], 0.0));
        let (q, _) = quantize(&[0.5, -1.0]);
        assert_eq!(q, vec![64, -127]);
    }
}
