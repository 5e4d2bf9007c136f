//! Puts the target board's memory map, as `memory.x`, where cortex-m-rt's link.x finds it
//! (none sits in this directory, which the linker would search first): QEMU's
//! mps2-an386 for Cortex-M4 (thumbv7em), its microbit for Cortex-M0 (thumbv6m).
use std::{env, fs, path::PathBuf};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let target = env::var("TARGET").unwrap_or_default();
    let memory = if target.starts_with("thumbv6m") {
        "memory-m0.x"
    } else {
        "memory-m4.x"
    };
    fs::copy(memory, out.join("memory.x")).expect("memory map");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory-m4.x");
    println!("cargo:rerun-if-changed=memory-m0.x");
}
