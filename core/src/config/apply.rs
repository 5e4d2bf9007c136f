//! Applying a properties file's entries to a configuration, as `java.util.Properties`
//! would read them: every line is read, then the last entry of each known key is applied.

use super::{ConfigError, ConfigErrorKind, Origin, keys, url};
use crate::properties::{Entry, Position, Properties};
use crate::text::Snippet;

/// What a file's entries are applied to: the whole [`super::Config`], or only its
/// [`super::ControlConfig`].
pub(crate) trait Apply: Clone {
    /// Whether this target has `key` (the others are skipped, like unknown keys).
    fn takes(key: &keys::Key) -> bool;

    /// Applies `value` of `key`, a key it [takes](Apply::takes).
    fn apply(&mut self, key: &keys::Key, value: &str) -> Result<(), ConfigErrorKind>;

    /// Checks what the keys say together, once all are applied.
    fn finish(&self) -> Result<(), ConfigError>;
}

/// Reads every entry (a malformed escape anywhere fails the file, as in Java), then applies
/// the last entry of each known key, in [`keys::TABLE`] order: an earlier duplicate is
/// never judged. On error `target` is unchanged.
pub(crate) fn apply_entries<T: Apply>(
    target: &mut T,
    mut properties: Properties<'_>,
) -> Result<(), ConfigError> {
    let mut last: [Option<Position>; keys::TABLE.len()] = [None; keys::TABLE.len()];
    loop {
        let at = properties.position();
        let Some(entry) = properties.next().transpose()? else {
            break;
        };
        if !entry.key_is_complete() {
            continue;
        }
        if let Some(i) = keys::TABLE
            .iter()
            .position(|key| key.name() == entry.key() && T::takes(key))
        {
            last[i] = Some(at);
        }
    }
    let mut next = target.clone();
    for (key, at) in keys::TABLE.iter().zip(last) {
        let Some(at) = at else { continue };
        if let Some(entry) = properties.at(at).next().transpose()? {
            set(&mut next, key, &entry)?;
        }
    }
    next.finish()?;
    *target = next;
    Ok(())
}

/// Applies one entry of `key`.
fn set<T: Apply>(target: &mut T, key: &keys::Key, entry: &Entry) -> Result<(), ConfigError> {
    let value = entry.value().trim();
    let at = Origin::Line(entry.line());
    // A value cut to the buffer would read as another value: refused, never guessed.
    if !entry.value_is_complete() {
        return Err(ConfigError {
            value: if key.name() == keys::SEARCH_ENGINE_URL {
                cut_url(value)
            } else {
                shown_value(key, value)
            },
            ..ConfigError::of_key(
                at,
                key,
                "",
                ConfigErrorKind::TooLong {
                    max: Entry::VALUE_CAPACITY,
                },
            )
        });
    }
    target
        .apply(key, value)
        .map_err(|kind| ConfigError::of_key(at, key, value, kind))
}

impl ConfigError {
    /// An error for `key` from `at`, showing `value` as the key allows (a password as
    /// `***`, an address without its password).
    pub(crate) fn of_key(
        at: Origin,
        key: &keys::Key,
        value: &str,
        kind: ConfigErrorKind,
    ) -> ConfigError {
        ConfigError {
            at,
            key: Snippet::new(key.name()),
            value: shown_value(key, value),
            kind,
        }
    }
}

/// A refused value as an error may show it.
fn shown_value(key: &keys::Key, value: &str) -> Snippet {
    if key.is_secret() {
        Snippet::new("***")
    } else if key.name() == keys::SEARCH_ENGINE_URL {
        url::redacted_url(value)
    } else {
        Snippet::new(value)
    }
}

/// The start of an address that was cut, perhaps before the `@` that ends a password: the
/// scheme and nothing after it.
fn cut_url(value: &str) -> Snippet {
    let scheme = value.find("://").map_or("", |i| &value[..i + 3]);
    let mut shown = heapless::String::<16>::new();
    let _ = shown.push_str(scheme.get(..12).unwrap_or(scheme));
    let _ = shown.push('…');
    Snippet::new(&shown)
}
