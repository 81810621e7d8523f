#![forbid(unsafe_code)]
//! One message per line: a frame is one line of UTF-8 ending in `\n`, at most a stated number of
//! bytes. [`FrameDecoder`] finds one frame in the bytes a reader hands it, chunk by chunk, so a
//! blocking client and an async server cut frames with the same code, and a line over the limit
//! is refused before it is held.
//!
//! This crate depends on the standard library alone (its fuzz target includes this file).
//!
//! # Example
//!
//! ```
//! use line_frame::{FrameDecoder, FrameError};
//!
//! let mut decoder = FrameDecoder::new(64);
//! // The bytes arrive in two reads; the second holds the newline and the start of what follows.
//! assert_eq!(decoder.push(b"{\"kind\":")?, 8);
//! assert_eq!(decoder.push(b"\"status\"}\nnext")?, 10);
//! assert!(decoder.is_complete());
//! assert_eq!(decoder.finish()?, "{\"kind\":\"status\"}");
//!
//! let mut small = FrameDecoder::new(4);
//! assert_eq!(small.push(b"too long\n"), Err(FrameError::TooLong));
//! # Ok::<(), FrameError>(())
//! ```

/// Why the bytes read hold no frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// The line is over the decoder's limit.
    TooLong,
    /// The line is not UTF-8.
    NotUtf8,
    /// The input ended before any byte.
    Empty,
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::TooLong => "the line is over the limit",
            Self::NotUtf8 => "the line is not UTF-8",
            Self::Empty => "the input ended before the line began",
        })
    }
}

impl std::error::Error for FrameError {}

/// Growth past this is in steps of this size rather than doubling, so a frame near the limit
/// costs at most this much unused capacity.
const GROWTH_STEP: usize = 1024 * 1024;

/// Collects the bytes of one frame, up to and including its newline.
#[derive(Debug)]
pub struct FrameDecoder {
    line: Vec<u8>,
    limit: usize,
    complete: bool,
}

impl FrameDecoder {
    /// A decoder of one frame of at most `limit` bytes, the newline excluded.
    pub const fn new(limit: usize) -> Self {
        Self {
            line: Vec::new(),
            limit,
            complete: false,
        }
    }

    /// The bytes of the frame held so far.
    pub const fn held(&self) -> usize {
        self.line.len()
    }

    /// Whether the frame's newline has been read.
    pub const fn is_complete(&self) -> bool {
        self.complete
    }

    /// Takes bytes just read and returns how many of them belong to the frame: all of them
    /// until the newline, the newline included. Bytes after a complete frame are not taken.
    pub fn push(&mut self, bytes: &[u8]) -> Result<usize, FrameError> {
        if self.complete {
            return Ok(0);
        }
        let newline = bytes.iter().position(|&b| b == b'\n');
        let body = newline.unwrap_or(bytes.len());
        if self.line.len().saturating_add(body) > self.limit {
            return Err(FrameError::TooLong);
        }
        if self.line.capacity() - self.line.len() < body {
            let step = self.line.len().clamp(body, GROWTH_STEP.max(body));
            self.line.reserve_exact(step);
        }
        self.line.extend_from_slice(&bytes[..body]);
        match newline {
            Some(at) => {
                self.complete = true;
                Ok(at + 1)
            }
            None => Ok(bytes.len()),
        }
    }

    /// The frame, without its newline: the line read so far, once its newline came or the
    /// input ended.
    pub fn finish(self) -> Result<String, FrameError> {
        String::from_utf8(self.finish_bytes()?).map_err(|_| FrameError::NotUtf8)
    }

    /// The frame's bytes, without its newline, whether or not they are UTF-8.
    pub fn finish_bytes(self) -> Result<Vec<u8>, FrameError> {
        if !self.complete && self.line.is_empty() {
            return Err(FrameError::Empty);
        }
        Ok(self.line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_ends_at_its_newline_and_the_bytes_after_it_are_left() {
        let mut decoder = FrameDecoder::new(100);
        assert_eq!(decoder.push(b"{\"a\"").unwrap(), 4);
        assert!(!decoder.is_complete());
        assert_eq!(decoder.push(b":1}\nrest").unwrap(), 4);
        assert!(decoder.is_complete());
        assert_eq!(decoder.push(b"more").unwrap(), 0);
        assert_eq!(decoder.finish().unwrap(), "{\"a\":1}");
    }

    #[test]
    fn a_line_over_the_limit_is_refused_before_it_is_held() {
        let mut decoder = FrameDecoder::new(8);
        assert_eq!(decoder.push(b"12345").unwrap(), 5);
        assert_eq!(decoder.push(b"6789"), Err(FrameError::TooLong));
        assert_eq!(decoder.held(), 5);
    }

    #[test]
    fn a_line_of_exactly_the_limit_is_a_frame() {
        let mut decoder = FrameDecoder::new(4);
        assert_eq!(decoder.push(b"1234\n").unwrap(), 5);
        assert_eq!(decoder.finish().unwrap(), "1234");
    }

    #[test]
    fn bytes_that_are_not_utf8_are_no_frame() {
        let mut decoder = FrameDecoder::new(8);
        decoder.push(b"\xff\n").unwrap();
        assert_eq!(decoder.finish(), Err(FrameError::NotUtf8));
    }

    #[test]
    fn input_that_ends_without_a_newline_is_the_frame_and_without_a_byte_is_none() {
        let mut decoder = FrameDecoder::new(8);
        decoder.push(b"abc").unwrap();
        assert_eq!(decoder.finish().unwrap(), "abc");
        assert_eq!(FrameDecoder::new(8).finish(), Err(FrameError::Empty));
    }

    #[test]
    fn an_empty_line_is_an_empty_frame() {
        let mut decoder = FrameDecoder::new(8);
        assert_eq!(decoder.push(b"\n").unwrap(), 1);
        assert_eq!(decoder.finish().unwrap(), "");
    }
}
