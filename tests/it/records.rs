//! The memory record test vector of store-format.md, section 12, checked byte for byte.

use memoir::key::Key;
use memoir::memory::{Entry, Record, Status};
use memoir::object::{Object, ObjectId};

use memoir::object::{from_hex, to_hex as hex};

fn vector() -> Record {
    let key = Key::new("default", "preferences.coding.testing").unwrap();
    let mut old = Entry::new("prefers unittest", 0.5, 1767225000.0);
    old.status = Status::Superseded;
    let mut new = Entry::new("prefers pytest", 1.0, 1767225600.5);
    new.source = Some("cli".into());
    new.actor = Some("agent-1".into());
    let mut r = Record::new(&key, old, vec!["tools.test".into()]);
    r.entries.push(new);
    r.refresh();
    r
}

const BYTES: &str = "a7636b6579781a707265666572656e6365732e636f64696e672e74657374696e6767656e747269657382a4667374617475736a7375706572736564656467636f6e74656e74707072656665727320756e6974746573746974696d657374616d70fb41da556daa0000006a636f6e666964656e6365fb3fe0000000000000a6656163746f72676167656e742d3166736f7572636563636c69667374617475736661637469766567636f6e74656e746e70726566657273207079746573746974696d657374616d70fb41da556e402000006a636f6e666964656e6365fb3ff0000000000000696e616d6573706163656764656661756c746974696d657374616d70fb41da556e402000006a636f6e666964656e6365fb3ff00000000000006c72656c617465645f6b657973816a746f6f6c732e746573746e736368656d615f76657273696f6e02";
const ID: &str = "9560c62002daba32817da20cded09ec192738afd918a0755ed965383c638c8ba";

#[test]
fn record_vector() {
    let r = vector();
    let blob = r.to_blob().unwrap();
    let (id, bytes) = blob.to_bytes_and_id();
    println!(
        "record {}\nblob {}\nid {}",
        hex(&blob.0),
        hex(&bytes),
        id.to_hex()
    );
    assert_eq!(hex(&blob.0), BYTES);
    assert_eq!(id, ID.parse::<ObjectId>().unwrap());
    assert_eq!(Record::decode(&blob.0).unwrap(), r);
    assert_eq!(r.content(), "prefers pytest");
    assert_eq!(r.confidence, 1.0);
    assert_eq!(r.timestamp, 1767225600.5);
    // An independent CBOR decoder reads the same map.
    let v: ciborium::Value = ciborium::from_reader(&blob.0[..]).unwrap();
    let keys: Vec<String> = v
        .as_map()
        .unwrap()
        .iter()
        .map(|(k, _)| k.as_text().unwrap().to_string())
        .collect();
    assert_eq!(
        keys,
        [
            "key",
            "entries",
            "namespace",
            "timestamp",
            "confidence",
            "related_keys",
            "schema_version"
        ]
    );
}

#[test]
fn records_that_break_the_profile_are_refused() {
    let b = vector().encode().unwrap();
    // A map head that claims more pairs than follow.
    let mut bad = b.clone();
    bad[0] = 0xa8; // a map of 8 pairs that holds 7
    assert!(Record::decode(&bad).is_err());
    // A NaN confidence (the last float before related_keys) is refused.
    let nan = f64::NAN.to_bits().to_be_bytes();
    let at = b.windows(11).rposition(|w| w == b"\x6aconfidence").unwrap() + 12;
    let mut bad = b.clone();
    bad[at..at + 8].copy_from_slice(&nan);
    assert!(Record::decode(&bad).is_err());
    bad[at..at + 8].copy_from_slice(&1.0f64.to_bits().to_be_bytes());
    assert_eq!(bad, b);
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn valid() -> Vec<u8> {
        from_hex(BYTES).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Random bytes never panic the record decoder.
        #[test]
        fn random_bytes_decode_to_an_error_or_a_record(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            let _ = Record::decode(&bytes);
        }

        /// Flipped, truncated or extended valid bytes never panic; whatever decodes
        /// re-encodes to the same bytes (the decoder accepts only canonical records).
        #[test]
        fn mutated_records_never_panic(flips in prop::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..4),
                                      cut in any::<prop::sample::Index>(), extend in any::<bool>()) {
            let mut b = valid();
            for (i, bit) in &flips {
                let at = i.index(b.len());
                b[at] ^= 1 << bit;
            }
            if extend {
                b.push(0);
            } else {
                b.truncate(cut.index(b.len() + 1));
            }
            if let Ok(r) = Record::decode(&b) {
                prop_assert_eq!(r.encode().unwrap(), b);
            }
        }

        /// JSON records from imports never panic the reader, whatever their shape.
        #[test]
        fn arbitrary_json_values_are_read_or_refused(s in "[\\[\\]{}\",:0-9a-z .-]{0,80}") {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&s) {
                let _ = Record::from_json(&v, "default", 1767225600.0);
            }
        }
    }
}
