//! The memory record test vector of store-format.md, section 12, checked byte for byte.

use memoir::key::Key;
use memoir::memory::{related, Entry, Record, Status};
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

/// A relation set of two paths and a record that names it (store-format.md, section 12).
fn set_vector() -> (Record, Record) {
    let (set_key, set) = related::set_record(&["a.one".to_string(), "a.two".to_string()]).unwrap();
    assert_eq!(set_key.namespace(), related::NAMESPACE);
    let key = Key::new("default", "a.one").unwrap();
    let mut r = Record::new(&key, Entry::new("shared", 1.0, 1767225600.0), Vec::new());
    r.related_sets = vec![set.to_blob().unwrap().to_bytes_and_id().0];
    (set, r)
}

const SET_KEY: &str =
    "memoir:related:set.02dd16c6f8c6b75e37385fdfa8787bec5e9c8159e43cd76750c686912cae40b3";
const SET_BYTES: &str = "a7636b657978447365742e3032646431366336663863366237356533373338356664666138373837626563356539633831353965343363643736373530633638363931326361653430623367656e747269657381a4667374617475736661637469766567636f6e74656e74715b22612e6f6e65222c22612e74776f225d6974696d657374616d70fb00000000000000006a636f6e666964656e6365fb3ff0000000000000696e616d6573706163656e6d656d6f69723a72656c617465646974696d657374616d70fb00000000000000006a636f6e666964656e6365fb3ff00000000000006c72656c617465645f6b657973806e736368656d615f76657273696f6e02";
const SET_ID: &str = "814d5fea695719cab8d6a740f5d21d501f09b87921332247739ff16afc7caba4";
const MEMBER_BYTES: &str = "a8636b657965612e6f6e6567656e747269657381a4667374617475736661637469766567636f6e74656e74667368617265646974696d657374616d70fb41da556e400000006a636f6e666964656e6365fb3ff0000000000000696e616d6573706163656764656661756c746974696d657374616d70fb41da556e400000006a636f6e666964656e6365fb3ff00000000000006c72656c617465645f6b657973806c72656c617465645f73657473815820814d5fea695719cab8d6a740f5d21d501f09b87921332247739ff16afc7caba46e736368656d615f76657273696f6e02";
const MEMBER_ID: &str = "f1ac0cc114321a75d9c3388f0a1eeeb610da35d0b3c89b2752dcba9e97e61ed4";

#[test]
fn relation_set_vector() {
    let (set, r) = set_vector();
    let (set_key, _) = related::set_record(&["a.one".to_string(), "a.two".to_string()]).unwrap();
    let set_blob = set.to_blob().unwrap();
    let blob = r.to_blob().unwrap();
    println!(
        "set key {set_key}\nset {}\nset id {}\nmember {}\nmember id {}",
        hex(&set_blob.0),
        set_blob.to_bytes_and_id().0.to_hex(),
        hex(&blob.0),
        blob.to_bytes_and_id().0.to_hex()
    );
    assert_eq!(set_key.to_string(), SET_KEY);
    assert_eq!(set.content(), r#"["a.one","a.two"]"#);
    assert_eq!(hex(&set_blob.0), SET_BYTES);
    assert_eq!(set_blob.to_bytes_and_id().0.to_hex(), SET_ID);
    assert_eq!(hex(&blob.0), MEMBER_BYTES);
    assert_eq!(blob.to_bytes_and_id().0.to_hex(), MEMBER_ID);
    assert_eq!(Record::decode(&blob.0).unwrap(), r);
    assert_eq!(related::set_paths(&set).unwrap(), ["a.one", "a.two"]);
    // The eighth field comes between `related_keys` and `schema_version`; an empty list
    // is written by leaving the field out, so a stored empty list is refused.
    let v: ciborium::Value = ciborium::from_reader(&blob.0[..]).unwrap();
    let keys: Vec<&str> = v
        .as_map()
        .unwrap()
        .iter()
        .map(|(k, _)| k.as_text().unwrap())
        .collect();
    assert_eq!(
        &keys[5..],
        ["related_keys", "related_sets", "schema_version"]
    );
    let mut empty = Vec::new();
    let mut map = v.as_map().unwrap().clone();
    map[6].1 = ciborium::Value::Array(vec![]);
    ciborium::into_writer(&ciborium::Value::Map(map), &mut empty).unwrap();
    assert!(Record::decode(&empty).is_err());
    // A set whose content is not a list of paths is refused.
    let key = Key::new(related::NAMESPACE, "set.x").unwrap();
    let bad = Record::new(&key, Entry::new("[\"a b\"]", 1.0, 0.0), Vec::new());
    assert!(related::set_paths(&bad).is_err());
}
