//! The Java-properties reader and the config on arbitrary bytes (UTF-8 or not): never a
//! panic; every entry's key and value are valid UTF-8 within their capacities; a config
//! read without error reads again on top of itself to the same config.
#![no_main]

use libfuzzer_sys::fuzz_target;
use load_core::Config;
use load_core::properties::{Entry, Properties};

fuzz_target!(|bytes: &[u8]| {
    for entry in Properties::new(bytes) {
        let Ok(entry) = entry else { break };
        assert!(entry.key().len() <= Entry::KEY_CAPACITY);
        assert!(entry.value().len() <= Entry::VALUE_CAPACITY);
        assert!(entry.line() >= 1);
    }
    if let Ok((config, encoding)) = Config::from_properties_bytes(bytes) {
        let mut again = config.clone();
        let encoding_again = again
            .apply_properties_bytes(bytes)
            .expect("bytes read once read again");
        assert_eq!(again, config, "reading twice changed the config");
        assert_eq!(encoding, encoding_again);
    }
});
