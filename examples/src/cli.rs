//! The command line: `search-server [--config PATH] [--listen ADDR] [--runtime smol|async-std]
//! [--opensearch URL]`.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use load_smol::{Config, Url, UrlError};

/// Which runtime serves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RuntimeKind {
    /// smol (the default, recommended).
    #[default]
    Smol,
    /// async-std (discontinued upstream; kept for existing users).
    AsyncStd,
}

impl RuntimeKind {
    /// `"smol"` or `"async-std"`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            RuntimeKind::Smol => "smol",
            RuntimeKind::AsyncStd => "async-std",
        }
    }
}

/// Where the configuration comes from.
#[derive(Clone, Debug)]
pub enum ConfigFrom {
    /// Fess's defaults.
    Defaults,
    /// A `fess_config.properties`-style file.
    File(PathBuf),
    /// A value built in code (tests, embedding).
    Value(Box<Config>),
}

/// Everything the command line says.
#[derive(Clone, Debug)]
pub struct Options {
    /// `--config`.
    pub config: ConfigFrom,
    /// `--listen`, default `127.0.0.1:8080`.
    pub listen: SocketAddr,
    /// `--runtime`, default smol.
    pub runtime: RuntimeKind,
    /// `--opensearch`: overrides the file's `search_engine.http.url`.
    pub opensearch: Option<Url>,
    /// `$SEARCH_ENGINE_HTTP_URL`, used when neither the file nor `--opensearch` gives one.
    pub env_url: Option<String>,
    /// `--max-connections`: connections served at once (default: below the open-files
    /// limit, see [`crate::http::Limits::for_open_files`]).
    pub max_connections: Option<usize>,
    /// `--idle-timeout` in seconds: how long a connection may wait for a request's head
    /// (default 60).
    pub idle_timeout: Option<Duration>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            config: ConfigFrom::Defaults,
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            runtime: RuntimeKind::Smol,
            opensearch: None,
            env_url: None,
            max_connections: None,
            idle_timeout: None,
        }
    }
}

/// What the command line or the setup got wrong, in one line.
#[derive(Debug)]
pub enum CliError {
    /// `--help` was asked for: not an error, print usage and exit 0.
    Help,
    /// An unknown flag, a flag without its value, or a bad value.
    Usage(String),
    /// The configuration could not be used.
    Setup(String),
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Help => f.write_str(USAGE),
            CliError::Usage(message) | CliError::Setup(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for CliError {}

/// The usage text.
pub const USAGE: &str = "usage: search-server [--config PATH] [--listen ADDR] \
[--runtime smol|async-std] [--opensearch URL] [--max-connections N] [--idle-timeout SECONDS]";

/// Parses the arguments after the program name. `--flag value` and `--flag=value` both work.
///
/// # Errors
///
/// [`CliError::Usage`] naming the flag and value at fault; [`CliError::Help`] for `--help`.
pub fn parse_args<I>(args: I, env_url: Option<String>) -> Result<Options, CliError>
where
    I: IntoIterator<Item = String>,
{
    let mut options = Options {
        env_url: env_url.filter(|url| !url.trim().is_empty()),
        ..Options::default()
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "-h" || arg == "--help" {
            return Err(CliError::Help);
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        if !matches!(
            flag.as_str(),
            "--config"
                | "--listen"
                | "--runtime"
                | "--opensearch"
                | "--max-connections"
                | "--idle-timeout"
        ) {
            return Err(CliError::Usage(format!(
                "unknown argument '{arg}' ({USAGE})"
            )));
        }
        let value = match inline.or_else(|| args.next()) {
            Some(value) => value,
            None => return Err(CliError::Usage(format!("{flag} needs a value ({USAGE})"))),
        };
        match flag.as_str() {
            "--config" => options.config = ConfigFrom::File(PathBuf::from(value)),
            "--listen" => {
                options.listen = value.parse().map_err(|_| {
                    CliError::Usage(format!(
                        "--listen '{value}' is not an address like 127.0.0.1:8080"
                    ))
                })?;
            }
            "--runtime" => {
                options.runtime = match value.as_str() {
                    "smol" => RuntimeKind::Smol,
                    "async-std" => RuntimeKind::AsyncStd,
                    _ => {
                        return Err(CliError::Usage(format!(
                            "--runtime '{value}' is not one of: smol, async-std"
                        )));
                    }
                };
            }
            "--max-connections" => {
                options.max_connections = Some(
                    value
                        .parse()
                        .ok()
                        .filter(|&n: &usize| n > 0)
                        .ok_or_else(|| {
                            CliError::Usage(format!(
                                "--max-connections '{value}' is not a number of connections above 0"
                            ))
                        })?,
                );
            }
            "--idle-timeout" => {
                let seconds = value
                    .parse::<u64>()
                    .ok()
                    .filter(|s| (1..=86_400).contains(s))
                    .ok_or_else(|| {
                        CliError::Usage(format!(
                            "--idle-timeout '{value}' is not a number of seconds in 1..=86400"
                        ))
                    })?;
                options.idle_timeout = Some(Duration::from_secs(seconds));
            }
            _ => {
                options.opensearch = Some(Url::parse(&value).map_err(|e: UrlError| {
                    CliError::Usage(format!("--opensearch '{}': {e}", redact(&value)))
                })?);
            }
        }
    }
    Ok(options)
}

/// A URL for an error message, with any password replaced.
fn redact(text: &str) -> String {
    let Some(scheme_end) = text.find("://").map(|i| i + 3) else {
        return text.to_owned();
    };
    // The last `@` anywhere after the scheme: a password may hold `/`, `?` or `#` unescaped,
    // and then no parser finds the authority's end where the user meant it.
    match text[scheme_end..].rfind('@') {
        Some(at) => {
            let userinfo = &text[scheme_end..scheme_end + at];
            let user = userinfo
                .split([':', '/', '?', '#'])
                .next()
                .unwrap_or_default();
            format!(
                "{}{user}:***@{}",
                &text[..scheme_end],
                &text[scheme_end + at + 1..]
            )
        }
        None => text.to_owned(),
    }
}

/// Reads the configuration and settles the cluster address: `--opensearch`, else the file's
/// `search_engine.http.url`, else `$SEARCH_ENGINE_HTTP_URL`, else none (single-box mode).
///
/// # Errors
///
/// [`CliError::Setup`] with one line naming the file, line, key or variable at fault.
pub fn load_config(options: &Options) -> Result<Config, CliError> {
    let mut config = match &options.config {
        ConfigFrom::Defaults => Config::new(),
        ConfigFrom::Value(config) => **config,
        ConfigFrom::File(path) => {
            load_smol::read_config(path).map_err(|e| CliError::Setup(e.to_string()))?
        }
    };
    if let Some(url) = options.opensearch {
        config.search_engine_url = Some(url);
    } else if config.search_engine_url.is_none()
        && let Some(text) = &options.env_url
    {
        let url = Url::parse(text.trim()).map_err(|e| {
            CliError::Setup(format!("SEARCH_ENGINE_HTTP_URL '{}': {e}", redact(text)))
        })?;
        config.search_engine_url = Some(url);
    }
    Ok(config)
}

/// Keys whose change needs a restart (they shape tasks started once).
const RESTART_KEYS: [&str; 4] = [
    load_smol::keys::SEARCH_ENGINE_URL,
    load_smol::keys::MONITOR_INTERVAL,
    load_smol::keys::MONITOR_JITTER,
    load_smol::keys::ADAPTIVE_SOURCE,
];

/// Whether a change of `key` needs a restart.
#[must_use]
pub fn needs_restart(key: &str) -> bool {
    RESTART_KEYS.contains(&key)
}

/// Every key whose value differs between `old` and `new`: (key, old value, new value).
#[must_use]
pub fn changes(old: &Config, new: &Config) -> Vec<(&'static str, String, String)> {
    use load_smol::keys;
    let url = |c: &Config| {
        c.search_engine_url
            .map_or_else(|| "(none)".to_owned(), |u| u.to_string())
    };
    let smoothing = |c: &Config| match c.smoothing {
        load_smol::Smoothing::None => "none".to_owned(),
        load_smol::Smoothing::Ewma { tau } => format!("ewma (tau {}s)", tau.as_secs()),
    };
    let secs = |d: std::time::Duration| format!("{}s", d.as_secs());
    let word = |debug: String| debug.to_lowercase();
    let row = |key: &'static str, show: &dyn Fn(&Config) -> String| (key, show(old), show(new));
    let rows = [
        row(keys::WEB_LOAD_CONTROL, &|c| c.web_threshold.to_string()),
        row(keys::API_LOAD_CONTROL, &|c| c.api_threshold.to_string()),
        row(keys::ADAPTIVE_LOAD_CONTROL, &|c| {
            c.adaptive_threshold.to_string()
        }),
        row(keys::MONITOR_INTERVAL, &|c| secs(c.monitor_interval)),
        row(keys::RETRY_AFTER, &|c| c.retry_after.to_string()),
        row(keys::RETRY_AFTER_JITTER, &|c| {
            c.retry_after_jitter.to_string()
        }),
        row(keys::SEARCH_ENGINE_URL, &url),
        row(keys::FAILURE_POLICY, &|c| {
            word(format!("{:?}", c.failure_policy))
        }),
        row(keys::STALE_AFTER, &|c| secs(c.stale_after)),
        row(keys::SMOOTHING, &smoothing),
        row(keys::ENTER_SAMPLES, &|c| c.enter_samples.to_string()),
        row(keys::EXIT_MARGIN, &|c| c.exit_margin.to_string()),
        row(keys::MIN_HOLD, &|c| secs(c.min_hold)),
        row(keys::MODE, &|c| word(format!("{:?}", c.mode))),
        row(keys::MONITOR_JITTER, &|c| secs(c.monitor_jitter)),
        row(keys::ADAPTIVE_SOURCE, &|c| {
            word(format!("{:?}", c.adaptive_source))
        }),
    ];
    rows.into_iter().filter(|(_, a, b)| a != b).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn defaults_and_both_flag_forms() {
        let options = parse_args(args(&[]), None).unwrap();
        assert_eq!(options.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(options.runtime, RuntimeKind::Smol);
        let options = parse_args(
            args(&[
                "--listen=0.0.0.0:9",
                "--runtime",
                "async-std",
                "--opensearch",
                "http://h:9200",
            ]),
            None,
        )
        .unwrap();
        assert_eq!(options.listen.port(), 9);
        assert_eq!(options.runtime, RuntimeKind::AsyncStd);
        assert_eq!(options.opensearch.unwrap().as_str(), "http://h:9200");
    }

    #[test]
    fn bad_arguments_name_the_problem() {
        for (list, needle) in [
            (
                &["--runtime", "tokio"][..],
                "--runtime 'tokio' is not one of: smol, async-std",
            ),
            (
                &["--listen", "localhost"][..],
                "--listen 'localhost' is not an address",
            ),
            (
                &["--opensearch", "ftp://x"][..],
                "--opensearch 'ftp://x': expected http:// or https://",
            ),
            (&["--config"][..], "--config needs a value"),
            (&["--verbose"][..], "unknown argument '--verbose'"),
        ] {
            let error = parse_args(args(list), None).unwrap_err().to_string();
            assert!(error.contains(needle), "{list:?}: {error}");
        }
        let error = parse_args(args(&["--opensearch", "ftp://u:hunter2@x"]), None).unwrap_err();
        assert!(!error.to_string().contains("hunter2"), "{error}");
        assert!(matches!(
            parse_args(args(&["--help"]), None),
            Err(CliError::Help)
        ));
    }

    #[test]
    fn changes_list_exactly_the_keys_that_differ() {
        let old = Config::from_properties("web.load.control=80\napi.load.control=90").unwrap();
        let new = Config::from_properties(
            "web.load.control=70\napi.load.control=90\nload.control.mode=monitor\nload.control.monitor.interval=2",
        )
        .unwrap();
        let changes = changes(&old, &new);
        let keys: Vec<&str> = changes.iter().map(|c| c.0).collect();
        assert_eq!(
            keys,
            [
                "web.load.control",
                "load.control.monitor.interval",
                "load.control.mode"
            ]
        );
        assert_eq!(
            changes[0],
            ("web.load.control", "80".to_owned(), "70".to_owned())
        );
        assert!(
            needs_restart("load.control.monitor.interval") && !needs_restart("web.load.control")
        );
        assert!(super::changes(&old, &old).is_empty());
    }

    #[test]
    fn the_cluster_url_comes_from_flag_then_file_then_environment() {
        let file = Config::from_properties("search_engine.http.url=http://file:9200").unwrap();
        let mut options = parse_args(args(&[]), Some("http://env:9200".into())).unwrap();
        assert_eq!(
            load_config(&options)
                .unwrap()
                .search_engine_url
                .unwrap()
                .as_str(),
            "http://env:9200"
        );
        options.config = ConfigFrom::Value(Box::new(file));
        assert_eq!(
            load_config(&options)
                .unwrap()
                .search_engine_url
                .unwrap()
                .as_str(),
            "http://file:9200"
        );
        options.opensearch = Some(Url::parse("http://flag:9200").unwrap());
        assert_eq!(
            load_config(&options)
                .unwrap()
                .search_engine_url
                .unwrap()
                .as_str(),
            "http://flag:9200"
        );

        let bad_env = parse_args(args(&[]), Some("not a url".into())).unwrap();
        let error = load_config(&bad_env).unwrap_err().to_string();
        assert!(
            error.starts_with("SEARCH_ENGINE_HTTP_URL 'not a url'"),
            "{error}"
        );
    }
}
