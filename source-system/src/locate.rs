//! Where this process's cgroup is: its lines of `/proc/self/cgroup` joined with the cgroup
//! mounts of `/proc/self/mountinfo`, for the unified hierarchy (v2) and for one hierarchy
//! per controller (v1), at any depth, in a container's cgroup namespace or on the host.

use std::path::{Path, PathBuf};

/// The directories of this process's cgroup that CPU accounting and limits are read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Located {
    /// The unified hierarchy: the cgroup's directory, and the mount point it is under (the
    /// highest ancestor whose limit can be read).
    V2 { dir: PathBuf, mount: PathBuf },
    /// One hierarchy per controller: each controller's directory and its mount point
    /// (`None`: the controller is not mounted).
    V1 {
        cpuacct: (PathBuf, PathBuf),
        cpu: Option<(PathBuf, PathBuf)>,
        cpuset: Option<(PathBuf, PathBuf)>,
    },
}

/// Why the process's cgroup could not be located.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum NotLocated {
    /// `/proc/self/cgroup` names no hierarchy with CPU accounting that is mounted.
    NoHierarchy,
    /// The cgroup's path lies outside what every mount of its hierarchy shows (a mount of
    /// another cgroup's subtree, or a path that climbs out of the namespace's root with
    /// `..`).
    Outside { path: String, root: String },
}

impl std::fmt::Display for NotLocated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotLocated::NoHierarchy => f.write_str(
                "no mounted cgroup hierarchy with CPU accounting (cpuacct, or the unified one) \
                 holds this process",
            ),
            NotLocated::Outside { path, root } => write!(
                f,
                "this process's cgroup {path:?} is outside the mounted subtree {root:?}"
            ),
        }
    }
}

/// One cgroup mount: the subtree it shows (`root`), where (`point`), and for v1 the
/// controllers bound to it.
struct Mount<'a> {
    root: String,
    point: String,
    v2: bool,
    controllers: Vec<&'a str>,
}

/// The cgroup mounts of a `mountinfo` text; lines that are not cgroup mounts, or are
/// malformed, are skipped.
fn mounts(mountinfo: &str) -> Vec<Mount<'_>> {
    mountinfo
        .lines()
        .filter_map(|line| {
            // `id parent major:minor root point options [optional...] - type source super`
            let (before, after) = line.split_once(" - ")?;
            let fields: Vec<&str> = before.split(' ').collect();
            let (root, point) = (fields.get(3)?, fields.get(4)?);
            let mut after = after.split(' ');
            let kind = after.next()?;
            let super_options = after.nth(1).unwrap_or("");
            let v2 = match kind {
                "cgroup2" => true,
                "cgroup" => false,
                _ => return None,
            };
            Some(Mount {
                root: unescape(root),
                point: unescape(point),
                v2,
                controllers: super_options.split(',').collect(),
            })
        })
        .collect()
}

/// mountinfo's octal escapes (`\040` for a space, `\011`, `\012`, `\134`).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) => {
                let value = d.iter().fold(0u32, |v, b| v * 8 + u32::from(b - b'0'));
                out.push(u8::try_from(value).unwrap_or(b'?'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The directory of the cgroup at `path` of a hierarchy mounted as `mount`, under `prefix`
/// (`/` outside tests), and the mount point.
fn place(prefix: &Path, mount: &Mount<'_>, path: &str) -> Result<(PathBuf, PathBuf), NotLocated> {
    let root = mount.root.trim_end_matches('/');
    let relative = if root.is_empty() {
        Some(path)
    } else {
        path.strip_prefix(root)
            .filter(|rest| rest.is_empty() || rest.starts_with('/'))
    };
    // The kernel writes `..` where the cgroup is above the reader's cgroup namespace root:
    // it is not under any mount the process sees.
    let outside = || NotLocated::Outside {
        path: path.to_owned(),
        root: mount.root.clone(),
    };
    let relative = relative.ok_or_else(outside)?;
    if relative.split('/').any(|part| part == "..") {
        return Err(outside());
    }
    let point = prefix.join(mount.point.trim_start_matches('/'));
    let dir = relative
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .fold(point.clone(), |dir, part| dir.join(part));
    Ok((dir, point))
}

/// The first of `mounts` (the last mounted first: a later mount on the same point hides
/// the earlier) that holds `path`; else why the first tried does not (`None`: no mount).
fn place_any<'m>(
    prefix: &Path,
    mounts: impl Iterator<Item = &'m Mount<'m>>,
    path: &str,
) -> Option<Result<(PathBuf, PathBuf), NotLocated>> {
    let mut first = None;
    for mount in mounts {
        match place(prefix, mount, path) {
            Ok(found) => return Some(Ok(found)),
            Err(why) => {
                first.get_or_insert(why);
            }
        }
    }
    first.map(Err)
}

/// Where the cgroup of the process whose `/proc/<pid>/cgroup` is `cgroup` lies, given the
/// mounts of `mountinfo`, with the mount points under `prefix`. Where both are mounted
/// (a hybrid host), the v1 hierarchies win when the process's `cpuacct` one is located:
/// the CPU controllers are bound there and the unified hierarchy has no CPU accounting or
/// limits of its own. The `cpu` (quota) and `cpuset` hierarchies are optional: one that
/// is not mounted, or does not hold the process, is left out.
pub(crate) fn locate(prefix: &Path, cgroup: &str, mountinfo: &str) -> Result<Located, NotLocated> {
    let mounts = mounts(mountinfo);
    // `id:controllers:path`; the path may itself hold a `:`.
    let lines: Vec<(&str, &str)> = cgroup
        .lines()
        .filter_map(|line| {
            let (_, rest) = line.split_once(':')?;
            rest.split_once(':')
        })
        .collect();
    let v1 = |controller: &str| -> Option<Result<(PathBuf, PathBuf), NotLocated>> {
        let (_, path) = lines
            .iter()
            .find(|(controllers, _)| controllers.split(',').any(|c| c == controller))?;
        let candidates = mounts
            .iter()
            .rev()
            .filter(|m| !m.v2 && m.controllers.contains(&controller));
        place_any(prefix, candidates, path)
    };
    let cpuacct = v1("cpuacct");
    if let Some(Ok(cpuacct)) = cpuacct {
        return Ok(Located::V1 {
            cpuacct,
            cpu: v1("cpu").and_then(Result::ok),
            cpuset: v1("cpuset").and_then(Result::ok),
        });
    }
    let unified = lines
        .iter()
        .find(|(controllers, _)| controllers.is_empty())
        .and_then(|(_, path)| place_any(prefix, mounts.iter().rev().filter(|m| m.v2), path));
    match (unified, cpuacct) {
        (Some(Ok((dir, mount))), _) => Ok(Located::V2 { dir, mount }),
        (Some(Err(why)), _) | (None, Some(Err(why))) => Err(why),
        (None, _) => Err(NotLocated::NoHierarchy),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V2_MOUNT: &str = "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";

    #[test]
    fn a_nested_v2_cgroup_is_under_the_unified_mount() {
        let found = locate(Path::new("/"), "0::/system.slice/app.service\n", V2_MOUNT);
        assert_eq!(
            found,
            Ok(Located::V2 {
                dir: PathBuf::from("/sys/fs/cgroup/system.slice/app.service"),
                mount: PathBuf::from("/sys/fs/cgroup"),
            })
        );
    }

    #[test]
    fn a_container_sees_its_own_cgroup_at_the_mount() {
        // A cgroup namespace: the path is `/`, the mount shows the container's subtree.
        let found = locate(Path::new("/x"), "0::/\n", V2_MOUNT);
        assert_eq!(
            found,
            Ok(Located::V2 {
                dir: PathBuf::from("/x/sys/fs/cgroup"),
                mount: PathBuf::from("/x/sys/fs/cgroup"),
            })
        );
    }

    #[test]
    fn v1_controllers_in_separate_or_joint_hierarchies() {
        let mountinfo = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
        let cgroup = "3:cpuset:/docker/abc\n2:cpuacct:/docker/abc\n1:cpu:/docker/abc\n0::/\n";
        let at = |p: &str| PathBuf::from(p);
        assert_eq!(
            locate(Path::new("/"), cgroup, mountinfo),
            Ok(Located::V1 {
                cpuacct: (
                    at("/sys/fs/cgroup/cpuacct/docker/abc"),
                    at("/sys/fs/cgroup/cpuacct")
                ),
                cpu: Some((
                    at("/sys/fs/cgroup/cpu/docker/abc"),
                    at("/sys/fs/cgroup/cpu")
                )),
                cpuset: Some((
                    at("/sys/fs/cgroup/cpuset/docker/abc"),
                    at("/sys/fs/cgroup/cpuset")
                )),
            }),
            "hybrid: the cpu controller is v1's"
        );
        let joint = "\
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
";
        let found = locate(Path::new("/"), "4:cpu,cpuacct:/a\n", joint).expect("joint");
        let Located::V1 {
            cpuacct,
            cpu,
            cpuset,
        } = found
        else {
            panic!("{found:?}")
        };
        assert_eq!(cpuacct.0, at("/sys/fs/cgroup/cpu,cpuacct/a"));
        assert_eq!(cpu.map(|c| c.0), Some(at("/sys/fs/cgroup/cpu,cpuacct/a")));
        assert_eq!(cpuset, None);
    }

    #[test]
    fn a_mount_of_a_subtree_strips_its_root_and_escapes_are_read() {
        let mountinfo = "50 40 0:26 /kube\\040pods /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            locate(Path::new("/"), "0::/kube pods/p1\n", mountinfo),
            Ok(Located::V2 {
                dir: PathBuf::from("/sys/fs/cgroup/p1"),
                mount: PathBuf::from("/sys/fs/cgroup"),
            })
        );
        assert_eq!(
            locate(Path::new("/"), "0::/kube podsX/p1\n", mountinfo),
            Err(NotLocated::Outside {
                path: "/kube podsX/p1".into(),
                root: "/kube pods".into()
            }),
            "a sibling whose name starts alike is outside"
        );
    }

    #[test]
    fn nothing_mounted_or_odd_text_is_an_error_not_a_panic() {
        for (cgroup, mountinfo) in [
            ("0::/\n", ""),
            ("", V2_MOUNT),
            ("garbage", "garbage - cgroup2"),
            ("0::/..\n1:cpu", "1 2 3 4 - cgroup2 x y\n\\"),
            ("2:cpuacct:/a\n", "1 2 3 / /c - cgroup c rw,cpuacct\\0"),
        ] {
            let _ = locate(Path::new("/"), cgroup, mountinfo);
        }
        assert_eq!(
            locate(Path::new("/"), "0::/\n", ""),
            Err(NotLocated::NoHierarchy)
        );
        // `..`: above the namespace's root, under no mount this process sees.
        assert!(matches!(
            locate(Path::new("/"), "0::/../../user.slice/x\n", V2_MOUNT),
            Err(NotLocated::Outside { .. })
        ));
    }

    #[test]
    fn every_mount_of_a_hierarchy_is_tried_the_last_mounted_first() {
        // The host's hierarchy bind-mounted as a subtree first, the container's own after.
        let mountinfo = "\
40 30 0:26 /kubepods/other /host/cgroup rw - cgroup2 cgroup2 rw
50 30 0:26 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw
";
        assert_eq!(
            locate(Path::new("/"), "0::/kubepods/pod1/app\n", mountinfo),
            Ok(Located::V2 {
                dir: PathBuf::from("/sys/fs/cgroup/app"),
                mount: PathBuf::from("/sys/fs/cgroup"),
            })
        );
    }

    #[test]
    fn optional_v1_hierarchies_that_do_not_hold_the_process_are_left_out() {
        let mountinfo = "\
33 31 0:30 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct
34 31 0:31 /docker/abc /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset
41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
";
        // No `cpu` mounted, the cpuset outside its mount: still v1, from cpuacct.
        let found = locate(
            Path::new("/"),
            "3:cpuset:/\n2:cpuacct:/a\n0::/\n",
            mountinfo,
        );
        assert_eq!(
            found,
            Ok(Located::V1 {
                cpuacct: (
                    PathBuf::from("/sys/fs/cgroup/cpuacct/a"),
                    PathBuf::from("/sys/fs/cgroup/cpuacct")
                ),
                cpu: None,
                cpuset: None,
            }),
            "hybrid with v1 cpuacct: v1, not the unified hierarchy"
        );
    }
}
