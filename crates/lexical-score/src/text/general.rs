//! The general scanner: tokens of any normalised text, CJK bigrams and runs of letters, marks and
//! digits, with the stretches of segmented scripts handed to the word segmenter.

use super::ascii::alphanumeric_prefix_len;
use super::class::{CJK, CLASS_TABLE, CONTINUES, SEGMENTED, STARTS, class_in};
use super::segmenter::for_each_segmented_word;
use super::{MIN_RUN_CHARS, Scan};

/// Minimum number of code points of a segmented word for it to count as a token.
const MIN_SEGMENTED_WORD_CHARS: usize = 2;

/// The scanner for any normalised text; see [`super::for_each_token`]. Text that is not all ASCII is
/// mostly ASCII still (an English note with one dash or accented name), so ASCII bytes take a
/// path of their own: no decoding and no class look-up, a whole stretch of letters and digits at
/// a time. Other characters are decoded and classed through the class table.
pub(crate) fn for_each_general_token<'t>(
    normalized: &'t str,
    mode: Scan,
    emit: &mut impl FnMut(usize, &'t str),
) {
    let table: &[u8] = &CLASS_TABLE;
    let bytes = normalized.as_bytes();
    // The non-CJK run (or the stretch of one) in progress.
    let mut run: Option<Run> = None;
    // Byte offset of the previous character when it was CJK.
    let mut previous_cjk: Option<usize> = None;
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        if byte.is_ascii() {
            // Never CJK; a letter or digit starts or continues a run, anything else ends it.
            previous_cjk = None;
            if byte.is_ascii_alphanumeric() {
                let stretch = alphanumeric_prefix_len(bytes.get(at..).unwrap_or_default());
                match &mut run {
                    Some(open) if !open.segmented => open.chars += stretch,
                    _ => {
                        finish_run(normalized, run.take(), at, mode, emit);
                        run = Some(Run::new(at, stretch, false));
                    }
                }
                at += stretch;
            } else {
                finish_run(normalized, run.take(), at, mode, emit);
                at += 1;
            }
            continue;
        }
        let Some(c) = normalized.get(at..).and_then(|rest| rest.chars().next()) else {
            break;
        };
        let class = class_in(table, c);
        let next = at + c.len_utf8();
        if class & CJK != 0 {
            finish_run(normalized, run.take(), at, mode, emit);
            if let Some((start, bigram)) =
                previous_cjk.and_then(|start| Some((start, normalized.get(start..next)?)))
            {
                emit(start, bigram);
            }
            previous_cjk = Some(at);
        } else {
            previous_cjk = None;
            let segmented = mode.segments() && class & SEGMENTED != 0;
            match &mut run {
                // A letter or digit of another kind of script starts a stretch of its own.
                Some(open)
                    if class & CONTINUES != 0
                        && (open.segmented == segmented || class & STARTS == 0) =>
                {
                    open.chars += 1;
                }
                _ => {
                    finish_run(normalized, run.take(), at, mode, emit);
                    if class & STARTS != 0 {
                        run = Some(Run::new(at, 1, segmented));
                    }
                }
            }
        }
        at = next;
    }
    finish_run(normalized, run, normalized.len(), mode, emit);
}

/// A run of the general scanner in progress: where it starts, its length in code points, and
/// whether it is a stretch of a segmented script.
#[derive(Debug, Clone, Copy)]
struct Run {
    start: usize,
    chars: usize,
    segmented: bool,
}

impl Run {
    fn new(start: usize, chars: usize, segmented: bool) -> Self {
        Self {
            start,
            chars,
            segmented,
        }
    }
}

/// Emits what the run that ends at byte `end` yields: itself when it is long enough to be a
/// token, or, for a stretch of a segmented script, its words (see [`super::for_each_token`]).
fn finish_run<'t>(
    normalized: &'t str,
    run: Option<Run>,
    end: usize,
    mode: Scan,
    emit: &mut impl FnMut(usize, &'t str),
) {
    let Some(run) = run else {
        return;
    };
    if run.segmented {
        finish_segmented_run(normalized, run.start, end, mode, emit);
    } else if run.chars >= MIN_RUN_CHARS
        && let Some(text) = normalized.get(run.start..end)
    {
        emit(run.start, text);
    }
}

/// [`finish_run`] for a stretch of a segmented script: the stretch itself when `mode` asks for
/// index terms, then its words of at least two code points. Kept out of line, so that the scan
/// of other scripts does not pay for the segmenter's code.
#[inline(never)]
fn finish_segmented_run<'t>(
    normalized: &'t str,
    start: usize,
    end: usize,
    mode: Scan,
    emit: &mut impl FnMut(usize, &'t str),
) {
    let Some(text) = normalized.get(start..end) else {
        return;
    };
    if mode == Scan::IndexTerms {
        emit(start, text);
    }
    for_each_segmented_word(text, |offset, word| {
        if word.chars().nth(MIN_SEGMENTED_WORD_CHARS - 1).is_some() {
            emit(start + offset, word);
        }
    });
}
