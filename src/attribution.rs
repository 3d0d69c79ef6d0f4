//! Stage 5: attribution (a claim that names a person must match the speaker of the quoted words)
//! and history (claims or sources about the same subject that disagree across meetings).

use crate::text::{content_words, fold_word, raw_tokens};

const ROLE_WORDS: &[&str] = &[
    "manager",
    "designer",
    "interface",
    "marketing",
    "user",
    "project",
    "industrial",
    "professor",
    "phd",
    "grad",
    "speaker",
    "chair",
    "chairman",
    "member",
    "minister",
    "assembly",
    "team",
    "lead",
    "the",
    "of",
    "and",
];

/// The ways a speaker can be named in a claim: the full name, and for personal names (two or
/// three capitalised words, no role words) each part of three letters or more.
pub fn name_forms(speaker: &str) -> Vec<Vec<String>> {
    let parts: Vec<String> = raw_tokens(speaker).into_iter().map(|t| t.norm).collect();
    if parts.is_empty() {
        return vec![];
    }
    let mut forms = vec![parts.clone()];
    let personal = (2..=3).contains(&parts.len())
        && speaker.split_whitespace().all(|w| w.chars().next().is_some_and(char::is_uppercase))
        && !parts.iter().any(|p| ROLE_WORDS.contains(&p.as_str()) || p.len() == 1);
    if personal {
        for p in &parts {
            if p.chars().count() >= 3 {
                forms.push(vec![p.clone()]);
            }
        }
    }
    forms
}

fn contains_seq(hay: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// Speakers (from `candidates`) that `text` names.
pub fn named_speakers(text: &str, candidates: &[String]) -> Vec<String> {
    let toks: Vec<String> = raw_tokens(text).into_iter().map(|t| t.norm).collect();
    let mut out: Vec<String> = Vec::new();
    for c in candidates {
        if out.contains(c) {
            continue;
        }
        if name_forms(c).iter().any(|f| contains_seq(&toks, f)) {
            out.push(c.clone());
        }
    }
    out
}

/// A speaker mismatch: the claim names people, none of whom said the quoted words, and the
/// quoted words do not themselves mention them (then the claim is about them, not by them).
pub fn speaker_mismatch(claim: &str, quoted: &str, actual: &[String], candidates: &[String]) -> Option<Vec<String>> {
    if actual.is_empty() {
        return None;
    }
    let named = named_speakers(claim, candidates);
    if named.is_empty() || named.iter().any(|n| actual.contains(n)) {
        return None;
    }
    let in_quote = named_speakers(quoted, &named);
    let unexplained: Vec<String> = named.into_iter().filter(|n| !in_quote.contains(n)).collect();
    (!unexplained.is_empty()).then_some(unexplained)
}

/// The stemmed content words that [`same_subject_counts`] compares.
pub fn subject_words(text: &str) -> std::collections::BTreeSet<String> {
    content_words(text).into_iter().map(|w| stem(&w)).collect()
}

/// Do two statements talk about the same subject, given the number of [`subject_words`] they
/// share and the sizes of both sets? Share at least two, or half of the smaller set.
pub fn same_subject_counts(shared: usize, len_a: usize, len_b: usize) -> bool {
    let small = len_a.min(len_b);
    small > 0 && (shared >= 2 || 2 * shared >= small.max(2))
}

fn stem(w: &str) -> String {
    let w = fold_word(w);
    for suf in ["ing", "ed", "es", "s"] {
        if w.len() > suf.len() + 3 {
            if let Some(s) = w.strip_suffix(suf) {
                return s.to_string();
            }
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_roles() {
        let c = vec!["Dana Okafor".to_string(), "Luis Vega".to_string(), "Project Manager".to_string()];
        assert_eq!(named_speakers("Dana proposed a discount", &c), vec!["Dana Okafor"]);
        assert_eq!(named_speakers("The project manager opened", &c), vec!["Project Manager"]);
        assert!(named_speakers("The manager of the shop", &c).is_empty());
        assert_eq!(speaker_mismatch("Luis proposed ten percent", "ten percent", &["Dana Okafor".into()], &c), Some(vec!["Luis Vega".to_string()]));
        assert_eq!(speaker_mismatch("Dana will email Luis", "I will email Luis", &["Dana Okafor".into()], &c), None);
        assert_eq!(speaker_mismatch("Luis will send the deck", "Luis will send the deck", &["Dana Okafor".into()], &c), None);
    }

    // (the history check in verify.rs compares these sets; tests/verify.rs runs it end to end)
    #[test]
    fn subjects() {
        let shared = |a: &str, b: &str| {
            let (wa, wb) = (subject_words(a), subject_words(b));
            same_subject_counts(wa.intersection(&wb).count(), wa.len(), wb.len())
        };
        assert!(subject_words("The discounts were agreed").contains("discount"), "stemmed");
        assert!(shared("The pilot discount is ten percent", "We set the pilot discount at five percent"));
        assert!(!shared("The pilot discount is ten percent", "The remote control has a yellow case"));
        // one shared word is enough only when the smaller set has at most two words
        assert!(same_subject_counts(1, 2, 9) && !same_subject_counts(1, 3, 9) && !same_subject_counts(0, 0, 0));
    }
}
