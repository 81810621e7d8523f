//! The word segmenter's data stays off the path of a process that never meets Thai, Lao, Khmer or
//! Myanmar text. Its own test binary, so no other test sets the segmenter up first.

use lexical_score::{PreparedText, QueryTokens, word_segmenter_is_loaded};

#[test]
fn the_word_segmenter_is_set_up_only_when_a_run_of_its_scripts_is_met() {
    let text = PreparedText::new("Deploy 部署 デプロイ", "Развёртывание", "배포 전에 테스트");
    text.build_index();
    let query = QueryTokens::new("deploy 部署 развёртывание테스트");
    let _ = query.len();
    assert!(!word_segmenter_is_loaded());

    let _ = QueryTokens::new("การปรับใช้");
    assert!(word_segmenter_is_loaded());
}
