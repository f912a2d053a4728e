//! Import lines (JSON Lines of records): any text is read into records or refused with a
//! typed error naming the line, never a panic; every record read re-encodes canonically and
//! decodes back to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memoir::app::parse_lines;
use memoir::memory::Record;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for allow_secrets in [false, true] {
        if let Ok(records) = parse_lines(text, "default", 1_700_000_000.0, allow_secrets) {
            for r in records.values() {
                let bytes = r.encode().expect("a record read from a line encodes");
                assert_eq!(&Record::decode(&bytes).expect("its encoding decodes"), r);
            }
        }
    }
});
