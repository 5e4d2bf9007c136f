//! The cluster's connection: Fess's addresses, basic-auth credentials and CA file.

use super::{ClusterUrls, ConfigError, ConfigErrorKind, Origin, keys};
use crate::text::{Secret, Snippet, Text};

/// How to reach the cluster (`search_engine.*`): its addresses, the basic-auth user and
/// password, and a CA file. No defaults: an unset key is `None`.
///
/// About 1.4 KB inline (no allocation), so it is a value of its own beside the small
/// [`crate::ControlConfig`]: only what talks to the cluster needs it.
///
/// Its `Debug` hides the password; addresses are shown without theirs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClusterConfig {
    /// `search_engine.http.url` (`$SEARCH_ENGINE_HTTP_URL`): the cluster's addresses,
    /// polled one at a time, the next after a failure.
    pub urls: Option<ClusterUrls>,
    /// `search_engine.username` (`$SEARCH_ENGINE_USERNAME`): the user for HTTP basic auth,
    /// used only when the password is set too.
    pub username: Option<Text<128>>,
    /// `search_engine.password` (`$SEARCH_ENGINE_PASSWORD`): its password.
    pub password: Option<Secret>,
    /// `search_engine.http.ssl.certificate_authorities`: a PEM file of CA certificates
    /// that verify the cluster's certificate (besides the system's).
    pub certificate_authorities: Option<Text<512>>,
}

impl ClusterConfig {
    /// Nothing set.
    pub const NONE: ClusterConfig = ClusterConfig {
        urls: None,
        username: None,
        password: None,
        certificate_authorities: None,
    };

    /// The basic-auth user and password of `search_engine.username` and
    /// `search_engine.password`, when both are set (as in Fess: one alone is not used).
    #[must_use]
    pub fn credentials(&self) -> Option<(&str, &Secret)> {
        match (&self.username, &self.password) {
            (Some(user), Some(password)) => Some((user.as_str(), password)),
            _ => None,
        }
    }

    /// Credentials in a URL and in the user/password keys at once: which one was meant is
    /// a guess, so it is refused.
    pub(crate) fn check_credentials(&self) -> Result<(), ConfigError> {
        let Some(urls) = &self.urls else {
            return Ok(());
        };
        let with = match (&self.username, &self.password) {
            (Some(_), _) => keys::SEARCH_ENGINE_USERNAME,
            (None, Some(_)) => keys::SEARCH_ENGINE_PASSWORD,
            (None, None) => return Ok(()),
        };
        if !urls.has_credentials() {
            return Ok(());
        }
        let mut shown = heapless::String::<64>::new();
        let _ = core::fmt::write(&mut shown, format_args!("{urls}"));
        Err(ConfigError {
            at: Origin::Config,
            key: Snippet::new(keys::SEARCH_ENGINE_URL),
            value: Snippet::new(&shown),
            kind: ConfigErrorKind::Conflict { with },
        })
    }
}
