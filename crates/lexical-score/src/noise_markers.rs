//! The marker phrases of active-tool noise, found once per document version: whether a
//! document reads as a tool's usage reference, and whether it holds durable context.

use std::sync::LazyLock;

use aho_corasick::packed::Searcher;

/// Phrases that mark a document as a usage reference for a tool.
const USAGE_MARKERS: &[&str] = &[
    "api docs",
    "api documentation",
    "failed call",
    "failed tool call",
    "failed tool-call",
    "field mapping", // also covers "field mappings"
    "guessed call",
    "guessed tool",
    "mcp tool",
    "parameter schema", // also covers "parameter schemas"
    "tool schema",      // also covers "tool schemas"
    "tool usage",
    "usage reference",
];

/// Phrases that mark durable context worth recalling even while the tool is in use.
const DURABLE_MARKERS: &[&str] = &[
    "credential", // also covers "credentials"
    "escalation",
    "gotcha",      // also covers "gotchas"
    "known issue", // also covers "known issues"
    "owner",       // also covers "ownership"
    "warning",     // also covers "warnings"
    "workaround",  // also covers "workarounds"
];

/// Which marker kinds a document's title, description and full body contain.
///
/// Markers do not depend on the query or the tools, so they are found once per document version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct NoiseMarkers {
    /// A usage marker is found.
    pub(crate) usage: bool,
    /// A durable marker is found.
    pub(crate) durable: bool,
}

impl NoiseMarkers {
    /// The markers as two bits (usage 1, durable 2), for the stored form.
    pub(crate) fn to_bits(self) -> u8 {
        u8::from(self.usage) | (u8::from(self.durable) << 1)
    }

    /// The inverse of [`NoiseMarkers::to_bits`]; `None` when other bits are set.
    pub(crate) fn from_bits(bits: u8) -> Option<Self> {
        (bits <= 3).then_some(Self {
            usage: bits & 1 != 0,
            durable: bits & 2 != 0,
        })
    }
}

/// Bits of the prefix filter index: 4,096 bits for 15 distinct four-byte marker prefixes, so
/// about one text position in 270 needs a closer look.
const PREFIX_FILTER_BITS: u32 = 12;

/// Every marker, usage markers first, so an index below `USAGE_MARKERS.len()` is a usage marker.
fn all_markers() -> impl Iterator<Item = &'static str> {
    USAGE_MARKERS.iter().chain(DURABLE_MARKERS).copied()
}

/// The filter slot of four bytes packed first byte lowest.
const fn prefix_slot(packed: u32) -> usize {
    (packed.wrapping_mul(0x9E37_79B1) >> (32 - PREFIX_FILTER_BITS)) as usize
}

/// The first four bytes of `marker`, packed first byte lowest (every marker has at least five).
const fn packed_prefix(marker: &str) -> u32 {
    let bytes = marker.as_bytes();
    let mut packed = 0;
    let mut at = 0;
    while at < 4 && at < bytes.len() {
        packed |= (bytes[at] as u32) << (8 * at);
        at += 1;
    }
    packed
}

/// A bit set of the filter slots of every marker's first four bytes.
const PREFIX_FILTER: [u64; (1 << PREFIX_FILTER_BITS) / 64] = {
    let mut filter = [0u64; (1 << PREFIX_FILTER_BITS) / 64];
    let mut kind = 0;
    while kind < 2 {
        let markers = if kind == 0 {
            USAGE_MARKERS
        } else {
            DURABLE_MARKERS
        };
        let mut index = 0;
        while index < markers.len() {
            let slot = prefix_slot(packed_prefix(markers[index]));
            filter[slot / 64] |= 1 << (slot % 64);
            index += 1;
        }
        kind += 1;
    }
    filter
};

/// SIMD multi-substring searchers (Teddy) for each marker kind, where the CPU has them. Leftmost
/// search reports a match whenever any marker of the kind occurs, so presence is exact.
static PACKED: LazyLock<Option<[Searcher; 2]>> = LazyLock::new(|| {
    Some([
        Searcher::new(USAGE_MARKERS)?,
        Searcher::new(DURABLE_MARKERS)?,
    ])
});

impl NoiseMarkers {
    /// Finds both kinds of marker with one pass over each field: a rolling window of four bytes
    /// is looked up in a bit set of marker prefixes, and only positions that pass are compared
    /// with the markers. Every occurrence of every marker is seen, so this agrees exactly with one
    /// substring search per marker.
    pub(crate) fn detect(fields: [&str; 3]) -> Self {
        if let Some([usage, durable]) = PACKED.as_ref() {
            return Self {
                usage: fields.iter().any(|field| usage.find(field).is_some()),
                durable: fields.iter().any(|field| durable.find(field).is_some()),
            };
        }
        Self::detect_with_prefix_filter(fields)
    }

    fn detect_with_prefix_filter(fields: [&str; 3]) -> Self {
        let mut markers = Self::default();
        for field in fields {
            let bytes = field.as_bytes();
            let mut packed = 0u32;
            for (at, &byte) in bytes.iter().enumerate() {
                packed = (packed >> 8) | (u32::from(byte) << 24);
                let slot = prefix_slot(packed);
                if PREFIX_FILTER[slot / 64] >> (slot % 64) & 1 == 0 {
                    continue;
                }
                let Some(from_here) = at.checked_sub(3).and_then(|start| bytes.get(start..)) else {
                    continue;
                };
                for (index, marker) in all_markers().enumerate() {
                    if from_here.starts_with(marker.as_bytes()) {
                        if index < USAGE_MARKERS.len() {
                            markers.usage = true;
                        } else {
                            markers.durable = true;
                        }
                    }
                }
                if markers.usage && markers.durable {
                    return markers;
                }
            }
        }
        markers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl NoiseMarkers {
        /// The plain definition: one substring search per marker and field.
        fn detect_one_by_one(fields: [&str; 3]) -> Self {
            let any_field = |marker: &&str| fields.iter().any(|field| field.contains(marker));
            Self {
                usage: USAGE_MARKERS.iter().any(any_field),
                durable: DURABLE_MARKERS.iter().any(any_field),
            }
        }
    }

    fn marker_text() -> impl proptest::strategy::Strategy<Value = String> {
        let pieces: Vec<&'static str> = USAGE_MARKERS
            .iter()
            .chain(DURABLE_MARKERS)
            .copied()
            .chain([
                "a",
                "e",
                "s",
                " ",
                "-",
                "pi docs",
                "scalation",
                "uessed call",
                "\u{e9}",
            ])
            .collect();
        proptest::collection::vec(proptest::sample::select(pieces), 0..8)
            .prop_map(|pieces| pieces.concat())
    }

    use proptest::prelude::*;

    #[test]
    fn every_marker_is_longer_than_the_filtered_prefix() {
        assert!(all_markers().all(|marker| marker.len() > 4));
    }

    #[test]
    fn overlapping_markers_of_both_kinds_are_both_found() {
        let markers = NoiseMarkers::detect(["", "gotchapi docs", ""]);
        assert!(markers.usage && markers.durable);
        let markers = NoiseMarkers::detect(["usage referencescalation", "", ""]);
        assert!(markers.usage && markers.durable);
    }

    proptest! {
        #[test]
        fn one_pass_detection_agrees_with_one_search_per_marker(
            title in marker_text(),
            description in marker_text(),
            body in marker_text(),
        ) {
            let fields = [title.as_str(), description.as_str(), body.as_str()];
            prop_assert_eq!(NoiseMarkers::detect(fields), NoiseMarkers::detect_one_by_one(fields));
            prop_assert_eq!(
                NoiseMarkers::detect_with_prefix_filter(fields),
                NoiseMarkers::detect_one_by_one(fields)
            );
        }
    }
}
