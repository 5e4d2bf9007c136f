//! load-core's own scenarios on an emulated Cortex-M4 (QEMU `mps2-an386`): the core as a
//! microcontroller runs it, `LoadControl` in a `static`, the parser on captured responses in
//! flash, the adaptive gate under a minimal executor. Each case prints `ok NAME` or
//! `FAIL NAME: why` through semihosting, then `N passed, M failed`, and the exit status
//! says whether all passed. `tests/embedded/run.sh` builds it, runs it and checks that.
#![no_std]
#![no_main]

use core::future::Future;
use core::pin::pin;
use core::task::{Context, Poll, Waker};

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use load_core::monitor::{ClusterSink, handle_outcome};
use load_core::node_stats::{ParseError, parse_node_stats};
use load_core::{
    AdaptiveGate, Class, ClusterStatus, ControlConfig, CpuPercent, CpuSample, CpuSource, Decision,
    Instant, LoadControl, Outcome, Pass, SourceError, Threshold,
    config::Origin,
    failures::{FailureCounter, FailureLevel},
    path::classify,
    source::{ScriptedSource, SourceErrorKind},
};

/// What a case returns: `Err(why)` on the first expectation that does not hold.
type Check = Result<(), &'static str>;

fn expect(condition: bool, why: &'static str) -> Check {
    if condition { Ok(()) } else { Err(why) }
}

/// Polls a future on this core until it is ready (no interrupts: a ready-or-pending spin).
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

/// Polls a future once.
fn poll_once<F: Future>(future: core::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

const FESS_CONFIG: &str = include_str!("../../../examples/fess_config.properties");
const CAPTURED_FILTERED: &[u8] =
    include_bytes!("../../fixtures/opensearch/os-2.19.1-real-filtered.json");
const CAPTURED_FULL: &[u8] = include_bytes!("../../fixtures/opensearch/os-2.19.1-real-full.json");

fn config_from_fess_properties() -> Check {
    // The control settings only: the cluster's connection keys are skipped.
    let config =
        ControlConfig::from_properties(FESS_CONFIG).map_err(|_| "the example file is refused")?;
    expect(
        config.web_threshold == Threshold::from_fess(80),
        "web.load.control",
    )?;
    expect(
        config.api_threshold == Threshold::from_fess(90),
        "api.load.control",
    )?;
    expect(
        config.adaptive_threshold.get() == 50,
        "adaptive.load.control",
    )?;
    let later = ControlConfig::from_properties("web.load.control=\nweb.load.control=70\n")
        .map_err(|_| "the last duplicate does not win")?;
    expect(
        later.web_threshold == Threshold::from_fess(70),
        "the last duplicate wins",
    )?;
    let bad = ControlConfig::from_properties("web.load.control=eighty\n");
    expect(
        bad.is_err_and(|e| e.at == Origin::Line(1)),
        "a bad value names its line",
    )
}

static CONTROL: LoadControl = LoadControl::new(70, 80);

fn fess_filter_cases_on_a_static() -> Check {
    expect(
        CONTROL.check("/search?q=x").is_allowed(),
        "0 % before any sample",
    )?;
    expect(
        CONTROL.take_start(),
        "the first controlled request asks for the monitor",
    )?;
    expect(!CONTROL.take_start(), "exactly once")?;
    for (cpu, web, api) in [
        (69, true, true),
        (70, false, true),
        (79, false, true),
        (80, false, false),
    ] {
        CONTROL.update(Instant::from_secs(1), Outcome::Sample(CpuPercent::new(cpu)));
        expect(
            CONTROL.check("/search?q=x").is_allowed() == web,
            "web at the threshold",
        )?;
        expect(
            CONTROL.check("/api/v1/documents").is_allowed() == api,
            "API at its threshold",
        )?;
        expect(CONTROL.check("/admin/").is_allowed(), "admin is excluded")?;
        expect(
            CONTROL.check("/css/style.css").is_allowed(),
            "static files are excluded",
        )?;
    }
    expect(
        CONTROL.check("/api/v1/x") == Decision::Reject(Class::Api),
        "the API class is named",
    )?;
    expect(
        classify("/admin/../search") == Class::Ambiguous,
        "obfuscation is ambiguous",
    )?;
    expect(
        classify("http://h/api/v1/x") == Class::Api,
        "absolute form by its path",
    )
}

fn failures_warn_three_times_then_debug() -> Check {
    let failures = FailureCounter::new();
    for _ in 0..3 {
        expect(
            failures.count_failure() == FailureLevel::Warn,
            "WARN at first",
        )?;
    }
    expect(
        failures.count_failure() == FailureLevel::Debug,
        "then DEBUG",
    )?;
    expect(
        failures.count_success() == 4,
        "a success reports the streak",
    )?;
    expect(failures.consecutive() == 0, "and resets it")
}

fn parser_on_captured_responses() -> Check {
    let filtered = parse_node_stats(CAPTURED_FILTERED).map_err(|_| "the filtered capture")?;
    expect(
        filtered.nodes == 3 && filtered.failed == Some(0),
        "3 nodes, 0 failed",
    )?;
    let full = parse_node_stats(CAPTURED_FULL).map_err(|_| "the full capture")?;
    expect(full.nodes == 3 && full.measured == 3, "every node measured")?;
    expect(
        matches!(
            parse_node_stats(b"{\"a\":0\",\"b\":[[[[1]]]]}"),
            Err(ParseError::Json(_))
        ),
        "a stray quote is not JSON",
    )?;
    let mut deep = [b'['; 4096];
    deep[4095] = b']';
    expect(
        matches!(parse_node_stats(&deep), Err(ParseError::TooDeep { .. })),
        "deep nesting is refused before the parser recurses",
    )
}

fn feed_a_scripted_source() -> Check {
    let script: [Result<CpuSample, SourceError>; 4] = [
        Ok(CpuSample::local(CpuPercent::new(85))),
        Err(SourceError::new(SourceErrorKind::Connect, "refused")),
        Ok(CpuSample::local(CpuPercent::new(40))),
        Ok(CpuSample::local(None)),
    ];
    let source = ScriptedSource::new(&script);
    let control = LoadControl::new(80, 100);
    let status = ClusterStatus::new();
    let sink = ClusterSink::new(&control, &status);
    let mut rejected = [false; 4];
    for (i, slot) in rejected.iter_mut().enumerate() {
        // What the monitor loop does with each poll.
        let outcome = block_on((&source).sample());
        handle_outcome(
            &sink,
            status.failures(),
            Instant::from_secs(i as u64 + 1),
            outcome,
        );
        *slot = !control.check("/search").is_allowed();
    }
    expect(status.failures().total() == 1, "one failure counted")?;
    expect(
        status.raw_cpu() == CpuPercent::new(40),
        "the last raw sample",
    )?;
    // 85 %: rejected; failed poll: fail-open; 40 %: admitted; unknown: admitted.
    expect(
        rejected == [true, false, false, false],
        "Fess's rule over the script",
    )?;
    expect(source.taken() == 4, "every sample taken")
}

static GATE: AdaptiveGate = AdaptiveGate::new(load_core::GateThreshold::from_fess(50));

fn adaptive_gate_waits_and_opens() -> Check {
    GATE.store(CpuPercent::new(90));
    let mut wait = pin!(GATE.wait());
    expect(poll_once(wait.as_mut()).is_pending(), "waits at 90 %")?;
    expect(GATE.waiting() == 1, "one waiter")?;
    GATE.store(CpuPercent::new(95));
    expect(poll_once(wait.as_mut()).is_pending(), "still waits at 95 %")?;
    GATE.store(CpuPercent::new(10));
    expect(poll_once(wait.as_mut()).is_ready(), "opens at 10 %")?;
    expect(GATE.waiting() == 0, "no waiter left")?;
    expect(block_on(GATE.wait()) == Pass::Proceed, "passes when open")?;
    Ok(())
}

/// A named scenario.
type Case = (&'static str, fn() -> Check);

const CASES: [Case; 6] = [
    ("config_from_fess_properties", config_from_fess_properties),
    (
        "fess_filter_cases_on_a_static",
        fess_filter_cases_on_a_static,
    ),
    (
        "failures_warn_three_times_then_debug",
        failures_warn_three_times_then_debug,
    ),
    ("parser_on_captured_responses", parser_on_captured_responses),
    ("feed_a_scripted_source", feed_a_scripted_source),
    (
        "adaptive_gate_waits_and_opens",
        adaptive_gate_waits_and_opens,
    ),
];

/// Instructions executed by `f`, counted with SysTick: under QEMU's `-icount shift=0` every
/// instruction advances the virtual clock by one tick of the CPU clock.
fn instructions(syst: &mut cortex_m::peripheral::SYST, f: impl Fn()) -> u32 {
    syst.set_clock_source(cortex_m::peripheral::syst::SystClkSource::Core);
    syst.set_reload(0x00FF_FFFF);
    syst.clear_current();
    syst.enable_counter();
    let start = cortex_m::peripheral::SYST::get_current();
    f();
    let end = cortex_m::peripheral::SYST::get_current();
    syst.disable_counter();
    start.wrapping_sub(end) & 0x00FF_FFFF
}

#[entry]
fn main() -> ! {
    let mut failed = 0;
    for (name, case) in CASES {
        match case() {
            Ok(()) => hprintln!("ok {}", name),
            Err(why) => {
                failed += 1;
                hprintln!("FAIL {}: {}", name, why);
            }
        }
    }
    hprintln!(
        "sizes: LoadControl {} B, AdaptiveGate {} B, ControlConfig {} B",
        core::mem::size_of::<LoadControl>(),
        core::mem::size_of::<AdaptiveGate>(),
        core::mem::size_of::<ControlConfig>()
    );
    let control = LoadControl::new(80, 90);
    control.update(Instant::from_secs(1), Outcome::Sample(CpuPercent::new(50)));
    let _ = control.take_start();
    let Some(mut peripherals) = cortex_m::Peripherals::take() else {
        panic!("the core peripherals were already taken");
    };
    let syst = &mut peripherals.SYST;
    // Under QEMU's -icount shift=0 an instruction is 1 ns of virtual time, and SysTick counts
    // the board's system clock: 25 MHz on mps2-an386 (40 instructions a tick), 16 MHz on the
    // microbit (62.5).
    const CHECKS: u32 = 10_000;
    let empty = instructions(syst, || {
        for _ in 0..CHECKS {
            core::hint::black_box(());
        }
    });
    let checks = instructions(syst, || {
        for _ in 0..CHECKS {
            let _ = core::hint::black_box(control.check(core::hint::black_box("/search?q=rust")));
        }
    });
    // Cortex-M0 (no compare-and-swap) runs on the microbit; Cortex-M4 on mps2-an386.
    let per_tick_x10: u32 = if cfg!(target_has_atomic = "32") {
        400
    } else {
        625
    };
    hprintln!(
        "check(\"/search?q=rust\"), admitted: about {} instructions each ({} SysTick ticks for {} \
         checks, {} for the empty loop; {} instructions a tick)",
        checks.saturating_sub(empty) * per_tick_x10 / 10 / CHECKS,
        checks,
        CHECKS,
        empty,
        per_tick_x10 / 10
    );
    hprintln!("{} passed, {} failed", CASES.len() - failed, failed);
    debug::exit(if failed == 0 {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    // Semihosting's exit ends QEMU; on a board without a debugger, sleep until reset.
    loop {
        cortex_m::asm::wfi();
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    hprintln!("FAIL panic: {}", info);
    debug::exit(debug::EXIT_FAILURE);
    loop {
        cortex_m::asm::wfi();
    }
}
