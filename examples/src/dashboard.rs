//! `/admin/load`: the library's operator page (`load_runtime::dashboard`, feature
//! `dashboard`), which the demo fills with its crawler's counts, and the HTML escaping the
//! demo's own pages use.

pub use load_runtime::dashboard::*;

/// Escapes text for HTML (element content and quoted attributes).
#[must_use]
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
