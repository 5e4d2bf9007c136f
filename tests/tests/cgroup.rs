//! Container-aware local CPU: cgroup fixture trees (`tests/fixtures/cgroup`) and the
//! readings expected from them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use load_core::{CpuPercent, Instant, config::CpuSourceKind, time::ManualClock};
use load_system::{Cgroup, CgroupSource, CgroupVersion, LocalCpu, SystemSource};

fn tree(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/cgroup")
        .join(name)
}

/// A writable copy of a fixture tree, removed on drop.
struct Copy(PathBuf);

impl Copy {
    fn of(name: &str) -> Copy {
        let to = std::env::temp_dir().join(format!(
            "cgroup-{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        copy_dir(&tree(name), &to);
        Copy(to)
    }
}

impl Drop for Copy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

#[test]
fn limits_of_every_tree() {
    for (name, version, limit) in [
        ("v2-quota", CgroupVersion::V2, Some(1.5)),
        ("v2-no-limit", CgroupVersion::V2, Some(64.0)),
        ("v2-cpuset", CgroupVersion::V2, Some(1.0)),
        ("v1", CgroupVersion::V1, Some(0.5)),
        ("host-root", CgroupVersion::V2, Some(64.0)),
    ] {
        let cgroup = Cgroup::detect(&tree(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(cgroup.version(), version, "{name}");
        assert_eq!(cgroup.limit(), limit, "{name}");
    }
    let usage = Cgroup::detect(&tree("v1"))
        .expect("v1")
        .usage()
        .expect("usage");
    assert_eq!(
        usage,
        Duration::from_secs(2),
        "cpuacct.usage is in nanoseconds"
    );
}

#[test]
fn odd_and_missing_trees_are_errors_not_panics() {
    for name in ["odd", "does-not-exist"] {
        let error = Cgroup::detect(&tree(name)).expect_err(name);
        assert!(
            matches!(error, load_system::CgroupError::NotFound { .. })
                && error
                    .to_string()
                    .contains("no readable cgroup CPU accounting"),
            "{name}: {error}"
        );
    }
}

#[test]
fn usage_over_time_relative_to_a_fractional_quota() {
    let copy = Copy::of("v2-quota");
    let clock = ManualClock::new(Instant::from_secs(100));
    let cgroup = Cgroup::detect(&copy.0).expect("v2");
    let mut source = CgroupSource::new(cgroup, 1.5, &clock).expect("source");
    // 0.75 s of CPU in 1 s of wall time on 1.5 CPUs: 50 %.
    std::fs::write(copy.0.join("cpu.stat"), "usage_usec 1750000\n").expect("write");
    clock.advance(Duration::from_secs(1));
    assert_eq!(
        source.sample_now().expect("sample").cpu,
        CpuPercent::new(50)
    );
    // 3 s in 2 s on 1.5 CPUs: 100 % (the quota is used up).
    std::fs::write(copy.0.join("cpu.stat"), "usage_usec 4750000\n").expect("write");
    clock.advance(Duration::from_secs(2));
    assert_eq!(
        source.sample_now().expect("sample").cpu,
        CpuPercent::new(100)
    );
    // No time passed: no reading rather than a division by zero.
    assert_eq!(source.sample_now().expect("sample").cpu, None);
    // The file goes away: an error, not a panic.
    std::fs::remove_file(copy.0.join("cpu.stat")).expect("rm");
    clock.advance(Duration::from_secs(1));
    assert!(source.sample_now().is_err());
}

#[test]
fn v1_usage_over_time() {
    let copy = Copy::of("v1");
    let clock = ManualClock::new(Instant::ZERO);
    let mut source =
        CgroupSource::new(Cgroup::detect(&copy.0).expect("v1"), 0.5, &clock).expect("source");
    std::fs::write(copy.0.join("cpu,cpuacct/cpuacct.usage"), "2250000000\n").expect("write");
    clock.advance(Duration::from_secs(1));
    assert_eq!(
        source.sample_now().expect("sample").cpu,
        CpuPercent::new(50)
    );
}

#[test]
fn auto_host_and_cgroup_modes_choose_as_documented() {
    let host_cpus = match SystemSource::new().expect("host").measures() {
        LocalCpu::Host { cpus } => cpus,
        other => panic!("{other:?}"),
    };
    let measures = |kind, name: &str| {
        SystemSource::with_kind(kind, tree(name))
            .expect("source")
            .measures()
    };
    // A quota below the host's CPUs: auto and cgroup read the cgroup.
    if host_cpus >= 2 {
        for kind in [CpuSourceKind::Auto, CpuSourceKind::Cgroup] {
            assert_eq!(
                measures(kind, "v2-quota"),
                LocalCpu::Cgroup {
                    version: CgroupVersion::V2,
                    cpus: 1.5
                }
            );
            assert_eq!(
                measures(kind, "v1"),
                LocalCpu::Cgroup {
                    version: CgroupVersion::V1,
                    cpus: 0.5
                }
            );
        }
    }
    // host always reads the host.
    assert_eq!(
        measures(CpuSourceKind::Host, "v2-quota"),
        LocalCpu::Host { cpus: host_cpus }
    );
    // No limit below the host (or a host root): auto reads the host.
    for name in ["v2-no-limit", "host-root", "odd", "does-not-exist"] {
        assert_eq!(
            measures(CpuSourceKind::Auto, name),
            LocalCpu::Host { cpus: host_cpus },
            "{name}"
        );
    }
    // cgroup without a limit is relative to the host's CPUs; unreadable falls back.
    assert_eq!(
        measures(CpuSourceKind::Cgroup, "host-root"),
        LocalCpu::Cgroup {
            version: CgroupVersion::V2,
            cpus: host_cpus as f64
        }
    );
    assert_eq!(
        measures(CpuSourceKind::Cgroup, "odd"),
        LocalCpu::Host { cpus: host_cpus }
    );
}

#[test]
fn the_own_cgroup_is_found_from_proc_at_any_depth() {
    for (name, version, limit, usage) in [
        (
            "own-v2-nested",
            CgroupVersion::V2,
            Some(2.0),
            Duration::from_secs(3),
        ),
        (
            "own-v2-namespace",
            CgroupVersion::V2,
            Some(0.5),
            Duration::from_secs(1),
        ),
        (
            "own-v1-split",
            CgroupVersion::V1,
            Some(1.0),
            Duration::from_secs(5),
        ),
    ] {
        let cgroup = Cgroup::own_under(&tree(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(cgroup.version(), version, "{name}");
        assert_eq!(cgroup.limit(), limit, "{name}");
        assert_eq!(cgroup.usage().expect("usage"), usage, "{name}");
    }
    let outside = Cgroup::own_under(&tree("own-outside")).expect_err("outside");
    assert!(
        matches!(outside, load_system::CgroupError::NotLocated { .. })
            && outside.to_string().contains("/other/app")
            && outside.to_string().contains("/kubepods"),
        "{outside}"
    );
    // No /proc at all: the file is named.
    let missing = Cgroup::own_under(&tree("does-not-exist")).expect_err("missing");
    assert!(
        missing.to_string().contains("proc/self/cgroup"),
        "{missing}"
    );
}

/// README, *Containers*: where `/proc` does not say (no cgroup mount in the mount table),
/// the cgroup at `/sys/fs/cgroup`, a container's own view, is read.
#[test]
fn where_proc_does_not_say_the_root_cgroup_is_read() {
    let fallback = tree("own-fallback");
    assert!(
        Cgroup::own_under(&fallback).is_err(),
        "/proc names no mounted cgroup"
    );
    let cgroup = Cgroup::own_or_root_under(&fallback).expect("the root's");
    assert_eq!(cgroup.version(), CgroupVersion::V2);
    assert_eq!(cgroup.limit(), Some(1.5));
    // Neither: the root's error, naming its file.
    let neither = Cgroup::own_or_root_under(&tree("own-outside")).expect_err("neither");
    assert!(neither.to_string().contains("sys/fs/cgroup"), "{neither}");
}

/// The nested limit is read over time as the flat ones are: 1 s of CPU in 1 s on the pod's
/// 2 CPUs is 50 %.
#[test]
fn the_own_cgroup_samples_relative_to_an_ancestors_limit() {
    let copy = Copy::of("own-v2-nested");
    let clock = ManualClock::new(Instant::from_secs(7));
    let cgroup = Cgroup::own_under(&copy.0).expect("nested");
    let cpus = cgroup.limit().expect("a limit");
    let mut source = CgroupSource::new(cgroup, cpus, &clock).expect("source");
    std::fs::write(
        copy.0.join("sys/fs/cgroup/kubepods/pod1/app/cpu.stat"),
        "usage_usec 4000000\n",
    )
    .expect("write");
    clock.advance(Duration::from_secs(1));
    assert_eq!(
        source.sample_now().expect("sample").cpu,
        CpuPercent::new(50)
    );
}

/// On this machine: the process's own cgroup is found from the real `/proc` (or, where the
/// kernel has none to show, the reason is an error, not a panic), and request control reads
/// it where it limits the service below the host, the host otherwise.
#[test]
fn this_process_finds_its_own_cgroup() {
    match Cgroup::own() {
        Ok(cgroup) => {
            cgroup.usage().expect("its usage is readable");
        }
        Err(e) => eprintln!("no own cgroup here: {e}"),
    }
    let host_cpus = match SystemSource::new().expect("host").measures() {
        LocalCpu::Host { cpus } => cpus,
        other => panic!("{other:?}"),
    };
    let measures = SystemSource::own(CpuSourceKind::Auto, load_core::source::Role::Cluster)
        .expect("source")
        .measures();
    let limited = Cgroup::own()
        .or_else(|_| Cgroup::detect(std::path::Path::new(load_system::DEFAULT_CGROUP_ROOT)))
        .ok()
        .and_then(|c| c.limit())
        .is_some_and(|limit| limit < host_cpus as f64);
    assert_eq!(
        matches!(measures, LocalCpu::Cgroup { .. }),
        limited,
        "{measures:?}"
    );
}

/// A mount point elsewhere with bytes that are not UTF-8 (the kernel escapes only space,
/// tab, newline and backslash) does not hide the cgroup's own line.
#[test]
fn a_mount_table_with_bytes_that_are_not_utf8_still_locates_the_cgroup() {
    use std::io::Write as _;
    let copy = Copy::of("own-v2-nested");
    let mut mountinfo = std::fs::OpenOptions::new()
        .append(true)
        .open(copy.0.join("proc/self/mountinfo"))
        .expect("mountinfo");
    mountinfo
        .write_all(b"90 22 8:1 / /media/Donn\xe9es rw,relatime - vfat /dev/sdb1 rw\n")
        .expect("append");
    let cgroup = Cgroup::own_under(&copy.0).expect("located");
    assert_eq!(cgroup.limit(), Some(2.0));
}

/// A v2 cgroup whose parent does not enable the cpuset controller for its children has no
/// `cpuset.cpus.effective` of its own: the nearest ancestor's set applies.
#[test]
fn the_nearest_cpuset_up_the_hierarchy_applies() {
    let copy = Copy::of("own-v2-nested");
    let pod = copy.0.join("sys/fs/cgroup/kubepods/pod1");
    std::fs::remove_file(pod.join("app/cpuset.cpus.effective")).expect("rm");
    std::fs::write(pod.join("cpuset.cpus.effective"), "3\n").expect("write");
    let cgroup = Cgroup::own_under(&copy.0).expect("located");
    assert_eq!(
        cgroup.limit(),
        Some(1.0),
        "the pod's one CPU, under its quota of 2"
    );
}

/// Each sample says that the CPU is this service's own, over its whole CPUs: a quota's
/// CPUs rounded up, the host's where it measures the host. The limit mode reads the
/// service's requests in flight over them.
#[test]
fn samples_say_the_cpu_is_the_services_own_over_its_whole_cpus() {
    use load_core::CpuSource;
    let own = |kind, name: &str| {
        let mut source = SystemSource::with_kind(kind, tree(name)).expect("source");
        let sample = futures::executor::block_on(source.sample()).expect("sample");
        (source.measures().whole_cpus(), sample.own_cores)
    };
    assert_eq!(
        own(CpuSourceKind::Cgroup, "v2-quota"),
        (2, Some(2)),
        "1.5 CPUs"
    );
    assert_eq!(own(CpuSourceKind::Cgroup, "v1"), (1, Some(1)), "0.5 CPUs");
    let (host, cores) = own(CpuSourceKind::Host, "v2-quota");
    assert_eq!(cores, Some(host));
    assert!(host >= 1);
    assert_eq!(LocalCpu::Host { cpus: 0 }.whole_cpus(), 1);
    assert_eq!(
        LocalCpu::Cgroup {
            version: CgroupVersion::V2,
            cpus: 4.0
        }
        .whole_cpus(),
        4
    );
}
