//! Tokenizer throughput on ASCII prose, on mostly-ASCII prose and on Thai, and what the first
//! Thai query of a process costs (the word segmenter is set up then).
//!
//! The figures are read against the same benchmark run on another revision of the tokenizer
//! (`cargo bench` on each, compared by criterion).
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lexical_score::{QueryTokens, tokenize};

const ENGLISH: &str = "Before a release, run the end-to-end suite against staging, check the \
error budget on the dashboard, and tag the commit. If the canary shows more than one percent of \
errors for ten minutes, roll back with the runbook and write a short note for the team. ";

const MOSTLY_ASCII: &str = "Deploy — don’t skip the canary: Zürich’s cache warms in ~90 s, \
then the café API answers. Tag v1.2.3 → notify #release-ops. ";

const THAI: &str = "ก่อนปล่อยเวอร์ชันใหม่ให้รันเทสต์ทั้งหมดบนเครื่องทดสอบ ตรวจกราฟข้อผิดพลาดบนแดชบอร์ด \
แล้วแท็กคอมมิต ถ้าอัตราข้อผิดพลาดเกินหนึ่งเปอร์เซ็นต์นานสิบนาที ให้ย้อนกลับตามคู่มือและแจ้งทีม ";

/// `unit` repeated up to about `bytes` bytes.
fn text(unit: &str, bytes: usize) -> String {
    unit.repeat(bytes.div_ceil(unit.len()))
}

fn bench(c: &mut Criterion) {
    // Measured before criterion warms anything up: the first Thai query sets the segmenter up.
    let first = Instant::now();
    black_box(QueryTokens::new(black_box("การปรับใช้ระบบ")));
    let first = first.elapsed();
    let second = Instant::now();
    black_box(QueryTokens::new(black_box("การปรับใช้ระบบ")));
    let second = second.elapsed();
    println!(
        "first Thai query of the process (segmenter set-up included): {first:?}; the same query again: {second:?}"
    );

    let mut group = c.benchmark_group("tokenize");
    for (name, unit) in [
        ("ascii_4k", ENGLISH),
        ("mostly_ascii_4k", MOSTLY_ASCII),
        ("thai_4k", THAI),
    ] {
        let input = text(unit, 4096);
        group.throughput(Throughput::Bytes(input.len() as u64));
        group.bench_function(name, |b| b.iter(|| tokenize(black_box(&input))));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
