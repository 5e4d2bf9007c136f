#!/usr/bin/env python3
"""What every published crate promises about its features and its Rust version.

For each package of the workspace that is published (no `publish = false`), from
`cargo metadata`:

1. it builds (`cargo check`) with no features, with each of its features alone, and with
   its defaults;
2. without its source features (`opensearch`, `system`) it pulls in neither surf, OpenSSL,
   sysinfo nor async-io, and load-core never does, whatever its features
   (`cargo tree -e normal`); the source crates themselves are exempt;
3. it builds with the Rust version it declares (`rust-version`): with the toolchain at hand
   when that is the version, else one installed with rustup's minimal profile.

Prints each command; exits 1 at the first failure, naming the crate and features.
"""

import json
import os
import subprocess
import sys

# Dependencies that only a source feature may bring; load-core brings none of them, nor a
# reactor (async-io), under any feature.
SOURCE_DEPS = ("surf", "openssl", "native-tls", "sysinfo")
CORE_FORBIDDEN = SOURCE_DEPS + ("async-io",)
# The features that bring them.
SOURCE_FEATURES = {"opensearch", "system", "default"}
# The crates whose job is a source: they bring its dependencies by design.
SOURCE_CRATES = {"load-opensearch", "load-system"}


def run(args, capture=False):
    print("+ " + " ".join(args), flush=True)
    result = subprocess.run(args, text=True, capture_output=capture)
    if result.returncode != 0:
        if capture:
            sys.stderr.write(result.stdout + result.stderr)
        sys.exit(f"failed: {' '.join(args)}")
    return result.stdout if capture else None


def published_packages():
    metadata = json.loads(run(["cargo", "metadata", "--no-deps", "--format-version", "1"], capture=True))
    members = set(metadata["workspace_members"])
    return [
        p for p in metadata["packages"] if p["id"] in members and p.get("publish") != []
    ]


def pulled(package, features, forbidden=SOURCE_DEPS):
    """The forbidden dependencies `cargo tree` shows for these features."""
    args = ["cargo", "tree", "-p", package, "-e", "normal", "--prefix", "none", "--no-default-features"]
    if features:
        args += ["--features", ",".join(features)]
    tree = run(args, capture=True)
    names = {line.split(" ")[0] for line in tree.splitlines() if line.strip()}
    return sorted(n for n in names if any(n == d or n.startswith(d + "-") for d in forbidden))


def full_version(version):
    """`1.95` as the release it names, `1.95.0`."""
    parts = version.split(".")
    return ".".join(parts + ["0"] * (3 - len(parts)))


def installed_version():
    """The version of the `rustc` cargo runs here (`1.95.0`), or None for a pre-release."""
    text = run(["rustc", "--version"], capture=True).split()
    return text[1] if len(text) > 1 and "-" not in text[1] else None


def msrv_target_dir():
    """A target directory of its own for another toolchain, beside the usual one (which
    outlives the checkout CI copies anew at every run)."""
    metadata = json.loads(run(["cargo", "metadata", "--no-deps", "--format-version", "1"], capture=True))
    return os.path.join(metadata["target_directory"], "msrv")


def main():
    packages = published_packages()
    by_version = {}
    for package in packages:
        name = package["name"]
        features = sorted(f for f in package["features"] if f != "default")
        combos = [[]] + [[f] for f in features]
        for combo in combos:
            args = ["cargo", "check", "-q", "-p", name, "--no-default-features"]
            if combo:
                args += ["--features", ",".join(combo)]
            run(args)
        run(["cargo", "check", "-q", "-p", name])
        # No source dependency without a source feature (load-core: under any feature).
        for combo in combos:
            if name in SOURCE_CRATES or any(f in SOURCE_FEATURES for f in combo):
                continue
            found = pulled(name, combo, CORE_FORBIDDEN if name == "load-core" else SOURCE_DEPS)
            if found:
                sys.exit(f"{name} with features {combo or 'none'} pulls in {', '.join(found)}")
        if name == "load-core" and pulled(name, features, CORE_FORBIDDEN):
            found = pulled(name, features, CORE_FORBIDDEN)
            sys.exit(f"load-core with every feature pulls in {', '.join(found)}")
        version = package.get("rust_version")
        if not version:
            sys.exit(f"{name} declares no rust-version")
        by_version.setdefault(version, []).append(name)

    installed = installed_version()
    for version, names in sorted(by_version.items()):
        if installed == full_version(version):
            # The toolchain at hand is the declared one: no second copy of it, and its
            # build cache is the other checks'.
            args = ["cargo", "check", "-q", "--all-features"]
        else:
            run(["rustup", "toolchain", "install", version, "--profile", "minimal", "--no-self-update"])
            args = ["cargo", f"+{version}", "check", "-q", "--all-features", "--target-dir", msrv_target_dir()]
        for name in names:
            args += ["-p", name]
        run(args)
        print(f"rust {version}: {', '.join(names)} build", flush=True)
    print(f"{len(packages)} published crates: features, source dependencies and Rust versions hold")


if __name__ == "__main__":
    main()
