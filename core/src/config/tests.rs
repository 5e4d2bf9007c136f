//! The configuration: parsing, keys, environment, validation, addresses.

use super::*;
use crate::{GateThreshold, Threshold, text::Text};

fn parse(text: &str) -> Config {
    match Config::from_properties(text) {
        Ok(config) => config,
        Err(e) => panic!("{text:?}: {e}"),
    }
}

#[test]
fn defaults_are_fess_defaults() {
    let config = parse("");
    assert_eq!(config, Config::DEFAULT);
    assert_eq!(config.control.web_threshold, Threshold::from_fess(100));
    assert_eq!(config.control.api_threshold, Threshold::from_fess(100));
    assert_eq!(config.control.monitor_interval, Duration::from_secs(1));
    assert_eq!(
        config.control.adaptive_threshold,
        GateThreshold::from_fess(50)
    );
    assert_eq!(config.control.retry_after, 60);
    assert_eq!(config.cluster.urls, None);
    assert!(!config.control.http_control_enabled());
    assert!(config.control.adaptive_enabled());
}

#[test]
fn separators_whitespace_and_comments() {
    let config = parse(
        "# comment\n\
         ! another = comment\n\
         \n   \t\n\
         web.load.control=70\n\
         \t api.load.control : 80   \n\
         load.control.monitor.interval 2\n\
         adaptive.load.control\t=\t0\r\n",
    );
    assert_eq!(config.control.web_threshold, Threshold::from_fess(70));
    assert_eq!(config.control.api_threshold, Threshold::from_fess(80));
    assert_eq!(config.control.monitor_interval, Duration::from_secs(2));
    assert_eq!(config.control.adaptive_threshold, GateThreshold::OFF);
    assert!(!config.control.adaptive_enabled());
    // `:=30`: the separator is `:`, the value `=30`, which is not an integer in Java
    // either. Prove it with the error instead:
    assert!(Config::from_properties("load.control.retry.after:=30").is_err());
    assert_eq!(
        parse("load.control.retry.after = 30").control.retry_after,
        30
    );
}

#[test]
fn continuations_and_escapes() {
    let config = parse(
        "web.load.con\\\n    trol = 6\\\n   5\n\
         search_engine.http.url = https\\://admin\\:secret@search.example\\:9200\n\
         api.load.control=\\u0038\\u0030\n",
    );
    assert_eq!(config.control.web_threshold, Threshold::from_fess(65));
    assert_eq!(config.control.api_threshold, Threshold::from_fess(80));
    let url = config.cluster.urls.expect("url").first();
    assert_eq!(url.as_str(), "https://admin:secret@search.example:9200");
    assert_eq!(url.credentials(), Some(("admin", "secret")));
    assert_eq!(
        url.without_credentials().as_str(),
        "https://search.example:9200"
    );
}

#[test]
fn crlf_and_cr_line_endings_count_lines() {
    let error = Config::from_properties("a=1\r\nb=2\rweb.load.control=x\r\n").unwrap_err();
    assert_eq!(error.at, Origin::Line(3));
}

#[test]
fn unknown_keys_are_ignored_last_wins() {
    let config = parse("foo=bar\nweb.load.control=10\nweb.load.control=20\nx\n");
    assert_eq!(config.control.web_threshold, Threshold::from_fess(20));
}

#[test]
fn fess_threshold_meanings_are_kept() {
    let config = parse("web.load.control=200\napi.load.control=-5\nadaptive.load.control=-1");
    assert_eq!(config.control.web_threshold, Threshold::from_fess(200));
    assert_eq!(config.control.api_threshold, Threshold::from_fess(-5));
    assert!(config.control.http_control_enabled());
    assert!(!config.control.adaptive_enabled());
    assert_eq!(
        parse("web.load.control=+80").control.web_threshold,
        Threshold::from_fess(80)
    );
}

#[test]
fn errors_name_line_key_and_value() {
    let cases: [(&str, u32, &str, &str, ConfigErrorKind); 8] = [
        (
            "web.load.control=abc",
            1,
            "web.load.control",
            "abc",
            ConfigErrorKind::NotAnInteger,
        ),
        (
            "\n\napi.load.control=8.5",
            3,
            "api.load.control",
            "8.5",
            ConfigErrorKind::NotAnInteger,
        ),
        (
            "adaptive.load.control=",
            1,
            "adaptive.load.control",
            "",
            ConfigErrorKind::NotAnInteger,
        ),
        (
            "web.load.control=99999999999",
            1,
            "web.load.control",
            "99999999999",
            ConfigErrorKind::NotAnInteger,
        ),
        (
            "load.control.monitor.interval=0",
            1,
            "load.control.monitor.interval",
            "0",
            ConfigErrorKind::OutOfRange {
                min: 1,
                max: 86_400,
            },
        ),
        (
            "load.control.monitor.interval=86401",
            1,
            "load.control.monitor.interval",
            "86401",
            ConfigErrorKind::OutOfRange {
                min: 1,
                max: 86_400,
            },
        ),
        (
            "load.control.retry.after=-1",
            1,
            "load.control.retry.after",
            "-1",
            ConfigErrorKind::OutOfRange {
                min: 1,
                max: 86_400,
            },
        ),
        (
            "search_engine.http.url=ftp://x",
            1,
            "search_engine.http.url",
            "ftp://x",
            ConfigErrorKind::InvalidUrl(UrlError::UnsupportedScheme),
        ),
    ];
    for (text, line, key, value, kind) in cases {
        let error = Config::from_properties(text).unwrap_err();
        assert_eq!(error.at, Origin::Line(line), "{text}");
        assert_eq!(error.key.as_str(), key, "{text}");
        assert_eq!(error.value.as_str(), value, "{text}");
        assert_eq!(error.kind, kind, "{text}");
    }
}

#[test]
fn java_reads_these_files_and_so_does_this() {
    // A surrogate pair escape anywhere, even in a key nobody reads.
    let config = parse("label.emoji=\\uD83D\\uDE00\nweb.load.control=70\n");
    assert_eq!(config.control.web_threshold, Threshold::from_fess(70));
    // The last duplicate wins, whatever the earlier ones said.
    assert_eq!(
        parse("web.load.control=\nweb.load.control=70\n")
            .control
            .web_threshold,
        Threshold::from_fess(70)
    );
    assert_eq!(
        parse("web.load.control=x\napi.load.control=9\nweb.load.control=71")
            .control
            .web_threshold,
        Threshold::from_fess(71)
    );
    // ... and a bad last value is reported on its own line.
    let error = Config::from_properties("web.load.control=70\n\nweb.load.control=x\n").unwrap_err();
    assert_eq!(
        (error.at, error.kind),
        (Origin::Line(3), ConfigErrorKind::NotAnInteger)
    );
    // A comment line inside a continuation that has nothing yet is a comment.
    assert_eq!(
        parse("\\\n# c \\\nweb.load.control=42\n")
            .control
            .web_threshold,
        Threshold::from_fess(42)
    );
    // Continuations join before escapes are decoded.
    assert_eq!(
        parse("web.load.control=\\u00\\\n  37\n")
            .control
            .web_threshold,
        Threshold::from_fess(7)
    );
}

#[test]
fn long_values_are_refused_never_cut() {
    let zeros = std::format!("x=1\nweb.load.control={}7\n", "0".repeat(512));
    let error = Config::from_properties(&zeros).unwrap_err();
    assert_eq!(error.kind, ConfigErrorKind::TooLong { max: 512 });
    assert_eq!(
        (error.at, error.key.as_str()),
        (Origin::Line(2), "web.load.control")
    );
    let spaces = std::format!("web.load.control=70{}x\n", " ".repeat(600));
    assert_eq!(
        Config::from_properties(&spaces).unwrap_err().kind,
        ConfigErrorKind::TooLong { max: 512 }
    );
    // Unknown keys may be as long as they like.
    let long = std::format!("fess.long={}\nweb.load.control=60\n", "v".repeat(10_000));
    assert_eq!(parse(&long).control.web_threshold, Threshold::from_fess(60));
    // A known value just within the limit is read whole.
    let padded = std::format!("web.load.control={}61\n", "0".repeat(510));
    assert_eq!(
        parse(&padded).control.web_threshold,
        Threshold::from_fess(61)
    );
}

#[test]
fn latin1_bytes_are_read_as_java_reads_them() {
    let (config, encoding) =
        Config::from_properties_bytes(b"label=caf\xe9\nweb.load.control=55\n").unwrap();
    assert_eq!(
        (config.control.web_threshold.get(), encoding),
        (55, Encoding::Latin1)
    );
    let (_, encoding) = Config::from_properties_bytes("label=café\n".as_bytes()).unwrap();
    assert_eq!(encoding, Encoding::Utf8);
}

#[test]
fn malformed_escape_is_a_malformed_line() {
    let error = Config::from_properties("ok=1\nfoo=\\u12G4\n").unwrap_err();
    assert_eq!(error.at, Origin::Line(2));
    assert_eq!(error.kind, ConfigErrorKind::MalformedEscape);
    assert!(error.to_string().starts_with("line 2: "), "{error}");
    // A lone surrogate is not malformed (Java keeps it; here it becomes U+FFFD).
    assert!(Config::from_properties("foo=\\uD800").is_ok());
}

#[test]
fn apply_keeps_the_old_config_on_error() {
    let mut config = parse("web.load.control=70");
    assert!(
        config
            .apply_properties("api.load.control=80\nweb.load.control=x")
            .is_err()
    );
    assert_eq!(config.control.web_threshold, Threshold::from_fess(70));
    assert_eq!(config.control.api_threshold, Threshold::from_fess(100));
}

#[test]
fn long_values_are_cut_in_errors() {
    let mut long = heapless::String::<200>::new();
    let _ = long.push_str("web.load.control=");
    for _ in 0..60 {
        let _ = long.push('é');
    }
    let error = Config::from_properties(&long).unwrap_err();
    assert!(error.value.is_truncated());
    assert_eq!(error.value.as_str().chars().count(), 24);
}

#[test]
fn beyond_fess_keys_default_to_fess_behaviour() {
    let config = Config::DEFAULT;
    assert_eq!(config.control.failure_policy, FailurePolicy::Open);
    assert_eq!(config.control.smoothing, Smoothing::None);
    assert_eq!(
        (config.control.enter_samples, config.control.exit_margin),
        (1, 0)
    );
    assert_eq!(config.control.min_hold, Duration::ZERO);
    assert_eq!(config.control.mode, Mode::Enforce);
    assert_eq!(config.control.retry_after_jitter, 0);
}

#[test]
fn beyond_fess_keys_parse() {
    let config = parse(
        "load.control.smoothing.tau=8\n\
         load.control.smoothing = EWMA\n\
         load.control.failure.policy=closed\n\
         load.control.stale.after=30\n\
         load.control.enter.samples=3\n\
         load.control.exit.margin=10\n\
         load.control.min.hold=20\n\
         load.control.mode=monitor\n\
         load.control.retry.after.jitter=15\n\
         load.control.monitor.jitter=30\n\
         adaptive.load.control.source=cgroup\n",
    );
    assert_eq!(config.control.monitor_jitter, Duration::from_secs(30));
    assert_eq!(config.control.adaptive_source, CpuSourceKind::Cgroup);
    assert_eq!(
        config.control.smoothing,
        Smoothing::Ewma {
            tau: Duration::from_secs(8)
        }
    );
    assert_eq!(config.control.failure_policy, FailurePolicy::Closed);
    assert_eq!(config.control.stale_after, Duration::from_secs(30));
    assert_eq!(
        (config.control.enter_samples, config.control.exit_margin),
        (3, 10)
    );
    assert_eq!(config.control.min_hold, Duration::from_secs(20));
    assert_eq!(config.control.mode, Mode::Monitor);
    assert_eq!(config.control.retry_after_jitter, 15);
    assert_eq!(
        parse("load.control.smoothing=ewma").control.smoothing,
        Smoothing::Ewma { tau: DEFAULT_TAU }
    );
    assert_eq!(
        parse("load.control.smoothing.tau=8").control.smoothing,
        Smoothing::None
    );
}

#[test]
fn beyond_fess_errors() {
    for (text, kind, message) in [
        (
            "load.control.failure.policy=maybe",
            ConfigErrorKind::UnknownValue {
                expected: "open|hold|closed",
            },
            "expected one of: open, hold, closed",
        ),
        (
            "load.control.mode=on",
            ConfigErrorKind::UnknownValue {
                expected: "enforce|monitor",
            },
            "enforce, monitor",
        ),
        (
            "load.control.enter.samples=0",
            ConfigErrorKind::OutOfRange { min: 1, max: 1000 },
            "1 to 1000",
        ),
        (
            "load.control.exit.margin=101",
            ConfigErrorKind::OutOfRange { min: 0, max: 100 },
            "0 to 100",
        ),
        (
            "load.control.retry.after.jitter=-1",
            ConfigErrorKind::OutOfRange { min: 0, max: 3600 },
            "0 to 3600",
        ),
        (
            "load.control.smoothing.tau=0",
            ConfigErrorKind::OutOfRange {
                min: 1,
                max: 86_400,
            },
            "1 to 86400",
        ),
    ] {
        let error = Config::from_properties(text).unwrap_err();
        assert_eq!(error.kind, kind, "{text}");
        assert!(error.to_string().contains(message), "{error}");
    }
}

#[test]
fn a_refused_url_never_shows_its_password() {
    for url in [
        "http://admin:Zq/Xw@host:9200",
        "http://admin:Zq#Xw@host:9200",
        "http://admin:Zq?Xw@host:9200",
        "ftp://admin:Zq Xw@host",
        "http://admin:Zq:Xw@host:99999",
        "http://admin:Zq,Xw@host:99999",
        "http://ok:9200, http://admin:Zq,Xw@host:99999",
    ] {
        let text = std::format!("search_engine.http.url = {url}\n");
        let error = Config::from_properties(&text).unwrap_err();
        let shown = std::format!("{error} {error:?} {}", error.value);
        assert!(
            !shown.contains("Zq") && !shown.contains("Xw"),
            "{url}: {shown}"
        );
        assert!(shown.contains("admin:***@host"), "{url}: {shown}");
    }
    let long = std::format!("search_engine.http.url=http://u:{}@h\n", "Zq".repeat(300));
    let shown = std::format!("{}", Config::from_properties(&long).unwrap_err());
    assert!(!shown.contains("Zq"), "{shown}");
}

#[test]
fn urls() {
    for (text, expected) in [
        ("http://localhost:9200", Ok(())),
        ("HTTPS://search.example", Ok(())),
        ("https://[::1]:9200/", Ok(())),
        ("http://u:p@h:1/prefix", Ok(())),
        ("localhost:9200", Err(UrlError::UnsupportedScheme)),
        ("http://", Err(UrlError::MissingHost)),
        ("http://user@:80", Err(UrlError::MissingHost)),
        ("http://h:0", Err(UrlError::InvalidPort)),
        ("http://h:99999", Err(UrlError::InvalidPort)),
        ("http://h:+80", Err(UrlError::InvalidPort)),
        (
            "http://a:9200,http://b:9200",
            Err(UrlError::InvalidCharacter),
        ),
        ("http://a b", Err(UrlError::InvalidCharacter)),
        // Found by the properties fuzzer: a multi-byte character where the scheme's
        // prefix would end panicked on a non-boundary slice.
        ("httpꌚ://h", Err(UrlError::UnsupportedScheme)),
        ("é", Err(UrlError::UnsupportedScheme)),
        ("https:/ꌚ", Err(UrlError::UnsupportedScheme)),
    ] {
        assert_eq!(NodeUrl::parse(text).map(|_| ()), expected, "{text}");
    }
    let url = NodeUrl::parse("https://admin:hunter2@h:9200/x").unwrap();
    let mut shown = heapless::String::<128>::new();
    let _ = core::fmt::write(&mut shown, format_args!("{url} {url:?}"));
    assert!(!shown.contains("hunter2"), "{shown}");
    assert!(shown.contains("admin:***@h:9200/x"), "{shown}");
    assert_eq!(parse("search_engine.http.url=").cluster.urls, None);
}

/// Issue: a Fess config's comma-separated list was refused at start-up, and its
/// username/password keys were silently ignored.
#[test]
fn fess_connection_keys_are_read() {
    let config = parse(
        "search_engine.http.url=http://node1:9200, http://node2:9200 ,http://[::1]:9200\n\
         search_engine.username=admin\n\
         search_engine.password=s3cr#t pass\n\
         search_engine.http.ssl.certificate_authorities=/etc/fess/root-ca.pem\n",
    );
    let urls = config.cluster.urls.expect("urls");
    let all: std::vec::Vec<_> = urls
        .iter()
        .map(|u| std::string::String::from(u.as_str()))
        .collect();
    assert_eq!(
        all,
        [
            "http://node1:9200",
            "http://node2:9200",
            "http://[::1]:9200"
        ]
    );
    let (user, password) = config.cluster.credentials().expect("both set");
    assert_eq!((user, password.expose()), ("admin", "s3cr#t pass"));
    assert_eq!(
        config
            .cluster
            .certificate_authorities
            .map(|p| std::string::String::from(p.as_str())),
        Some("/etc/fess/root-ca.pem".into())
    );
    // One without the other is not used, as in Fess.
    assert_eq!(
        parse("search_engine.username=admin").cluster.credentials(),
        None
    );
    assert_eq!(
        parse("search_engine.password=x").cluster.credentials(),
        None
    );
}

#[test]
fn address_lists_are_checked_item_by_item() {
    for (text, kind) in [
        ("http://a:9200,,http://b:9200", UrlError::EmptyItem),
        ("http://a:9200,", UrlError::EmptyItem),
        ("http://a:9200,ftp://b", UrlError::UnsupportedScheme),
        ("http://a:9200,http://b:0", UrlError::InvalidPort),
        (
            "http://a,http://b,http://c,http://d,http://e,http://f,http://g,http://h,http://i",
            UrlError::TooMany,
        ),
    ] {
        let error =
            Config::from_properties(&std::format!("search_engine.http.url={text}")).unwrap_err();
        assert_eq!(error.kind, ConfigErrorKind::InvalidUrl(kind), "{text}");
        assert_eq!(error.key.as_str(), keys::SEARCH_ENGINE_URL);
    }
    // A refused list never shows a password, in any item.
    let error =
        Config::from_properties("search_engine.http.url=http://u:Zq1@a:9200,http://v:Zq2@b:0")
            .unwrap_err();
    let shown = std::format!("{error} {error:?}");
    assert!(!shown.contains("Zq"), "{shown}");
    assert!(
        shown.contains("u:***@a:9200,v:***@b:0")
            || shown.contains("http://u:***@a:9200,http://v:***@b:0"),
        "{shown}"
    );
}

#[test]
fn the_environment_overrides_the_file() {
    let mut config = parse(
        "search_engine.http.url=http://file:9200\nsearch_engine.username=fileuser\n\
         search_engine.password=filepass\n",
    );
    let env = |name: &str| match name {
        "SEARCH_ENGINE_HTTP_URL" => Some("http://env1:9200,http://env2:9200"),
        "SEARCH_ENGINE_PASSWORD" => Some("envpass"),
        "SEARCH_ENGINE_USERNAME" => Some("   "), // blank: left as the file says
        _ => None,
    };
    config.apply_env(env).unwrap();
    assert_eq!(config.cluster.urls.unwrap().len(), 2);
    let (user, password) = config.cluster.credentials().unwrap();
    assert_eq!((user, password.expose()), ("fileuser", "envpass"));

    let mut config = Config::new();
    let error = config
        .apply_env(|name: &str| (name == "SEARCH_ENGINE_HTTP_URL").then_some("node1:9200"))
        .unwrap_err();
    assert_eq!(error.at, Origin::Variable("SEARCH_ENGINE_HTTP_URL"));
    assert_eq!(
        error.to_string(),
        "environment variable SEARCH_ENGINE_HTTP_URL: search_engine.http.url = \"node1:9200\": \
         invalid URL: expected http:// or https://"
    );
    assert_eq!(config, Config::new(), "unchanged on error");
}

#[test]
fn credentials_in_the_url_and_in_the_keys_are_a_conflict_naming_both() {
    let error = Config::from_properties(
        "search_engine.http.url=https://admin:Zq9@h:9200\nsearch_engine.username=admin\n",
    )
    .unwrap_err();
    assert_eq!(
        error.kind,
        ConfigErrorKind::Conflict {
            with: keys::SEARCH_ENGINE_USERNAME
        }
    );
    let message = error.to_string();
    assert!(
        message.contains("search_engine.http.url") && message.contains("search_engine.username"),
        "{message}"
    );
    assert!(!message.contains("Zq9"), "{message}");
    // File URL with userinfo, password from the environment: the same conflict.
    let mut config = parse("search_engine.http.url=https://admin:Zq9@h:9200");
    let error = config
        .apply_env(|name: &str| (name == "SEARCH_ENGINE_PASSWORD").then_some("other"))
        .unwrap_err();
    assert_eq!(
        error.kind,
        ConfigErrorKind::Conflict {
            with: keys::SEARCH_ENGINE_PASSWORD
        }
    );
    // Userinfo alone is still accepted.
    assert!(config.cluster.urls.unwrap().has_credentials());
}

#[test]
fn a_password_never_shows() {
    let config = parse("search_engine.username=admin\nsearch_engine.password=Zq-hunter2\n");
    let key = keys::find(keys::SEARCH_ENGINE_PASSWORD).unwrap();
    let shown = std::format!("{config:?} {}", key.value(&config));
    assert!(!shown.contains("Zq-hunter2"), "{shown}");
    assert_eq!(key.value(&config).to_string(), "***");
    assert_eq!(key.value(&Config::new()).to_string(), "");
    let long = std::format!("search_engine.password={}\n", "Zq".repeat(200));
    let error = Config::from_properties(&long).unwrap_err();
    assert_eq!(error.kind, ConfigErrorKind::TooLong { max: 256 });
    assert!(!std::format!("{error} {error:?}").contains("Zq"));
    // A change of password alone is a change.
    let other = parse("search_engine.username=admin\nsearch_engine.password=other\n");
    let changed: std::vec::Vec<_> = keys::changes(&config, &other).map(|k| k.name()).collect();
    assert_eq!(changed, [keys::SEARCH_ENGINE_PASSWORD]);
    let a = parse("search_engine.http.url=http://u:one@h");
    let b = parse("search_engine.http.url=http://u:two@h");
    let changed: std::vec::Vec<_> = keys::changes(&a, &b).map(|k| k.name()).collect();
    assert_eq!(changed, [keys::SEARCH_ENGINE_URL]);
}

#[test]
fn the_key_table_drives_parsing_and_shows_what_it_read() {
    // Every key reads back the value it shows, and its default is Config::DEFAULT's.
    for key in &keys::TABLE {
        let mut config = Config::new();
        let shown = std::format!("{}", key.default_value());
        if !shown.is_empty() {
            key.parse(&mut config, &shown)
                .unwrap_or_else(|e| panic!("{}: {e:?}", key.name()));
        }
        assert_eq!(
            std::format!("{}", key.value(&config)),
            shown,
            "{}",
            key.name()
        );
        assert!(key.check(&Config::DEFAULT).is_ok(), "{}", key.name());
    }
    assert_eq!(keys::ALL.len(), keys::TABLE.len());
    let restart: std::vec::Vec<_> = keys::TABLE
        .iter()
        .filter(|k| k.needs_restart())
        .map(|k| k.name())
        .collect();
    assert_eq!(
        restart,
        [
            keys::MONITOR_INTERVAL,
            keys::SEARCH_ENGINE_URL,
            keys::SEARCH_ENGINE_USERNAME,
            keys::SEARCH_ENGINE_PASSWORD,
            keys::SEARCH_ENGINE_CA,
            keys::MONITOR_JITTER,
            keys::ADAPTIVE_SOURCE
        ]
    );
}

#[test]
fn configs_built_in_code_are_validated_like_files() {
    let mut config = Config::new();
    config.control.enter_samples = 0;
    let error = config.validate().unwrap_err();
    assert_eq!(
        (error.at, error.key.as_str()),
        (Origin::Config, keys::ENTER_SAMPLES)
    );
    assert_eq!(
        error.to_string(),
        "configuration: load.control.enter.samples = \"0\": out of range (expected 1 to 1000)"
    );
    let mut config = Config::new();
    config.control.retry_after = 0;
    assert_eq!(
        config.validate().unwrap_err().key.as_str(),
        keys::RETRY_AFTER
    );
    let mut config = Config::new();
    config.control.retry_after_jitter = MAX_JITTER + 1;
    assert!(config.validate().is_err());
    let mut config = Config::new();
    config.control.smoothing = Smoothing::Ewma {
        tau: Duration::ZERO,
    };
    assert_eq!(
        config.validate().unwrap_err().key.as_str(),
        keys::SMOOTHING_TAU
    );
    let mut config = Config::new();
    config.cluster.urls = Some(ClusterUrls::parse("http://u:p@h").unwrap());
    config.cluster.username = Text::new("u");
    assert!(matches!(
        config.validate().unwrap_err().kind,
        ConfigErrorKind::Conflict { .. }
    ));
}

#[test]
fn reloadable_keeps_exactly_the_restart_keys() {
    let every = "web.load.control=1\napi.load.control=2\nload.control.monitor.interval=3\n\
        adaptive.load.control=4\nsearch_engine.http.url=http://a:9200\n\
        search_engine.username=u\nsearch_engine.password=p\n\
        search_engine.http.ssl.certificate_authorities=/ca.pem\nload.control.retry.after=5\n\
        load.control.failure.policy=hold\nload.control.stale.after=6\n\
        load.control.smoothing=ewma\nload.control.smoothing.tau=7\n\
        load.control.enter.samples=8\nload.control.exit.margin=9\nload.control.min.hold=10\n\
        load.control.mode=monitor\nload.control.retry.after.jitter=11\n\
        load.control.monitor.jitter=12\nadaptive.load.control.source=cgroup\n\
        load.control.admission=limit\nload.control.admission.cooloff=5\n\
        load.control.admission.initial=32\n";
    let new = parse(every);
    let running = Config::new();
    // The test file sets every key to a non-default value.
    assert_eq!(keys::changes(&running, &new).count(), keys::TABLE.len());
    let applied = running.reloadable(&new);
    for key in &keys::TABLE {
        let kept = !key.differs(&applied, &running);
        let taken = !key.differs(&applied, &new);
        assert_eq!(
            (kept, taken),
            (key.needs_restart(), !key.needs_restart()),
            "{}",
            key.name()
        );
    }
}

/// Each ranged key states its range once ([`keys::Key::range`]): its documentation ends
/// with it, a file's value is accepted at both ends and refused one past each with the range
/// named, and the check of a value set in code agrees.
#[test]
fn every_ranged_key_accepts_its_range_and_names_it() {
    let mut ranged = Vec::new();
    for key in &keys::TABLE {
        let Some(range) = key.range() else {
            continue;
        };
        ranged.push(key.name());
        let (min, max) = (*range.start(), *range.end());
        assert!(
            key.doc().ends_with(&format!("({min} to {max})")),
            "{}: {:?}",
            key.name(),
            key.doc()
        );
        // The time constant is read with the average that uses it.
        let fresh = || {
            let mut config = Config::new();
            config.control.smoothing = Smoothing::Ewma { tau: DEFAULT_TAU };
            config
        };
        for value in [min, max] {
            let mut config = fresh();
            assert_eq!(
                key.parse(&mut config, &value.to_string()),
                Ok(()),
                "{}",
                key.name()
            );
            assert_eq!(key.check(&config), Ok(()), "{} = {value}", key.name());
            assert_eq!(key.value(&config).to_string(), value.to_string());
        }
        let refused = i64::from(min) - 1;
        for value in [refused, i64::from(max) + 1] {
            let mut config = fresh();
            assert_eq!(
                key.parse(&mut config, &value.to_string()),
                Err(ConfigErrorKind::OutOfRange { min, max }),
                "{} = {value}",
                key.name()
            );
            assert_eq!(
                config,
                fresh(),
                "{}: a refused value changes nothing",
                key.name()
            );
        }
    }
    assert_eq!(ranged.len(), 11, "{ranged:?}");
}

/// A duration set in code is checked against its key's range in seconds: below a second
/// is accepted, zero only where the least is 0, and one past the most is refused.
#[test]
fn a_duration_set_in_code_is_checked_against_its_range() {
    let check = |name: &str, set: &dyn Fn(&mut Config)| {
        let mut config = Config::new();
        set(&mut config);
        keys::find(name).expect(name).check(&config)
    };
    let half = Duration::from_millis(500);
    assert_eq!(
        check(keys::MONITOR_INTERVAL, &|c| c.control.monitor_interval =
            half),
        Ok(())
    );
    assert_eq!(
        check(keys::MONITOR_INTERVAL, &|c| c.control.monitor_interval =
            Duration::ZERO),
        Err(ConfigErrorKind::OutOfRange {
            min: 1,
            max: MAX_SECONDS
        })
    );
    assert_eq!(
        check(keys::MIN_HOLD, &|c| c.control.min_hold = Duration::ZERO),
        Ok(())
    );
    assert_eq!(
        check(keys::MONITOR_JITTER, &|c| {
            c.control.monitor_jitter = Duration::from_secs(u64::from(MAX_JITTER)) + half;
        }),
        Err(ConfigErrorKind::OutOfRange {
            min: 0,
            max: MAX_JITTER
        })
    );
}
