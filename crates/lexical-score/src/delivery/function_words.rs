//! Words that say nothing about which memory a prompt needs: the function words of English,
//! German, French and Spanish, the words of politeness and agreement people type to an agent,
//! the grammatical bigrams of Chinese and Japanese, and, apart, the verbs that ask a coding agent
//! for an action (`fix`, `run`, `format`): they say what to do, not what it is about.
//!
//! The lists are short on purpose: a word belongs here only if it names no topic a memory of a
//! coding agent is about. A verb that is also such a topic (`commit`, `deploy`, `merge`, `review`,
//! `retry`, `test`) is not listed, however common.

/// English function words, question words, politeness and agreement.
const ENGLISH: &[&str] = &[
    "about", "after", "again", "all", "also", "and", "any", "are", "because", "been", "before",
    "being", "both", "but", "can", "could", "did", "does", "doing", "done", "each", "for", "from",
    "good", "great", "had", "has", "have", "her", "here", "him", "his", "how", "into", "its",
    "just", "let", "lets", "looks", "more", "most", "much", "nice", "not", "now", "off", "okay",
    "once", "only", "other", "our", "out", "over", "please", "really", "same", "she", "should",
    "some", "still", "such", "sure", "than", "thank", "thanks", "that", "the", "their", "them",
    "then", "there", "these", "they", "this", "those", "too", "very", "was", "way", "were", "what",
    "when", "where", "which", "while", "who", "why", "will", "with", "would", "yes", "yet", "you",
    "your",
];

/// German function words, politeness and agreement.
const GERMAN: &[&str] = &[
    "aber", "auch", "auf", "aus", "bei", "bitte", "dann", "danke", "das", "dem", "den", "der",
    "des", "die", "doch", "ein", "eine", "einem", "einen", "einer", "für", "gut", "hier", "ich",
    "ihr", "ist", "jetzt", "kann", "können", "mal", "mich", "mir", "mit", "nach", "nicht", "noch",
    "nochmal", "oder", "sich", "sie", "sind", "soll", "und", "uns", "von", "vor", "was", "wie",
    "wir", "wird", "zum", "zur",
];

/// French function words, politeness and agreement.
const FRENCH: &[&str] = &[
    "aussi", "avec", "bien", "ces", "cette", "dans", "des", "elle", "encore", "est", "fait", "les",
    "leur", "mais", "merci", "nous", "oui", "par", "pas", "peux", "plaît", "plus", "pour", "que",
    "qui", "quoi", "ses", "son", "sur", "très", "une", "vous",
];

/// Spanish function words, politeness and agreement.
const SPANISH: &[&str] = &[
    "ahora", "bien", "con", "del", "esta", "este", "esto", "favor", "gracias", "las", "los", "más",
    "muy", "otra", "para", "pero", "por", "puedes", "que", "qué", "sus", "también", "una", "uno",
    "vez",
];

/// Chinese bigrams of function words, pronouns, politeness and agreement.
const CHINESE: &[&str] = &[
    "一下", "一些", "一个", "一次", "不是", "不错", "也是", "了吗", "什么", "他们", "以吗", "但是",
    "你们", "可以", "因为", "就是", "已经", "帮我", "我们", "所以", "把这", "是不", "没有", "然后",
    "现在", "看起", "起来", "还是", "这个", "这些", "这样", "那个", "那些", "麻烦", "谢谢", "请帮",
    "好的",
];

/// Japanese bigrams of kanji and katakana that work as grammar or politeness; every bigram of
/// two hiragana is judged grammar without a list (see [`is_function_word`]).
const JAPANESE: &[&str] = &["お願", "願い", "一度", "大丈", "丈夫"];

/// Verbs asking a coding agent for an action, in English, German, French, Spanish and Chinese.
const REQUESTS: &[&str] = &[
    "add",
    "apply",
    "change",
    "check",
    "clean",
    "continue",
    "create",
    "delete",
    "explain",
    "fix",
    "format",
    "give",
    "help",
    "implement",
    "keep",
    "look",
    "make",
    "move",
    "open",
    "read",
    "refactor",
    "remove",
    "rename",
    "run",
    "show",
    "stop",
    "tell",
    "try",
    "undo",
    "update",
    "use",
    "write", // English
    "erkläre",
    "formatiere",
    "korrigiere",
    "lass",
    "lösche",
    "mach",
    "mache",
    "prüfe",
    "zeig",
    "zeige", // German
    "ajoute",
    "corrige",
    "explique",
    "fais",
    "formate",
    "lance",
    "montre",
    "relance",
    "renomme",
    "supprime",
    "vérifie", // French
    "agrega",
    "arregla",
    "borra",
    "cambia",
    "corrige",
    "ejecuta",
    "elimina",
    "explica",
    "formatea",
    "haz",
    "muestra",
    "renombra",
    "revisa", // Spanish
    "修复",
    "撤销",
    "继续",
    "解释", // Chinese
];

/// Whether `token` is a verb asking the agent for an action.
pub(crate) fn is_request(token: &str) -> bool {
    REQUESTS.contains(&token)
}

/// Whether `token` (a query token as the tokenizer cut it) is a function word of its language.
/// A bigram of two hiragana is a particle, an inflection or a politeness form, never a topic of
/// its own, so it is one without being listed.
pub(crate) fn is_function_word(token: &str) -> bool {
    let mut chars = token.chars();
    if let (Some(first), Some(second), None) = (chars.next(), chars.next(), chars.next())
        && is_hiragana(first)
        && is_hiragana(second)
    {
        return true;
    }
    [ENGLISH, GERMAN, FRENCH, SPANISH, CHINESE, JAPANESE]
        .iter()
        .any(|list| list.contains(&token))
}

fn is_hiragana(c: char) -> bool {
    matches!(c, '\u{3041}'..='\u{309f}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize;

    #[test]
    fn english_articles_and_question_words_are_function_words() {
        for word in ["the", "how", "what", "please", "thanks"] {
            assert!(is_function_word(word), "{word}");
        }
    }

    #[test]
    fn content_verbs_are_not_function_words() {
        for word in ["fix", "run", "deploy", "rollback", "tests"] {
            assert!(!is_function_word(word), "{word}");
        }
    }

    #[test]
    fn verbs_asking_for_an_action_are_requests_and_topics_are_not() {
        for word in ["fix", "run", "format", "lass", "renomme", "解释"] {
            assert!(is_request(word), "{word}");
        }
        for word in ["commit", "deploy", "tests", "retry"] {
            assert!(!is_request(word), "{word}");
        }
    }

    #[test]
    fn a_bigram_of_two_hiragana_is_a_function_word() {
        assert!(is_function_word("して"));
        assert!(is_function_word("ださ"));
    }

    #[test]
    fn a_bigram_with_katakana_or_kanji_is_not_a_function_word_unless_listed() {
        assert!(!is_function_word("テス"));
        assert!(!is_function_word("回滚"));
        assert!(is_function_word("谢谢"));
    }

    #[test]
    fn every_listed_word_is_one_token_as_the_tokenizer_cuts_it() {
        for list in [
            ENGLISH, GERMAN, FRENCH, SPANISH, CHINESE, JAPANESE, REQUESTS,
        ] {
            for &word in list {
                let tokens = tokenize(word);
                assert!(
                    tokens.is_empty() || tokens == [word],
                    "{word} tokenizes as {tokens:?}"
                );
            }
        }
    }
}
