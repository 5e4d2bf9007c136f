//! The page around the charts: badges, escaping, the source's name, links, settings, and a
//! server without background work.

use std::time::Duration;

use load_core::history::ClusterHistory;
use load_core::{AdmissionMode, Config, GateThreshold, LoadControl, Threshold};

use load_core::source::SourceKind;

use super::super::page::page as render;
use super::{background, cluster_history, local_history, view};

/// The badges say what load control does now, not what the last poll recorded: before the
/// first poll, with `load.control.failure.policy=closed`, every request is rejected.
#[test]
fn the_badges_follow_the_live_state() {
    let empty = ClusterHistory::new().snapshot();
    let local = local_history().snapshot();
    let mut view = view(&empty, &local);
    view.armed_web = true;
    let page = render(&view);
    assert!(page.contains("Web: rejecting (≥ 70%)"), "{page}");
    assert!(page.contains("API: admitting (&lt; 90%)"), "{page}");
}

#[test]
fn the_page_escapes_what_it_did_not_write_and_loads_nothing() {
    let (cluster, local) = (cluster_history().snapshot(), local_history().snapshot());
    let mut view = view(&cluster, &local);
    view.last_error = Some((
        "http://127.0.0.1:9200/: unreadable body: <script>alert(1)</script>".to_owned(),
        Duration::from_secs(3),
    ));
    view.settings
        .push(("search_engine.http.url", "\"><img src=x>".to_owned()));
    let page = render(&view);
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt; (3s ago)"));
    assert!(page.contains("&quot;&gt;&lt;img src=x&gt;"));
    assert!(!page.contains("<script"), "no script at all");
    assert!(!page.contains("<img"));
    assert!(!page.contains("http-equiv=\"refresh\" content=\"0\""));
    assert!(page.contains("<meta http-equiv=\"refresh\" content=\"2\">"));
    assert!(page.contains("1234 units of work, 12340 documents indexed, 2 task(s) waiting"));
    // Links to the other admin pages only; nothing to fetch.
    assert!(!page.contains(" src=\""), "{page}");
    assert!(!page.contains("href=\"http"), "{page}");

    view.refresh = 0;
    assert!(!render(&view).contains("http-equiv"));
}

/// A server without background work: no gate, so the page shows no machine's CPU, no
/// background work and no chart of it.
#[test]
fn a_server_without_background_work_shows_none() {
    let (cluster, local) = (cluster_history().snapshot(), local_history().snapshot());
    let mut view = view(&cluster, &local);
    view.background = None;
    let html = render(&view);
    for absent in [
        "local-now",
        "crawler-state",
        "local-cpu",
        "id=\"crawler\"",
        "Crawler",
    ] {
        assert!(!html.contains(absent), "{absent}: {html}");
    }
    assert!(html.contains("id=\"cluster-cpu\""), "{html}");
}

/// The page names the source as it is: a fixed value is not a cluster, nor this machine.
#[test]
fn the_page_names_its_source_as_it_is() {
    let (cluster, local) = (cluster_history().snapshot(), local_history().snapshot());
    let mut view = view(&cluster, &local);
    for (source, badge, heading) in [
        (
            Some(SourceKind::Cluster),
            "Cluster CPU (busiest node): 20%",
            "<h2>Cluster CPU</h2>",
        ),
        (
            Some(SourceKind::Machine),
            "This machine's CPU (requests): 20%",
            "<h2>This machine's CPU</h2>",
        ),
        (
            Some(SourceKind::Fixed),
            "CPU (a fixed value): 20%",
            "<h2>CPU (a fixed value)</h2>",
        ),
        (
            Some(SourceKind::Unnamed),
            "Source CPU: 20%",
            "<h2>Source CPU</h2>",
        ),
        (
            None,
            "Source CPU (request control off): 20%",
            "<h2>Source CPU</h2>",
        ),
    ] {
        view.source = source;
        let html = render(&view);
        assert!(html.contains(badge), "{source:?}: {html}");
        assert!(html.contains(heading), "{source:?}: {html}");
        if source != Some(SourceKind::Cluster) {
            assert!(!html.contains("Cluster"), "{source:?}: {html}");
            assert!(!html.contains("busiest node"), "{source:?}: {html}");
        }
    }
}

/// The footer links only what the caller handed the view, escaped.
#[test]
fn the_page_links_only_what_it_was_handed() {
    let (cluster, local) = (cluster_history().snapshot(), local_history().snapshot());
    let html = render(&view(&cluster, &local));
    assert!(!html.contains("<a "), "{html}");
    let view = view(&cluster, &local)
        .with_link("JSON stats", "/admin/stats")
        .with_link("<metrics>", "/metrics?a=1&b=\"2\"");
    let html = render(&view);
    assert!(
        html.contains(
            "<a href=\"/admin/stats\">JSON stats</a>, <a href=\"/metrics?a=1&amp;b=&quot;2&quot;\">\
             &lt;metrics&gt;</a>."
        ),
        "{html}"
    );
}

/// The settings table holds the configuration's values, but the thresholds, the mode and
/// the admission as requests are decided with now (a reload since the configuration was
/// read), and the gate's threshold as it is now.
#[test]
fn the_settings_table_shows_the_live_values() {
    let (cluster, local) = (cluster_history().snapshot(), local_history().snapshot());
    let config = Config::from_properties(
        "web.load.control=70\napi.load.control=90\nadaptive.load.control=75\n\
         load.control.monitor.interval=3\n",
    )
    .expect("config");
    let mut view = view(&cluster, &local);
    view.web_threshold = Threshold::from_fess(55);
    view.admission = AdmissionMode::Limit;
    background(&mut view).threshold = GateThreshold::from_fess(60);
    let view = view.with_settings(&config);
    let value = |key: &str| {
        view.settings
            .iter()
            .find(|(name, _)| *name == key)
            .map(|(_, value)| value.clone())
    };
    assert_eq!(value("web.load.control").as_deref(), Some("55"));
    assert_eq!(value("api.load.control").as_deref(), Some("90"));
    assert_eq!(value("adaptive.load.control").as_deref(), Some("60"));
    assert_eq!(value("load.control.admission").as_deref(), Some("limit"));
    assert_eq!(value("load.control.monitor.interval").as_deref(), Some("3"));
    assert_eq!(value("search_engine.http.url").as_deref(), Some("not set"));

    // Without a gate, no gate's key.
    let mut view = self::view(&cluster, &local);
    view.background = None;
    let view = view.with_settings(&config);
    assert!(
        view.settings
            .iter()
            .all(|(name, _)| *name != "adaptive.load.control"),
        "{:?}",
        view.settings
    );
}

/// In the limit mode on a service's own CPU, the page says the law reads the service's own
/// requests over its cores.
#[test]
fn the_limit_mode_on_its_own_cores_says_so() {
    let mut config = Config::default();
    config.control.web_threshold = 70.into();
    config.control.admission = AdmissionMode::Limit;
    let control = LoadControl::from_config(&config.control);
    control.observe_load(None, Some(2));
    let (cluster, local) = (cluster_history().snapshot(), local_history().snapshot());
    let mut view = view(&cluster, &local);
    view.admission = AdmissionMode::Limit;
    view.source = Some(SourceKind::Machine);
    view.live = control.admission();
    let html = render(&view);
    assert!(
        html.contains(
            "What the limit mode reads: this machine's CPU is the service's own: its 0 \
             request(s) in flight over 2 core(s) are the load; not saturated"
        ),
        "{html}"
    );
}

/// Found by a newcomer's trial: the rejections' chart and line shared an id, a badge wrote a
/// raw `<`, and a "Settings" heading stood over no setting. Each id once, text escaped, the
/// table only with the settings asked for, and the last poll error shown either way.
#[test]
fn ids_are_unique_text_is_escaped_and_the_settings_come_when_asked() {
    let (cluster, local) = (cluster_history().snapshot(), local_history().snapshot());
    let mut view = view(&cluster, &local);
    view.settings.clear();
    let html = render(&view);
    let mut ids: Vec<&str> = html
        .split(" id=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    let all = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all, "an id twice: {html}");
    assert!(!html.contains("(<"), "{html}");
    assert!(!html.contains("<h2>Settings</h2>"), "{html}");
    assert!(
        !html.contains("Last poll error"),
        "no error, no line: {html}"
    );
    view.last_error = Some(("cannot connect".to_owned(), Duration::from_secs(4)));
    let html = render(&view);
    assert!(
        html.contains("<th>Last poll error</th><td class=\"error\" id=\"last-error\">cannot connect (4s ago)</td>"),
        "{html}"
    );
    assert!(!html.contains("<h2>Settings</h2>"), "{html}");
}
