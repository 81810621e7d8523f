//! `cargo xtask icu-data`: writes lexical-score's word segmentation data, an ICU4X baked data
//! provider holding only what its segmenter reads: the word and grapheme cluster break rules and
//! the dictionaries of Thai, Lao, Khmer and Burmese.
//!
//! The source is the data ICU4X itself compiles into `icu_segmenter` (the `icu_segmenter_data`
//! crate of the version in `Cargo.lock`), read back through its generated macros, so the command
//! downloads nothing and its output changes only with an ICU4X update. The Chinese and Japanese
//! dictionary (only ever used on Han and kana, which lexical-score tokenizes as bigrams) and the
//! locale overrides of the word rules (asked for only with a content locale, which lexical-score
//! never gives) are written as markers without data: loading them answers "not found", which
//! the segmenter takes as "none".

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result};
use icu_provider::prelude::{DataError, DataIdentifierCow, IterableDataProvider};
use icu_provider_export::baked_exporter::{BakedExporter, Options};
use icu_provider_export::prelude::*;
use icu_segmenter::provider::{
    SegmenterBreakGraphemeClusterV1, SegmenterBreakWordOverrideV1, SegmenterBreakWordV1,
    SegmenterDictionaryAutoV2, SegmenterDictionaryExtendedV2,
};

/// Where the data lives, relative to the workspace root.
pub const DATA_DIR: &str = "crates/lexical-score/src/text/segmenter_data";

/// The dictionaries kept, by ICU4X's names: those of the four segmented scripts.
const DICTIONARIES: [&str; 4] = ["burmesedict", "khmerdict", "laodict", "thaidict"];

/// The data ICU4X ships for `icu_segmenter`, able to list what it holds (which an exporter
/// needs and the compiled provider of `icu_segmenter` does not offer).
struct ShippedSegmenterData;

const _: () = {
    // Each macro calls its `__`-prefixed twin by name.
    use icu_segmenter_data::{
        __impl_segmenter_break_word_override_v1, __impl_segmenter_dictionary_auto_v2,
        __impl_segmenter_dictionary_extended_v2, impl_segmenter_break_grapheme_cluster_v1,
        impl_segmenter_break_word_override_v1, impl_segmenter_break_word_v1,
        impl_segmenter_dictionary_auto_v2, impl_segmenter_dictionary_extended_v2, make_provider,
    };
    // The generated macros name the segmenter's types through ICU4X's `icu` meta-crate.
    mod icu {
        pub use icu_collections as collections;
        pub use icu_segmenter as segmenter;
    }
    make_provider!(ShippedSegmenterData);
    // The singletons' listing is written by hand below: the shipped macros misspell a type in it.
    impl_segmenter_break_word_v1!(ShippedSegmenterData);
    impl_segmenter_break_grapheme_cluster_v1!(ShippedSegmenterData);
    impl_segmenter_break_word_override_v1!(ShippedSegmenterData, ITER);
    impl_segmenter_dictionary_auto_v2!(ShippedSegmenterData, ITER);
    impl_segmenter_dictionary_extended_v2!(ShippedSegmenterData, ITER);
};

/// A singleton marker's data is one value, under the empty identifier.
macro_rules! singleton_listing {
    ($($marker:ty),+) => {$(
        impl IterableDataProvider<$marker> for ShippedSegmenterData {
            fn iter_ids(&self) -> Result<BTreeSet<DataIdentifierCow<'static>>, DataError> {
                Ok(BTreeSet::from([DataIdentifierCow::default()]))
            }
        }
    )+};
}
singleton_listing!(SegmenterBreakWordV1, SegmenterBreakGraphemeClusterV1);

icu_provider::export::make_exportable_provider!(
    ShippedSegmenterData,
    [
        SegmenterBreakWordV1,
        SegmenterBreakWordOverrideV1,
        SegmenterBreakGraphemeClusterV1,
        SegmenterDictionaryAutoV2,
        SegmenterDictionaryExtendedV2,
    ]
);

/// Rewrites the data under [`DATA_DIR`].
pub fn main() -> Result<()> {
    let dir = crate::workspace_root()?.join(DATA_DIR);
    generate(&dir)?;
    println!("icu-data: wrote {}", dir.display());
    Ok(())
}

/// Writes the baked data into `dir`, replacing whatever is there.
///
/// The files are formatted by `rustfmt` (as ICU4X formats its own), so they read and diff as
/// code; the pinned toolchain makes the formatting reproducible.
pub fn generate(dir: &Path) -> Result<()> {
    let mut options = Options::default();
    options.pretty = true;
    // The data names `icu_segmenter` and `icu_collections`, the crates lexical-score depends on,
    // rather than the `icu` meta-crate.
    options.use_separate_crates = true;
    // Nothing here is keyed by a language: there is nothing to fall back between.
    options.use_internal_fallback = false;
    options.overwrite = true;
    let exporter = BakedExporter::new(dir.to_path_buf(), options)
        .with_context(|| format!("cannot write ICU4X data into {}", dir.display()))?;
    ExportDriver::new(
        // The root locale only: the dictionaries are kept under it, and the word-rule overrides
        // (Finnish, Swedish, …) are left out.
        [DataLocaleFamily::single(DataLocale::default())],
        DeduplicationStrategy::None.into(),
        LocaleFallbacker::new_without_data(),
    )
    .with_markers([
        SegmenterBreakWordV1::INFO,
        SegmenterBreakWordOverrideV1::INFO,
        SegmenterBreakGraphemeClusterV1::INFO,
        SegmenterDictionaryAutoV2::INFO,
        SegmenterDictionaryExtendedV2::INFO,
    ])
    .with_segmenter_models(DICTIONARIES.map(String::from))
    .export(&ShippedSegmenterData, exporter)
    .context("exporting the segmentation data failed")?;
    // The exporter's `mod.rs` (macros to include every file and declare a provider, with a doc
    // example rustdoc would count as an ignored test) is not kept: lexical-score's
    // `text/segmenter.rs` includes each data file and declares its provider itself.
    let module = dir.join("mod.rs");
    std::fs::remove_file(&module).with_context(|| format!("cannot remove {}", module.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    /// Every file of `dir` by name, with its bytes.
    fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
        std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
            .map(|entry| {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read(&path).unwrap())
            })
            .collect()
    }

    #[test]
    fn the_committed_segmentation_data_is_what_the_generator_writes() {
        let out = tempfile::tempdir().unwrap();
        let generated = out.path().join("segmenter_data");
        super::generate(&generated).unwrap();
        let committed = crate::workspace_root().unwrap().join(super::DATA_DIR);
        let (generated, committed) = (files(&generated), files(&committed));
        assert_eq!(
            generated.keys().collect::<Vec<_>>(),
            committed.keys().collect::<Vec<_>>(),
            "the files differ: run `cargo xtask icu-data`"
        );
        for (name, bytes) in &generated {
            assert!(
                committed[name] == *bytes,
                "{name} is stale: run `cargo xtask icu-data`"
            );
        }
    }
}
