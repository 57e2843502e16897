//! Credentials in URLs, masked wherever a URL is shown: `Debug` of the settings, error
//! messages, the CLI's `explain`. The one masking rule of the workspace; the value an
//! adapter uses ([`SystemSettings::base_url`](crate::SystemSettings::base_url)) stays the
//! real one.

/// What a masked secret shows as.
pub const MASK: &str = "***";

/// `url` with the credentials it may hold masked as `***`: the user-info's password and
/// every query value (`https://svc:***@pay.example/api?token=***`). The scheme, user,
/// host, port, path and fragment are kept, so the address can still be recognised.
/// Text that is not a URL is masked by the same rule (an `@` before the first `/` is
/// read as user-info).
///
/// ```
/// use outbound_guard_settings::mask_url;
/// assert_eq!(
///     mask_url("http://svc-user:hunter2@pay.example/api?token=abc&mode=x#top"),
///     "http://svc-user:***@pay.example/api?token=***&mode=***#top"
/// );
/// assert_eq!(mask_url("http://127.0.0.1:8081"), "http://127.0.0.1:8081");
/// ```
pub fn mask_url(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), url),
    };
    // A password written without percent-encoding may hold `/`, `?`, `#` or `@`: the
    // user-info runs to the last `@`. Masking too much of an odd path is the safe side.
    if let Some((userinfo, after)) = rest.rsplit_once('@') {
        if let Some((user, _password)) = userinfo.split_once(':') {
            if !user.contains(['/', '?', '#']) {
                return format!("{scheme}{user}:{MASK}@{}", mask_url(after));
            }
        }
    }
    let (rest, fragment) = match rest.split_once('#') {
        Some((rest, fragment)) => (rest, format!("#{fragment}")),
        None => (rest, String::new()),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((rest, query)) => (rest, Some(query)),
        None => (rest, None),
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _password)) => format!("{user}:{MASK}@{host}"),
            None => format!("{userinfo}@{host}"),
        },
        None => authority.to_owned(),
    };
    let query = query.map_or_else(String::new, |query| {
        let masked: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) => format!("{name}={MASK}"),
                None if pair.is_empty() => String::new(),
                None => MASK.to_owned(),
            })
            .collect();
        format!("?{}", masked.join("&"))
    });
    format!("{scheme}{authority}{path}{query}{fragment}")
}

/// Every URL written in `text` (a run of characters around `://`, up to whitespace or a
/// quote) masked by [`mask_url`]: for messages that quote text the user wrote, such as
/// a TOML parser's excerpt of the offending line.
pub(crate) fn mask_urls_in(text: &str) -> String {
    let ends = |c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '<' | '>');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        // The scheme: the letters, digits, `+`, `-` and `.` right before `://`.
        let start = rest[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |i| {
                i + rest[i..].chars().next().map_or(1, char::len_utf8)
            });
        let after = at + "://".len();
        let end = rest[after..].find(ends).map_or(rest.len(), |i| after + i);
        out.push_str(&rest[..start]);
        out.push_str(&mask_url(&rest[start..end]));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_urls_are_masked() {
        assert_eq!(
            mask_url("https://user:s3cret@pay.example/api?token=abc&mode=x#top"),
            "https://user:***@pay.example/api?token=***&mode=***#top"
        );
        assert_eq!(mask_url("http://127.0.0.1:8081"), "http://127.0.0.1:8081");
        assert_eq!(
            mask_url("http://user@host/p?flag"),
            "http://user@host/p?***"
        );
        // An `@` in the path is not user-info.
        assert_eq!(mask_url("http://host/a@b:c"), "http://host/a@b:c");
        // Not a URL, still masked.
        assert_eq!(mask_url("u:hunter2@host/x"), "u:***@host/x");
        // A password with characters it should have percent-encoded.
        for raw in ["hun/ter2", "hun?ter2", "hun#ter2", "hun@ter2", "hun:ter2"] {
            let url = format!("https://u:{raw}@pay.example/api?token=t");
            assert_eq!(
                mask_url(&url),
                "https://u:***@pay.example/api?token=***",
                "{raw}"
            );
        }
        // Empty pairs stay empty: no value there to mask.
        assert_eq!(
            mask_url("http://host/p?a=1&&b=2&"),
            "http://host/p?a=***&&b=***&"
        );
        // A query value holding `@` and `:` is masked as a query value.
        assert_eq!(
            mask_url("http://host/p?x=1:2&e=a@b"),
            "http://host/p?x=***&e=***"
        );
    }

    #[test]
    fn urls_inside_text_are_masked() {
        let text = "1 | base_url = \"ftp://u:hunter2@h/api?token=t0k\" x\n  |  ^ expected newline";
        let masked = mask_urls_in(text);
        assert!(!masked.contains("hunter2"), "{masked}");
        assert!(!masked.contains("t0k"), "{masked}");
        assert_eq!(
            masked,
            "1 | base_url = \"ftp://u:***@h/api?token=***\" x\n  |  ^ expected newline"
        );
        assert_eq!(mask_urls_in("no url here"), "no url here");
        assert_eq!(
            mask_urls_in("é http://a:b@c and https://d?e=f"),
            "é http://a:***@c and https://d?e=***"
        );
        assert_eq!(mask_urls_in("://x:y@z"), "://x:***@z");
        // A character of several bytes right before the scheme.
        assert_eq!(mask_urls_in("(«http://u:p@h»)"), "(«http://u:***@h»)");
    }
}
