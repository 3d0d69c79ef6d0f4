//! Every integration test in one test binary. With `lto = "thin"` in the release profile each test
//! binary paid its own link of tract and tokenizers, about 140 s on 2 cores: fourteen binaries were
//! most of `cargo test --release`'s 42-minute build (11 minutes now). One binary links once. Each
//! file stays a module named after the stage it tests, so `cargo test --release --test all quote::`
//! runs one of them.

mod common;

mod answer;
mod cli;
mod context;
mod families;
mod hostile;
mod limits;
mod misattribution;
mod multi_quote;
mod nli;
mod quote;
mod stream;
mod support;
mod transcript;
mod verify;

/// With `autotests = false` a new `tests/*.rs` file is not a test binary of its own: it runs only
/// if it is a module here. A file left out would be skipped without a word, so this fails instead.
#[test]
fn every_test_file_is_a_module_of_this_binary() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests");
    let this = std::fs::read_to_string(format!("{dir}/all.rs")).unwrap();
    let mut files = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        if path.extension().is_some_and(|e| e == "rs") && stem != "all" {
            files += 1;
            assert!(this.lines().any(|l| l.trim() == format!("mod {stem};")), "tests/{stem}.rs is not declared in tests/all.rs: its tests never run");
        }
    }
    assert!(files >= 14, "only {files} test files found in {dir}");
}
