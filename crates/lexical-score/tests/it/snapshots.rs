//! Token streams per script, pinned as snapshots.

use insta::assert_snapshot;
use lexical_score::tokenize;

/// One token per line, written plainly so combining marks read as text rather than escapes.
fn stream(text: &str) -> String {
    tokenize(text).join("\n")
}

#[test]
fn english_token_stream() {
    assert_snapshot!(stream(
        "Deploy checklist: run the e2e suite, then tag v1.2.3 and notify #release-ops."
    ));
}

#[test]
fn chinese_token_stream() {
    assert_snapshot!(stream("部署前必须运行端到端测试，然后通知发布团队。"));
}

#[test]
fn japanese_kana_and_kanji_token_stream() {
    assert_snapshot!(stream(
        "デプロイ前にテストを実行してください。サーバーは東京です。"
    ));
}

#[test]
fn korean_token_stream() {
    assert_snapshot!(stream("배포 전에 통합 테스트를 실행하세요"));
}

#[test]
fn mixed_latin_and_cjk_token_stream() {
    assert_snapshot!(stream("Redis缓存失效 after deploy; 用kubectl回滚"));
}

#[test]
fn full_width_nfkc_token_stream() {
    assert_snapshot!(stream("ＲＥＬＥＡＳＥ　Ｎｏｔｅｓ　２０２６ ﬁle ｶﾀｶﾅ ①②③"));
}

#[test]
fn cyrillic_token_stream() {
    assert_snapshot!(stream(
        "Перед развёртыванием запустите тесты и сообщите команде"
    ));
}

#[test]
fn greek_token_stream() {
    assert_snapshot!(stream("Πριν την ανάπτυξη ΕΚΤΕΛΕΣΤΕ τις δοκιμές"));
}

#[test]
fn accented_latin_token_stream() {
    assert_snapshot!(stream(
        "Déploiement à Zürich: vérifier la configuração façade"
    ));
}

#[test]
fn thai_token_stream_is_segmented_into_words() {
    assert_snapshot!(stream("ก่อนการปรับใช้ให้รันการทดสอบ แล้วแจ้งทีม"));
}

#[test]
fn mixed_thai_and_latin_token_stream_keeps_latin_runs_whole() {
    assert_snapshot!(stream("ตั้งค่าRedisก่อน deploy ใช้kubectlย้อนกลับ"));
}

#[test]
fn thai_with_arabic_and_thai_digits_token_stream() {
    assert_snapshot!(stream("ปล่อยเวอร์ชัน2024 พอร์ต8080 ปี๒๕๖๗ ลด10%"));
}

#[test]
fn lao_token_stream_is_segmented_into_words() {
    assert_snapshot!(stream("ກ່ອນການນຳໃຊ້ໃຫ້ແລ່ນການທົດສອບ"));
}

#[test]
fn khmer_token_stream_is_segmented_into_words() {
    assert_snapshot!(stream("មុនពេលដាក់ឱ្យប្រើ សូមដំណើរការតេស្ត"));
}

#[test]
fn myanmar_token_stream_is_segmented_into_words() {
    assert_snapshot!(stream("မထုတ်ဝေမီ စမ်းသပ်မှုများကို လုပ်ဆောင်ပါ"));
}
