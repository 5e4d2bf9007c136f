//! How to reach a cluster beyond its addresses: timeout, CA, credentials, body cap.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use load_core::ClusterConfig;

/// How to reach a cluster, beyond its address.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct OpenSearchOptions {
    /// Limit on the whole exchange: connecting, TLS, headers and body. Default 10 s.
    pub timeout: Option<Duration>,
    /// A PEM file with an extra CA certificate to trust (clusters often use their own CA).
    pub ca_certificate: Option<PathBuf>,
    /// User and password for basic auth; they override any in the URL.
    pub credentials: Option<(String, String)>,
    /// Largest body read; a longer one is cut off and reported. Default 1 MiB.
    pub max_body: Option<usize>,
}

impl fmt::Debug for OpenSearchOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenSearchOptions")
            .field("timeout", &self.timeout)
            .field("ca_certificate", &self.ca_certificate)
            .field(
                "credentials",
                &self.credentials.as_ref().map(|(user, _)| (user, "***")),
            )
            .field("max_body", &self.max_body)
            .finish()
    }
}

impl OpenSearchOptions {
    /// The default options.
    #[must_use]
    pub fn new() -> OpenSearchOptions {
        OpenSearchOptions::default()
    }

    /// The options Fess's keys give: basic auth from `search_engine.username` and
    /// `search_engine.password` when both are set, the CA file of
    /// `search_engine.http.ssl.certificate_authorities`, default timeout and body cap.
    #[must_use]
    pub fn from_config(cluster: &ClusterConfig) -> OpenSearchOptions {
        OpenSearchOptions {
            credentials: cluster
                .credentials()
                .map(|(user, password)| (user.to_owned(), password.expose().to_owned())),
            ca_certificate: cluster
                .certificate_authorities
                .as_ref()
                .map(|path| PathBuf::from(path.as_str())),
            ..OpenSearchOptions::default()
        }
    }

    /// Sets the timeout of the whole exchange.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Trusts the CA certificate in this PEM file too.
    #[must_use]
    pub fn ca_certificate(mut self, pem: impl Into<PathBuf>) -> Self {
        self.ca_certificate = Some(pem.into());
        self
    }

    /// Uses these basic-auth credentials.
    #[must_use]
    pub fn credentials(mut self, user: impl Into<String>, password: impl Into<String>) -> Self {
        self.credentials = Some((user.into(), password.into()));
        self
    }

    /// Sets the largest body read.
    #[must_use]
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = Some(bytes);
        self
    }
}
