//! "Did you mean": the hint every message about an unknown name gives, and the list of
//! the names that are known.

/// The closest candidate to `name`, if one is close enough to be a likely typo.
pub fn suggest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// ``did you mean `sber`? `` for the candidate closest to `name`, or nothing when none is
/// close: the hint a message about an unknown name puts before the known names.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    did_you_mean_as(name, candidates, str::to_owned)
}

/// Like [`did_you_mean`], with the suggestion written as `spell` writes it (as an
/// environment variable, say).
pub fn did_you_mean_as<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    spell: impl FnOnce(&'a str) -> String,
) -> String {
    suggest(name, candidates)
        .map(|s| format!("did you mean `{}`? ", spell(s)))
        .unwrap_or_default()
}

/// Names for an error message: `` `customer`, `sber` ``, or `none`.
pub fn quoted_list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let quoted: Vec<String> = names.into_iter().map(|n| format!("`{n}`")).collect();
    if quoted.is_empty() {
        "none".to_owned()
    } else {
        quoted.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::suggest;

    #[test]
    fn a_candidate_must_score_above_the_threshold() {
        // 5 of 8 letters in place after a 2-letter common prefix: Jaro-Winkler exactly 0.8.
        let score = strsim::jaro_winkler("cuxtoqzr", "customer");
        assert_eq!(score.to_bits(), 0.8_f64.to_bits(), "{score}");
        assert_eq!(suggest("cuxtoqzr", ["customer"]), None);
        // One more letter in place clears it.
        assert_eq!(suggest("custoqzr", ["customer"]), Some("customer"));
    }
}
