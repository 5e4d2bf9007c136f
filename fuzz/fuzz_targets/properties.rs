//! The Java-properties config reader on arbitrary text: never a panic, and a config read
//! without error can be read again on top of itself with the same result.
#![no_main]

use libfuzzer_sys::fuzz_target;
use load_core::Config;

fuzz_target!(|text: &str| {
    if let Ok(config) = Config::from_properties(text) {
        let mut again = config;
        again
            .apply_properties(text)
            .expect("a text read once reads again");
        assert_eq!(again, config, "reading twice changed the config");
    }
});
