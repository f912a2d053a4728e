//! Stored bytes (canonical CBOR): every decoder (tree node, blob, commit, key, memory record)
//! returns a typed error or a value, never a panic; whatever decodes re-encodes to exactly
//! the bytes it came from (the decoders accept only canonical encodings).
#![no_main]

use libfuzzer_sys::fuzz_target;
use memoir::key::Key;
use memoir::memory::Record;
use memoir::object::{peek_kind, Blob, Object};
use memoir::prolly::Node;
use memoir::repo::Commit;

fuzz_target!(|bytes: &[u8]| {
    let _ = peek_kind(bytes);
    if let Ok(n) = Node::decode(bytes) {
        assert_eq!(n.encode(), bytes, "node decoded from non-canonical bytes");
    }
    if let Ok(n) = Node::decode_shared(bytes.to_vec().into()) {
        assert_eq!(
            n.encode(),
            bytes,
            "shared node decoded from non-canonical bytes"
        );
    }
    if let Ok(b) = Blob::decode(bytes) {
        assert_eq!(b.encode(), bytes, "blob decoded from non-canonical bytes");
    }
    if let Ok(c) = Commit::decode(bytes) {
        assert_eq!(c.encode(), bytes, "commit decoded from non-canonical bytes");
    }
    if let Ok(k) = Key::decode(bytes) {
        assert_eq!(k.encode(), bytes, "key decoded from non-canonical bytes");
    }
    if let Ok(r) = Record::decode(bytes) {
        assert_eq!(
            r.encode().unwrap(),
            bytes,
            "record decoded from non-canonical bytes"
        );
    }
});
