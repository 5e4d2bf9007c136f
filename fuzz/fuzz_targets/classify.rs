//! `PathRules::classify` on arbitrary targets: never panics, ignores the query, and excludes
//! only targets with none of the markers of a non-canonical path.
#![no_main]

use libfuzzer_sys::fuzz_target;
use load_core::{Class, path::PathRules};

fuzz_target!(|target: &[u8]| {
    let class = PathRules::FESS.classify(target);

    // What follows the first `?` or `#` never matters.
    if let Some(end) = target.iter().position(|&b| b == b'?' || b == b'#') {
        assert_eq!(
            class,
            PathRules::FESS.classify(&target[..end]),
            "query changed the class"
        );
    }

    if class == Class::Excluded {
        let path_start = if target.first() == Some(&b'/') {
            0
        } else {
            // Absolute form: the path starts after `scheme://authority`.
            let after = target
                .windows(3)
                .position(|w| w == b"://")
                .expect("a non-origin target is excluded only in absolute form")
                + 3;
            after
                + target[after..]
                    .iter()
                    .position(|&b| b == b'/')
                    .expect("an excluded absolute-form target has a path")
        };
        let end = target
            .iter()
            .position(|&b| b == b'?' || b == b'#')
            .unwrap_or(target.len());
        let path = &target[path_start..end];
        assert!(!path.contains(&b'\\'), "backslash");
        assert!(!path.iter().any(u8::is_ascii_control), "control character");
        assert!(!path.windows(2).any(|w| w == b"//"), "empty segment");
        for segment in path.split(|&b| b == b'/') {
            let name = segment.split(|&b| b == b';').next().unwrap_or_default();
            assert!(name != b"." && name != b"..", "dot segment");
        }
        let lower = path.to_ascii_lowercase();
        for marker in [
            &b"%2f"[..],
            b"%5c",
            b"%25",
            b"%2e",
            b"%3b",
            b"%3f",
            b"%23",
            b"%00",
        ] {
            assert!(!lower.windows(3).any(|w| w == marker), "escape {marker:?}");
        }
    }
});
