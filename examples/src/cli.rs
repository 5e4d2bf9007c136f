//! The command line: `search-server [--config PATH] [--listen ADDR] [--runtime smol|async-std]
//! [--opensearch URL[,URL...]]`.

use crate::app::{DemoOptions, SearchMode};
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use load_smol::{
    Config,
    config::{ClusterUrls, UrlError, keys},
};

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
    /// `--opensearch`: overrides `search_engine.http.url` of the file and the environment.
    pub opensearch: Option<ClusterUrls>,
    /// Fess's environment variables (`SEARCH_ENGINE_HTTP_URL`, `SEARCH_ENGINE_USERNAME`,
    /// `SEARCH_ENGINE_PASSWORD`) as found at start: they override the file.
    pub env: Vec<(&'static str, String)>,
    /// `--max-connections`: connections served at once (default: below the open-files
    /// limit, see [`crate::http::Limits::for_open_files`]).
    pub max_connections: Option<usize>,
    /// `--idle-timeout` in seconds: how long a connection may wait for a request's head
    /// (default 60).
    pub idle_timeout: Option<Duration>,
    /// `--index` and `--corpus`: the cluster index the demo searches and its crawler fills,
    /// and how many documents the crawler has.
    pub demo: DemoOptions,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            config: ConfigFrom::Defaults,
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            runtime: RuntimeKind::Smol,
            opensearch: None,
            env: Vec::new(),
            max_connections: None,
            idle_timeout: None,
            demo: DemoOptions::default(),
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
[--runtime smol|async-std] [--opensearch URL] [--max-connections N] [--idle-timeout SECONDS] \
[--index NAME] [--corpus DOCUMENTS] [--search cluster|builtin] [--crawler on|off] \
[--peer-limiter vegas]";

/// Parses the arguments after the program name. `--flag value` and `--flag=value` both work.
/// `var` looks up environment variables (`|name| std::env::var(name).ok()`).
///
/// # Errors
///
/// [`CliError::Usage`] naming the flag and value at fault; [`CliError::Help`] for `--help`.
pub fn parse_args<I>(
    args: I,
    mut var: impl FnMut(&str) -> Option<String>,
) -> Result<Options, CliError>
where
    I: IntoIterator<Item = String>,
{
    let mut options = Options {
        env: keys::TABLE
            .iter()
            .filter_map(|key| key.variable())
            .filter_map(|name| var(name).map(|value| (name, value)))
            .collect(),
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
                | "--index"
                | "--corpus"
                | "--search"
                | "--crawler"
                | "--peer-limiter"
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
            "--index" => {
                if !crate::search::valid_index(&value) {
                    return Err(CliError::Usage(format!(
                        "--index '{value}' is not an index name (lower-case letters, digits, \
                         '-', '_' and '.'; not starting with '-', '_' or '+')"
                    )));
                }
                options.demo.index = value;
            }
            "--search" => {
                options.demo.search = match value.as_str() {
                    "cluster" => SearchMode::Cluster,
                    "builtin" => SearchMode::Builtin,
                    _ => {
                        return Err(CliError::Usage(format!(
                            "--search '{value}' is not one of: cluster, builtin"
                        )));
                    }
                };
            }
            "--crawler" => {
                options.demo.crawler = match value.as_str() {
                    "on" => true,
                    "off" => false,
                    _ => {
                        return Err(CliError::Usage(format!(
                            "--crawler '{value}' is not one of: on, off"
                        )));
                    }
                };
            }
            "--peer-limiter" => {
                options.demo.peer = match value.as_str() {
                    "vegas" => Some(crate::peer::PeerLaw::Vegas),
                    _ => {
                        return Err(CliError::Usage(format!(
                            "--peer-limiter '{value}' is not one of: vegas (a benchmark-only \
                             admission law beside the limit mode)"
                        )));
                    }
                };
            }
            "--corpus" => {
                options.demo.corpus = value
                    .parse()
                    .ok()
                    .filter(|n: &usize| (1..=1_000_000).contains(n))
                    .ok_or_else(|| {
                        CliError::Usage(format!(
                            "--corpus '{value}' is not a number of documents in 1..=1000000"
                        ))
                    })?;
            }
            _ => {
                options.opensearch = Some(ClusterUrls::parse(&value).map_err(|e: UrlError| {
                    CliError::Usage(format!(
                        "--opensearch '{}': {e}",
                        ClusterUrls::redact(&value)
                    ))
                })?);
            }
        }
    }
    Ok(options)
}

/// Reads the configuration as Fess does: the file (or the defaults), then the environment
/// variables over it, then `--opensearch` over both. Without any address the server runs
/// single-box (this machine's CPU as the cluster signal).
///
/// # Errors
///
/// [`CliError::Setup`] with one line naming the file, line, key or variable at fault.
pub fn load_config(options: &Options) -> Result<Config, CliError> {
    let var = |name: &str| {
        options
            .env
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, value)| value.clone())
    };
    let setup = |e: &dyn fmt::Display| CliError::Setup(e.to_string());
    let mut config = match &options.config {
        ConfigFrom::Defaults => {
            let mut config = Config::new();
            config.apply_env(var).map_err(|e| setup(&e))?;
            config
        }
        ConfigFrom::Value(config) => (**config).clone(),
        ConfigFrom::File(path) => {
            load_smol::read_config_with_env(path, var).map_err(|e| setup(&e))?
        }
    };
    if let Some(urls) = options.opensearch {
        config.cluster.urls = Some(urls);
    }
    config.validate().map_err(|e| setup(&e))?;
    Ok(config)
}

/// Whether a change of `key` needs a restart ([`keys::Key::needs_restart`]).
#[must_use]
pub fn needs_restart(key: &str) -> bool {
    keys::find(key).is_some_and(keys::Key::needs_restart)
}

/// Every key whose value differs between `old` and `new`: (key, old value, new value), as
/// [`keys::changes`] finds them, passwords shown as `***`.
#[must_use]
pub fn changes(old: &Config, new: &Config) -> Vec<(&'static str, String, String)> {
    let show = |key: &keys::Key, config: &Config| {
        let value = key.value(config).to_string();
        if value.is_empty() {
            "(none)".to_owned()
        } else {
            value
        }
    };
    keys::changes(old, new)
        .map(|key| (key.name(), show(key, old), show(key, new)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn the_crawler_and_the_benchmarks_peer() {
        let options = parse_args(args(&[]), no_env).unwrap();
        assert!(options.demo.crawler);
        assert_eq!(options.demo.peer, None);
        let options =
            parse_args(args(&["--crawler", "off", "--peer-limiter=vegas"]), no_env).unwrap();
        assert!(!options.demo.crawler);
        assert_eq!(options.demo.peer, Some(crate::peer::PeerLaw::Vegas));
        for (bad, needle) in [
            (
                ["--crawler", "maybe"],
                "--crawler 'maybe' is not one of: on, off",
            ),
            (
                ["--peer-limiter", "gradient"],
                "--peer-limiter 'gradient' is not one of: vegas",
            ),
        ] {
            match parse_args(args(&bad), no_env) {
                Err(CliError::Usage(message)) => assert!(message.contains(needle), "{message}"),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn defaults_and_both_flag_forms() {
        let options = parse_args(args(&[]), no_env).unwrap();
        assert_eq!(options.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(options.runtime, RuntimeKind::Smol);
        // README, *Run the demo*: the index, the corpus of 3,000 documents indexed 10 a
        // `_bulk`, searches on the cluster, no limit of our own on connections or idle time
        // (the defaults below the open-files limit and of 60 s apply).
        assert_eq!(options.demo.index, "load-control-demo");
        assert_eq!(options.demo.corpus, 3_000);
        assert_eq!(crate::app::BATCH, 10);
        assert_eq!(options.demo.search, crate::app::SearchMode::Cluster);
        assert_eq!(
            (options.max_connections, options.idle_timeout),
            (None, None)
        );
        let options = parse_args(
            args(&[
                "--listen=0.0.0.0:9",
                "--runtime",
                "async-std",
                "--opensearch",
                "http://h:9200",
            ]),
            no_env,
        )
        .unwrap();
        assert_eq!(options.listen.port(), 9);
        assert_eq!(options.runtime, RuntimeKind::AsyncStd);
        assert_eq!(options.opensearch.unwrap().as_str(), "http://h:9200");
        let options = parse_args(
            args(&["--opensearch", "http://a:9200,http://[::1]:9200"]),
            no_env,
        )
        .unwrap();
        assert_eq!(options.opensearch.unwrap().len(), 2);
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
            let error = parse_args(args(list), no_env).unwrap_err().to_string();
            assert!(error.contains(needle), "{list:?}: {error}");
        }
        let error = parse_args(args(&["--opensearch", "ftp://u:hunter2@x"]), no_env).unwrap_err();
        assert!(!error.to_string().contains("hunter2"), "{error}");
        assert!(matches!(
            parse_args(args(&["--help"]), no_env),
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
    fn the_cluster_url_comes_from_flag_then_environment_then_file() {
        let dir = std::env::temp_dir().join(format!("load-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("fess_config.properties");
        std::fs::write(&file, "search_engine.http.url=http://file:9200\n").unwrap();
        let env =
            |name: &str| (name == "SEARCH_ENGINE_HTTP_URL").then(|| "http://env:9200".to_owned());
        let first = |options: &Options| load_config(options).unwrap().cluster.urls.unwrap().first();

        let mut options = parse_args(args(&["--config", file.to_str().unwrap()]), no_env).unwrap();
        assert_eq!(first(&options).as_str(), "http://file:9200");
        options = parse_args(args(&["--config", file.to_str().unwrap()]), env).unwrap();
        assert_eq!(
            first(&options).as_str(),
            "http://env:9200",
            "the environment over the file"
        );
        options = parse_args(args(&[]), env).unwrap();
        assert_eq!(
            first(&options).as_str(),
            "http://env:9200",
            "and over the defaults"
        );
        options.opensearch = Some(ClusterUrls::parse("http://flag:9200").unwrap());
        assert_eq!(
            first(&options).as_str(),
            "http://flag:9200",
            "the flag over both"
        );

        let bad_env = parse_args(args(&[]), |name: &str| {
            (name == "SEARCH_ENGINE_HTTP_URL").then(|| "not a url".to_owned())
        })
        .unwrap();
        let error = load_config(&bad_env).unwrap_err().to_string();
        assert!(
            error.starts_with("environment variable SEARCH_ENGINE_HTTP_URL: search_engine.http.url = \"not a url\""),
            "{error}"
        );
        // A flag URL with credentials while the environment sets a user: refused, naming both.
        let mut both = parse_args(args(&[]), |name: &str| {
            (name == "SEARCH_ENGINE_USERNAME").then(|| "admin".to_owned())
        })
        .unwrap();
        both.opensearch = Some(ClusterUrls::parse("http://admin:Zq@h:9200").unwrap());
        let error = load_config(&both).unwrap_err().to_string();
        assert!(
            error.contains("search_engine.http.url") && error.contains("search_engine.username"),
            "{error}"
        );
        assert!(!error.contains("Zq"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
