//! Half-precision numbers (IEEE 754 binary16) and bfloat16, as far as memoir needs them:
//! the scales stored beside 8-bit vectors, and model weights saved in either format. Only
//! conversion: every sum is done in `f32`.

/// An IEEE 754 binary16 number, kept as its bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct F16(u16);

impl F16 {
    /// Positive zero.
    pub const ZERO: F16 = F16(0);

    /// The number with these bits.
    pub const fn from_bits(bits: u16) -> F16 {
        F16(bits)
    }

    /// Its bits.
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// The number stored little-endian in `bytes`.
    pub const fn from_le_bytes(bytes: [u8; 2]) -> F16 {
        F16(u16::from_le_bytes(bytes))
    }

    /// Its little-endian bytes.
    pub const fn to_le_bytes(self) -> [u8; 2] {
        self.0.to_le_bytes()
    }

    /// `x` rounded to the nearest binary16, ties to even; out of range becomes infinite,
    /// a NaN stays a NaN.
    pub fn from_f32(x: f32) -> F16 {
        let b = x.to_bits();
        let sign = ((b >> 16) & 0x8000) as u16;
        let exp = ((b >> 23) & 0xff) as i32;
        let man = b & 0x7f_ffff;
        if exp == 0xff {
            let nan = if man != 0 {
                0x200 | (man >> 13) as u16
            } else {
                0
            };
            return F16(sign | 0x7c00 | nan);
        }
        // The exponent rebiased for binary16 (bias 15 instead of 127).
        let e = exp - 112;
        if e >= 0x1f {
            return F16(sign | 0x7c00);
        }
        if e <= 0 {
            // A subnormal binary16 (or zero): the significand with its leading one, shifted
            // right past the exponent's floor, then rounded.
            if e < -10 {
                return F16(sign);
            }
            let m = man | 0x80_0000;
            let shift = (14 - e) as u32;
            return F16(sign | round_shifted(m, shift) as u16);
        }
        // Rounding may carry into the exponent, which is then right (up to infinity).
        let h = ((e as u32) << 10) | (man >> 13);
        let rem = man & 0x1fff;
        let up = rem > 0x1000 || (rem == 0x1000 && h & 1 == 1);
        F16(sign | (h + u32::from(up)) as u16)
    }

    /// The number as an `f32` (exactly).
    pub fn to_f32(self) -> f32 {
        let h = u32::from(self.0);
        let sign = (h & 0x8000) << 16;
        let exp = (h >> 10) & 0x1f;
        let man = h & 0x3ff;
        match exp {
            0 => {
                // Zero or subnormal: man × 2^-24, exact in f32.
                let v = man as f32 * f32::from_bits(0x3380_0000);
                f32::from_bits(sign | v.to_bits())
            }
            0x1f => f32::from_bits(sign | 0x7f80_0000 | (man << 13)),
            _ => f32::from_bits(sign | ((exp + 112) << 23) | (man << 13)),
        }
    }
}

/// `m >> shift`, rounded to nearest, ties to even.
fn round_shifted(m: u32, shift: u32) -> u32 {
    let q = m >> shift;
    let rem = m & ((1 << shift) - 1);
    let half = 1 << (shift - 1);
    q + u32::from(rem > half || (rem == half && q & 1 == 1))
}

/// A bfloat16 (the top half of an `f32`) stored little-endian in `bytes`, as an `f32`.
pub fn bf16_to_f32(bytes: [u8; 2]) -> f32 {
    f32::from_bits(u32::from(u16::from_le_bytes(bytes)) << 16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_binary16_converts_as_the_half_crate_does() {
        for bits in 0..=u16::MAX {
            let ours = F16::from_bits(bits).to_f32();
            let theirs = half::f16::from_bits(bits).to_f32();
            if theirs.is_nan() {
                assert!(ours.is_nan(), "{bits:#06x}");
                assert!(F16::from_f32(ours).to_f32().is_nan());
            } else {
                assert_eq!(ours.to_bits(), theirs.to_bits(), "{bits:#06x}");
                assert_eq!(
                    F16::from_f32(ours).to_bits(),
                    bits,
                    "round trip {bits:#06x}"
                );
            }
        }
    }

    #[test]
    fn edges_round_as_the_half_crate_does() {
        let edges = [
            0.0f32,
            -0.0,
            65504.0,
            65519.99,
            65520.0,
            1e9,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE,
            2f32.powi(-24),
            2f32.powi(-25),
            2f32.powi(-25) * 1.000_001,
            2f32.powi(-26),
            3.0 * 2f32.powi(-25),
            1.0 + 2f32.powi(-11),
            1.0 + 3.0 * 2f32.powi(-11),
            6.1e-5,
            6.1035156e-5,
        ];
        for x in edges.into_iter().flat_map(|x| [x, -x]) {
            assert_eq!(
                F16::from_f32(x).to_bits(),
                half::f16::from_f32(x).to_bits(),
                "{x:e}"
            );
        }
    }

    #[test]
    fn bfloat16_is_the_top_of_an_f32() {
        for x in [1.5f32, -2.0, 0.0, 3.140625] {
            let b = ((x.to_bits() >> 16) as u16).to_le_bytes();
            assert_eq!(bf16_to_f32(b), half::bf16::from_le_bytes(b).to_f32());
        }
    }

    proptest! {
        #[test]
        fn any_f32_rounds_as_the_half_crate_does(bits in any::<u32>()) {
            let x = f32::from_bits(bits);
            let (ours, theirs) = (F16::from_f32(x), half::f16::from_f32(x));
            if x.is_nan() {
                prop_assert!(ours.to_f32().is_nan());
            } else {
                prop_assert_eq!(ours.to_bits(), theirs.to_bits(), "{:e}", x);
            }
        }
    }
}
