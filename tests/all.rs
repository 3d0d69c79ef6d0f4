//! Every integration test in one test binary. With `lto = "thin"` in the release profile each test
//! binary paid its own link of tract and tokenizers, about 140 s on 2 cores: fourteen binaries were
//! most of `cargo test --release`'s half hour. One binary links once. Each file stays a module named
//! after the stage it tests, so `cargo test --release --test all quote::` runs one of them.

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
