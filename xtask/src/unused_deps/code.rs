//! Rust source with its comments and literals blanked out, so that only code names a crate.

/// Attribute keys whose string value is a path (serde's and others' derive attributes): a
/// string literal right after `<key> =` keeps its text.
const PATH_KEYS: &[&str] = &[
    "with",
    "serialize_with",
    "deserialize_with",
    "crate",
    "default",
    "remote",
    "from",
    "try_from",
    "into",
];

/// `source` with every comment and every string, byte-string, raw-string and character literal
/// blanked out (each character a space, lines kept), but for a string literal that is the value
/// of one of [`PATH_KEYS`], which keeps its text and quotes.
pub(super) fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |out: &mut String, text: &[char]| {
        out.extend(text.iter().map(|&c| if c == '\n' { '\n' } else { ' ' }));
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let prev_is_ident = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if c == '/' && next == Some('/') {
            let end = chars[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(chars.len(), |n| i + n);
            blank(&mut out, &chars[i..end]);
            i = end;
        } else if c == '/' && next == Some('*') {
            let mut depth = 0usize;
            let mut j = i;
            while j < chars.len() {
                if chars[j] == '/' && chars.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if chars[j] == '*' && chars.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            let end = j.min(chars.len());
            blank(&mut out, &chars[i..end]);
            i = end;
        } else if let Some(end) = (!prev_is_ident)
            .then(|| raw_string_end(&chars, i))
            .flatten()
        {
            blank(&mut out, &chars[i..end]);
            i = end;
        } else if c == '"' || (matches!(c, 'b' | 'c') && next == Some('"') && !prev_is_ident) {
            let open = if c == '"' { i } else { i + 1 };
            let mut j = open + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(chars.len());
            if c == '"' && follows_path_key(&out) {
                out.extend(&chars[i..end]);
            } else {
                blank(&mut out, &chars[i..end]);
            }
            i = end;
        } else if c == '\'' {
            // A character literal (`'"'`, `'\''`, `'\u{7f}'`), not a lifetime or a label.
            let end = if next == Some('\\') {
                chars[i + 2..]
                    .iter()
                    .position(|&c| c == '\'')
                    .map(|n| i + 2 + n + 1)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 3)
            } else {
                None
            };
            if let Some(end) = end {
                blank(&mut out, &chars[i..end]);
                i = end;
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The end (exclusive) of the raw string literal (`r"…"`, `r#"…"#`, `br#"…"#`, `cr"…"`) that
/// starts at `start`, if one does.
fn raw_string_end(chars: &[char], start: usize) -> Option<usize> {
    let mut i = start;
    if matches!(chars.get(i), Some('b' | 'c')) {
        i += 1;
    }
    if chars.get(i) != Some(&'r') {
        return None;
    }
    i += 1;
    let hashes = chars[i..].iter().take_while(|&&c| c == '#').count();
    i += hashes;
    if chars.get(i) != Some(&'"') {
        return None;
    }
    let mut j = i + 1;
    while j < chars.len() {
        if chars[j] == '"'
            && chars[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(chars.len())
}

/// Whether the code before a string literal ends with `<key> =`, `key` one of [`PATH_KEYS`].
fn follows_path_key(code: &str) -> bool {
    let Some(before_equals) = code.trim_end().strip_suffix('=') else {
        return false;
    };
    let before_equals = before_equals.trim_end();
    let key_start = before_equals
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |at| at + 1);
    PATH_KEYS.contains(&&before_equals[key_start..])
}
