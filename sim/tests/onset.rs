//! The onset of an overload as the real node's traces show it (`sim/fixtures/traces-af42c7f/`,
//! measured from outside on the law of af42c7f: one OpenSearch 2.19 node alone on a core,
//! fresh front ends in the limit mode, 2x to 4x offered from quiet, every front end's
//! `/admin/stats` and the node's `_nodes/stats` every 0.25 s), and the model beside it.
//!
//! What the traces show, and the model with the node's facts (`NodeFacts::MEASURED`) must
//! show too: the flood bound engages within the first 0.6 s; a front end's in-flight count
//! reaches tens; at the flood bound's release or at arming the cap of some front ends jumps
//! to 20 or more (the surge's own peak seeds it), and in a pair of front ends one of them
//! jumps while the other stays at its initial 8. The model before the traces
//! (`NodeFacts::BEFORE`) never made that jump: it is what the node adds.

use std::path::Path;

use load_sim::{
    CONNECT_US, Fleet, Model, NodeFacts, Policy, Polled, Run, Scenario, TRACED, simulate,
};
use serde_json::Value;

/// One front end's onset, from a node's trace or the model's polls.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Onset {
    /// When the flood bound first held, in seconds from the surge (`None`: never).
    flood_at: Option<f64>,
    /// When the web class first armed.
    armed_at: Option<f64>,
    /// The largest cap in the first 10 s.
    max_cap: f64,
}

/// One run: its front ends' onsets, with the factor and fleet size.
#[derive(Clone, Debug)]
struct Traced {
    name: String,
    fleet: usize,
    onsets: Vec<Onset>,
}

fn number(value: &Value, key: &str) -> f64 {
    value[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {value}"))
}

/// Every limit-mode trace at 2x or more, parsed, by file name.
fn node_traces() -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/traces-af42c7f");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("trace-limit-"))
        })
        .collect();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).expect("a trace");
            let trace: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let name = path
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            (number(&trace, "factor") >= 2.0).then_some((name, trace))
        })
        .collect()
}

/// Every limit-mode run of the node's traces at 2x or more.
fn node_runs() -> Vec<Traced> {
    let mut runs = Vec::new();
    for (name, trace) in node_traces() {
        let fleet = trace["fe"].as_u64().expect("fe") as usize;
        let polls = trace["trace"].as_array().expect("trace");
        let onsets = (0..fleet)
            .map(|i| {
                let at = |test: &dyn Fn(&Value) -> bool| {
                    polls
                        .iter()
                        .find(|p| test(&p["fe"][i]))
                        .map(|p| number(p, "t"))
                };
                Onset {
                    flood_at: at(&|fe| fe["flood"] == Value::Bool(true)),
                    armed_at: at(&|fe| fe["armed"] == Value::Bool(true)),
                    max_cap: polls
                        .iter()
                        .filter(|p| number(p, "t") < 10.0)
                        .map(|p| number(&p["fe"][i], "cap"))
                        .fold(0.0, f64::max),
                }
            })
            .collect();
        runs.push(Traced {
            name,
            fleet,
            onsets,
        });
    }
    runs
}

/// The onset of each front end of a model run from quiet.
fn model_onsets(run: &Run, fleet: usize) -> Vec<Onset> {
    (0..fleet)
        .map(|i| {
            let polls: Vec<&Polled> = run.polls.iter().filter(|p| p.front_end == i).collect();
            let at = |test: &dyn Fn(&Polled) -> bool| polls.iter().find(|p| test(p)).map(|p| p.t);
            Onset {
                flood_at: run.flood_from[i],
                armed_at: at(&|p| p.armed),
                max_cap: polls
                    .iter()
                    .filter(|p| p.t < 10.0)
                    .map(|p| p.cap)
                    .fold(0.0, f64::max),
            }
        })
        .collect()
}

/// The model's runs of the traces' shape, on the law the node ran ([`TRACED`]): one core,
/// the heavy searches, 1 and 2 front ends,
/// 2x, 3x and 4x from quiet, four seeds each.
fn model_runs(facts: NodeFacts) -> Vec<Traced> {
    let model = Model::ONE_CORE;
    let mut runs = Vec::new();
    for fleet in [1, 2] {
        for factor in [2.0, 3.0, 4.0] {
            for seed in 1..=4 {
                let scenario = Scenario {
                    seconds: 10.0,
                    warmup: 0.0,
                    seed,
                    facts,
                    ..Scenario::new(model, Policy::Design(TRACED), Fleet::equal(fleet))
                };
                let run = simulate(&scenario, |_| factor * model.one_x());
                runs.push(Traced {
                    name: format!("{fleet} FE at {factor}x, seed {seed}"),
                    fleet,
                    onsets: model_onsets(&run, fleet),
                });
            }
        }
    }
    runs
}

/// The share of `runs` in which some front end's cap reached `at_least`.
fn jumped(runs: &[Traced], at_least: f64) -> f64 {
    let count = runs
        .iter()
        .filter(|run| run.onsets.iter().any(|o| o.max_cap >= at_least))
        .count();
    count as f64 / runs.len().max(1) as f64
}

/// The share of the pairs in `runs` in which one front end's cap reached `at_least` while
/// the other's stayed at its initial 8 or less.
fn one_of_a_pair(runs: &[Traced], at_least: f64) -> f64 {
    let pairs: Vec<&Traced> = runs.iter().filter(|run| run.fleet == 2).collect();
    let count = pairs
        .iter()
        .filter(|run| {
            let caps: Vec<f64> = run.onsets.iter().map(|o| o.max_cap).collect();
            caps.iter().any(|c| *c >= at_least) && caps.iter().any(|c| *c <= 8.1)
        })
        .count();
    count as f64 / pairs.len().max(1) as f64
}

fn describe(runs: &[Traced]) -> String {
    runs.iter()
        .map(|run| {
            let caps: Vec<String> = run
                .onsets
                .iter()
                .map(|o| format!("{:.1}", o.max_cap))
                .collect();
            format!("{}: max cap {}", run.name, caps.join(" / "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_onset_as_the_node_traced_it() {
    let node = node_runs();
    assert_eq!(node.len(), 10, "the limit-mode traces at 2x or more");
    let model = model_runs(NodeFacts::MEASURED);
    let before = model_runs(NodeFacts::BEFORE);
    // Every front end is bounded as a flood in the surge's first second, before the CPU arms
    // it: on the node each within 0.55 s (the traces' resolution is 0.27 s) and armed at the
    // third poll (2.07 to 2.14 s); in the model all but one in twenty within 1.1 s, half
    // within 0.6 s.
    // How many front ends of `runs` were not bounded as a flood within `bound` s, or not armed
    // at the second to fourth poll (polls at the first request and each second after: the
    // node's figure is a second's, refreshed at its own phase).
    let late = |runs: &[Traced], bound: f64| {
        let mut late = Vec::new();
        for run in runs {
            for onset in &run.onsets {
                if !onset.flood_at.is_some_and(|t| t <= bound)
                    || !onset.armed_at.is_some_and(|t| (0.9..=3.1).contains(&t))
                {
                    late.push(format!("{}: {onset:?}", run.name));
                }
            }
        }
        late
    };
    let node_late = late(&node, 0.6);
    assert!(node_late.is_empty(), "{node_late:?}");
    let model_late = late(&model, 1.1);
    let front_ends: usize = model.iter().map(|run| run.onsets.len()).sum();
    assert!(
        model_late.len() * 20 <= front_ends,
        "{} of {front_ends} front ends: {model_late:#?}",
        model_late.len()
    );
    let mut times: Vec<f64> = model
        .iter()
        .flat_map(|run| run.onsets.iter().filter_map(|o| o.flood_at))
        .collect();
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    assert!(
        median <= 0.6,
        "the model's flood bound at {median:.2} s at the median"
    );
    let (node_jumped, model_jumped) = (jumped(&node, 20.0), jumped(&model, 20.0));
    let (node_pairs, model_pairs) = (one_of_a_pair(&node, 20.0), one_of_a_pair(&model, 20.0));
    eprintln!(
        "cap at 20 or more: node {node_jumped:.2} of runs, model {model_jumped:.2}, before {:.2}; \
         one of a pair: node {node_pairs:.2}, model {model_pairs:.2}",
        jumped(&before, 20.0)
    );
    // The jump, in about as many runs as on the node (six of ten there).
    assert!(
        (0.3..=0.9).contains(&node_jumped) && (0.3..=0.9).contains(&model_jumped),
        "the cap's jump to 20 or more: node in {node_jumped:.2} of runs, model {model_jumped:.2}\n\
         node:\n{}\nmodel:\n{}",
        describe(&node),
        describe(&model)
    );
    // In a pair, one front end jumps and the other stays at its initial cap.
    assert!(
        node_pairs >= 0.2 && model_pairs >= 0.2,
        "one of a pair jumps: node in {node_pairs:.2} of pairs, model {model_pairs:.2}"
    );
    // The model before the traces never made the jump.
    assert!(
        jumped(&before, 20.0) == 0.0,
        "the model before the traces jumped too:\n{}",
        describe(&before)
    );
}

/// The node's CPU lost to the connections fresh front ends open at a surge, per connection,
/// in ms: the tasks a second the node completed in the first 0.27 s of the surge against
/// the median it completed later over a second at 97 % CPU or more, the difference in CPU
/// time spread over the 16 connections each front end opened. [`CONNECT_US`] is the median
/// over the traces, to 0.5 ms.
#[test]
fn the_cost_of_a_new_connection_is_the_traces() {
    let per_connection: Vec<f64> = node_traces()
        .iter()
        .map(|(name, trace)| {
            let polls = trace["trace"].as_array().expect("trace");
            let node = |i: usize| {
                (
                    number(&polls[i]["node"], "completed"),
                    number(&polls[i]["node"], "ts"),
                )
            };
            let rate = |from: usize, to: usize| {
                let ((a, at), (b, bt)) = (node(from), node(to));
                (b - a) / ((bt - at) / 1_000.0)
            };
            let first = rate(0, 1);
            let mut full: Vec<f64> = (12..polls.len().saturating_sub(4))
                .filter(|&i| number(&polls[i]["node"], "cpu") >= 97.0)
                .map(|i| rate(i, i + 4))
                .collect();
            full.sort_by(f64::total_cmp);
            assert!(!full.is_empty(), "{name}: no second at full CPU");
            let full = full[full.len() / 2];
            let span_ms = node(1).1 - node(0).1;
            let fleet = number(trace, "fe");
            (1.0 - first / full) * span_ms / (16.0 * fleet)
        })
        .collect();
    let mut sorted = per_connection.clone();
    sorted.sort_by(f64::total_cmp);
    let median = (sorted[sorted.len() / 2 - 1] + sorted[sorted.len() / 2]) / 2.0;
    eprintln!("ms per connection: {per_connection:.2?}, median {median:.2}");
    assert!(
        (CONNECT_US / 1_000.0 - median).abs() <= 0.5,
        "CONNECT_US {CONNECT_US} µs against the traces' median of {median:.2} ms"
    );
}
