//! The server's request frame decoder on any bytes, cut into reads of any sizes: it takes
//! exactly the bytes up to and including the first newline, refuses a line over its limit
//! without holding more than the limit, and yields the line exactly when it is UTF-8; never a
//! panic.
#![no_main]

#[path = "../../crates/line-frame/src/lib.rs"]
mod frame;

use frame::{FrameDecoder, FrameError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&[limit, seed], bytes)) = data.split_first_chunk::<2>() else {
        return;
    };
    // Limits from 0 to 1,020 bytes, so that inputs both over and under them are found.
    let limit = usize::from(limit) * 4;
    let newline = bytes.iter().position(|&b| b == b'\n');
    let body = &bytes[..newline.unwrap_or(bytes.len())];

    let mut decoder = FrameDecoder::new(limit);
    let mut taken = 0;
    let mut state = u32::from(seed) | 1;
    while taken < bytes.len() && !decoder.is_complete() {
        // A read of 1 to 64 bytes, from a small generator seeded by the input.
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let size = 1 + (state >> 16) as usize % 64;
        let read = &bytes[taken..bytes.len().min(taken + size)];
        match decoder.push(read) {
            Ok(n) => {
                assert!(n <= read.len());
                taken += n;
            }
            Err(error) => {
                assert_eq!(error, FrameError::TooLong);
                assert!(body.len() > limit, "refused a line of {} bytes", body.len());
                assert!(decoder.held() <= limit);
                return;
            }
        }
        assert!(decoder.held() <= limit);
    }
    assert!(body.len() <= limit, "took a line of {} bytes", body.len());
    assert_eq!(taken, newline.map_or(bytes.len(), |at| at + 1));
    assert_eq!(decoder.is_complete(), newline.is_some());
    if decoder.is_complete() {
        assert_eq!(decoder.push(b"\n"), Ok(0));
    }
    match decoder.finish() {
        Ok(line) => assert_eq!(line.as_bytes(), body),
        Err(FrameError::NotUtf8) => assert!(std::str::from_utf8(body).is_err()),
        Err(FrameError::Empty) => assert!(bytes.is_empty()),
        Err(FrameError::TooLong) => panic!("too long at the end"),
    }
});
