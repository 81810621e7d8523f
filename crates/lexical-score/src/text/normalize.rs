//! Normalisation: NFKC, then lowercase, with fast paths for ASCII text and for text the class
//! table shows is already NFKC.

use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

use super::ascii::ascii_prefix_len;
use super::class::{CASELESS, CLASS_TABLE, NFKC_STARTER, class_in};

/// NFKC, then lowercase: the one normal form every comparison in this crate uses.
pub(crate) fn normalize(text: &str) -> String {
    let mut normalized = String::with_capacity(text.len());
    normalize_into(text, &mut normalized);
    normalized
}

/// Appends the normal form of `text` (see [`normalize`]) to `out`.
pub(crate) fn normalize_into(text: &str, out: &mut String) {
    let start = out.len();
    if text.is_ascii() {
        // ASCII is invariant under NFKC, so only case needs folding.
        out.push_str(text);
        if let Some(appended) = out.get_mut(start..) {
            appended.make_ascii_lowercase();
        }
        return;
    }
    if lowercase_if_nfkc(text, out) {
        return;
    }
    out.truncate(start);
    if is_nfkc_quick(text.chars()) == IsNormalized::Yes {
        out.push_str(&text.to_lowercase());
    } else {
        out.push_str(&text.nfkc().collect::<String>().to_lowercase());
    }
}

/// One pass doing the NFKC quick check and lowercasing: appends `text` lowercased and returns
/// true when the quick check says `text` is already NFKC; returns false (with `out` partly
/// written) when it is not or may not be, or when a capital sigma needs `str::to_lowercase`'s
/// word-final rule.
///
/// ASCII stretches are copied whole and lowercased in place: no character is decoded there.
fn lowercase_if_nfkc(text: &str, out: &mut String) -> bool {
    let table: &[u8] = &CLASS_TABLE;
    let mut last_class = 0u8;
    let mut rest = text;
    while !rest.is_empty() {
        let ascii = ascii_prefix_len(rest.as_bytes());
        // An ASCII stretch ends at a character boundary, so the split always succeeds.
        if ascii > 0
            && let Some((stretch, after)) = rest.split_at_checked(ascii)
        {
            let start = out.len();
            out.push_str(stretch);
            if let Some(appended) = out.get_mut(start..) {
                appended.make_ascii_lowercase();
            }
            last_class = 0;
            rest = after;
        }
        let mut chars = rest.chars();
        let Some(c) = chars.next() else {
            break;
        };
        rest = chars.as_str();
        let class = class_in(table, c);
        if class & NFKC_STARTER == 0 {
            // The quick check of UAX #15, as `is_nfkc_quick` runs it.
            let combining = canonical_combining_class(c);
            if (last_class > combining && combining != 0)
                || is_nfkc_quick(std::iter::once(c)) != IsNormalized::Yes
            {
                return false;
            }
            last_class = combining;
        } else {
            last_class = 0;
        }
        if class & CASELESS != 0 {
            out.push(c);
        } else if c == '\u{3A3}' {
            return false;
        } else {
            out.extend(c.to_lowercase());
        }
    }
    true
}
