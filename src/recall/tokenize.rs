//! The tokenizer of lexical recall: words, their parts, lower case, English stems.
//!
//! A word is a run of letters and digits. A word is also split where its case or character
//! class changes (`ReadMessageItem` -> read, message, item; `HTTPServer` -> http, server;
//! `v2beta` -> v, 2, beta); the whole word is kept too when it splits, so `PostgreSQL`
//! yields `postgresql` as well as `postgr` and `sql`. `snake_case` and `kebab-case` split
//! at their separators because `_` and `-` are not word characters. Parts are lower-cased
//! and stemmed (Snowball English); common English function words are dropped.

use rust_stemmers::{Algorithm, Stemmer};

/// Common English function words, which carry no topic. A general list, not tuned to any
/// data set.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does", "doing",
    "for", "from", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his",
    "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most",
    "my", "myself", "no", "nor", "not", "of", "off", "on", "once", "only", "or", "other", "our",
    "ours", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that",
    "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those", "through",
    "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where",
    "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
    "yourself",
];

/// Whether `word` (lower case) is a stopword.
pub fn is_stopword(word: &str) -> bool {
    // The stopwords of each first letter, found once (every indexed word is asked).
    static BY_FIRST: std::sync::OnceLock<[(u8, u8); 26]> = std::sync::OnceLock::new();
    let by_first = BY_FIRST.get_or_init(|| {
        let mut t = [(0u8, 0u8); 26];
        for (i, w) in STOPWORDS.iter().enumerate() {
            let slot = &mut t[(w.as_bytes()[0] - b'a') as usize];
            if slot.1 == 0 {
                slot.0 = i as u8;
            }
            slot.1 = i as u8 + 1;
        }
        t
    });
    match word.as_bytes() {
        [first @ b'a'..=b'z', ..] if word.len() <= 8 => {
            let (from, to) = by_first[(first - b'a') as usize];
            STOPWORDS[from as usize..to as usize].contains(&word)
        }
        _ => false,
    }
}

/// Splits text into terms; see the module documentation.
pub struct Tokenizer {
    stemmer: Stemmer,
}

impl Default for Tokenizer {
    fn default() -> Self {
        Tokenizer {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    Digit,
    Other,
}

fn class(c: char) -> Class {
    if c.is_numeric() {
        Class::Digit
    } else if c.is_uppercase() {
        Class::Upper
    } else if c.is_alphabetic() && c.is_lowercase() {
        Class::Lower
    } else {
        Class::Other
    }
}

/// Splits one word (letters and digits only) at case and class changes, into `parts`
/// (cleared first; `chars` is scratch space, so that a million words allocate nothing).
fn word_parts<'a>(word: &'a str, chars: &mut Vec<(usize, char)>, parts: &mut Vec<&'a str>) {
    chars.clear();
    chars.extend(word.char_indices());
    parts.clear();
    let mut start = 0;
    for i in 1..chars.len() {
        let (pos, c) = chars[i];
        let prev = class(chars[i - 1].1);
        let cur = class(c);
        let next = chars.get(i + 1).map(|&(_, n)| class(n));
        let split = match (prev, cur) {
            (Class::Lower, Class::Upper) => true,
            (Class::Digit, Class::Digit) => false,
            (Class::Digit, _) | (_, Class::Digit) => true,
            // "HTTPServer": the last capital of a run starts the next part.
            (Class::Upper, Class::Upper) => next == Some(Class::Lower),
            _ => false,
        };
        if split {
            parts.push(&word[start..pos]);
            start = pos;
        }
    }
    parts.push(&word[start..]);
}

/// `s` in lower case, written over `buf`.
fn lower_into(s: &str, buf: &mut String) {
    buf.clear();
    if s.is_ascii() {
        buf.extend(s.bytes().map(|b| char::from(b.to_ascii_lowercase())));
    } else {
        buf.push_str(&s.to_lowercase());
    }
}

/// Whether a lower-case word is stemmed (it is all letters; digits pass through).
pub fn is_stemmed(lower: &str) -> bool {
    lower.chars().all(|c| c.is_alphabetic())
}

impl Tokenizer {
    /// The stem of one lower-case part (digits pass through).
    pub fn stem(&self, lower: &str) -> String {
        if is_stemmed(lower) {
            self.stemmer.stem(lower).into_owned()
        } else {
            lower.to_string()
        }
    }

    /// The terms of `text`, in order, with repeats. Stopwords are dropped unless every word
    /// of the text is one (so a query of only stopwords still has terms).
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.each_term(text, &mut |t| out.push(t.to_string()));
        out
    }

    /// [`Tokenizer::terms`], each given to `emit` in turn.
    pub fn each_term(&self, text: &str, emit: &mut dyn FnMut(&str)) {
        self.each_word(text, &mut |lower, stem| {
            if stem && is_stemmed(lower) {
                emit(&self.stemmer.stem(lower))
            } else {
                emit(lower)
            }
        });
    }

    /// The words behind [`Tokenizer::each_term`], lower case and not yet stemmed, each given
    /// to `emit` with whether its term is its stem (true) or the word itself (a stopword of
    /// a text of stopwords alone). An index build maps each word to its term once, not once
    /// per occurrence.
    pub fn each_word(&self, text: &str, emit: &mut dyn FnMut(&str, bool)) {
        let mut any = false;
        let mut stop: Vec<String> = Vec::new();
        let (mut chars, mut parts, mut lower) = (Vec::new(), Vec::new(), String::new());
        for word in text.split(|c: char| !c.is_alphanumeric()) {
            if word.is_empty() {
                continue;
            }
            // A word of lower-case ASCII letters, or of digits, has one part.
            let plain = word.bytes().all(|b| b.is_ascii_lowercase())
                || word.bytes().all(|b| b.is_ascii_digit());
            // Stopwords are kept only while no other term has come (they are the terms of a
            // text of stopwords alone).
            if plain {
                if is_stopword(word) {
                    if !any {
                        stop.push(word.to_string());
                    }
                } else {
                    emit(word, true);
                    any = true;
                }
                continue;
            }
            word_parts(word, &mut chars, &mut parts);
            for p in &parts {
                lower_into(p, &mut lower);
                if is_stopword(&lower) {
                    if !any {
                        stop.push(lower.clone());
                    }
                    continue;
                }
                emit(&lower, true);
                any = true;
            }
            if parts.len() > 1 {
                lower_into(word, &mut lower);
                emit(&lower, true);
                any = true;
            }
        }
        if !any {
            for s in &stop {
                emit(s, false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Vec<String> {
        Tokenizer::default().terms(s)
    }

    #[test]
    fn stopword_list_is_sorted() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    fn word_parts(word: &str) -> Vec<&str> {
        let mut parts = Vec::new();
        super::word_parts(word, &mut Vec::new(), &mut parts);
        parts
    }

    #[test]
    fn splits_case_and_class_changes() {
        assert_eq!(word_parts("ReadMessageItem"), ["Read", "Message", "Item"]);
        assert_eq!(word_parts("HTTPServer"), ["HTTP", "Server"]);
        assert_eq!(word_parts("v2beta10"), ["v", "2", "beta", "10"]);
        assert_eq!(word_parts("plain"), ["plain"]);
        assert_eq!(word_parts("PostgreSQL"), ["Postgre", "SQL"]);
    }

    #[test]
    fn terms_are_lowercase_stems_with_compounds() {
        assert_eq!(
            t("ReadMessageItem"),
            ["read", "messag", "item", "readmessageitem"]
        );
        assert_eq!(t("read message"), ["read", "messag"]);
        assert_eq!(
            t("snake_case kebab-case"),
            ["snake", "case", "kebab", "case"]
        );
        assert_eq!(t("Glicko-2"), ["glicko", "2"]);
        assert_eq!(t("running runs"), ["run", "run"]);
        assert!(t("PostgreSQL").contains(&"postgresql".to_string()));
    }

    #[test]
    fn stopwords_dropped_unless_all() {
        assert_eq!(t("the testing of it"), ["test"]);
        assert_eq!(t("the of"), ["the", "of"]);
        assert!(t("").is_empty());
        assert!(t("... --- !!!").is_empty());
    }
}
