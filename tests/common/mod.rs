#![allow(dead_code)]
use meetcite::{build_context, parse_chunks, Chunk, Context, ContextOptions, Order};

pub fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

pub fn pricing_chunks() -> Vec<Chunk> {
    parse_chunks(&fixture("pricing_chunks.json")).unwrap()
}

pub fn pricing_context() -> Context {
    build_context(&pricing_chunks(), &ContextOptions { order: Order::Date, ..Default::default() })
}
