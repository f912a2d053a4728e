//! Byte tests eight bytes at a time, for the scans that run once per key or per string on
//! hot paths (grouping keys, escaping JSON).

/// A mask with the high bit set in each byte of `word` (little-endian) below `n` (`n` at
/// most 0x7f), and perhaps in bytes above such a byte: a borrow carries upward only from a
/// byte that matched itself, so the lowest set bit is exact and every matching byte is set.
/// Bytes 0x80 and up are never set.
pub(crate) fn bytes_below(word: u64, n: u8) -> u64 {
    debug_assert!(n <= 0x7f, "a borrow may hide a byte below {n}");
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS
}

/// A mask as [`bytes_below`]'s of the bytes of `word` equal to `b`.
pub(crate) fn bytes_equal(word: u64, b: u8) -> u64 {
    bytes_below(word ^ (0x0101_0101_0101_0101 * u64::from(b)), 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every matching byte is flagged and the lowest flag is a match, for every byte value
    /// in every position, next to a match below it (whose borrow may flag falsely).
    #[test]
    fn masks_flag_every_match_and_the_lowest_exactly() {
        for n in [1u8, 2, 0x20, 0x7f] {
            for pos in 0..8 {
                for v in 0..=255u8 {
                    for below in [None, Some(0u8), Some(1)] {
                        let mut bytes = [0x61u8; 8];
                        bytes[pos] = v;
                        if let (Some(b), true) = (below, pos > 0) {
                            bytes[pos - 1] = b;
                        }
                        let m = bytes_below(u64::from_le_bytes(bytes), n);
                        for (i, &x) in bytes.iter().enumerate() {
                            if x < n {
                                assert_ne!(m & (0x80 << (8 * i)), 0, "{bytes:?} {n}");
                            }
                        }
                        if m != 0 {
                            assert!(bytes[m.trailing_zeros() as usize / 8] < n, "{bytes:?}");
                        }
                    }
                }
            }
        }
        let word = u64::from_le_bytes(*b"a\"b\"\\xyz");
        assert_eq!(bytes_equal(word, b'"').trailing_zeros() / 8, 1);
        assert_eq!(bytes_equal(word, b'\\').trailing_zeros() / 8, 4);
        assert_eq!(bytes_equal(word, b'q'), 0);
    }
}
