#!/usr/bin/env python3
"""Every published crate packages as crates.io would take it.

1. `cargo package` of every published crate at once: cargo orders them by their
   dependencies, packages each, and verifies each by building it from its `.crate` file alone
   (the crates it depends on come from the ones just packaged), so a file the build needs but
   the package lacks fails here.
2. In each `.crate`: the two license files (`license = "MIT OR Apache-2.0"`), the README
   the manifest names, and every relative link or image of that README resolves to a file in
   the package (crates.io and docs.rs show the README without the repository around it).

Prints each command; exits 1 naming the crate and what is wrong.
"""

import os
import posixpath
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crates import published_packages, run  # noqa: E402

LICENSES = ("LICENSE-MIT", "LICENSE-APACHE")
# Markdown links and images `[text](target)`, reference definitions `[name]: target`, and
# HTML `src=`/`href=` attributes.
LINK = re.compile(
    r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)"
    r"|^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)"
    r"|(?:src|href)=\"([^\"]+)\"",
    re.MULTILINE,
)


def relative_links(readme):
    """The README's links that point into the package: no scheme, no fragment-only."""
    text = re.sub(r"```.*?```", "", readme, flags=re.DOTALL)  # code is not a link
    for match in LINK.finditer(text):
        target = next(group for group in match.groups() if group)
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith(("#", "//")):
            continue
        yield target.split("#", 1)[0].split("?", 1)[0]


def check_crate(package, crate_file):
    name, version = package["name"], package["version"]
    root = f"{name}-{version}/"
    with tarfile.open(crate_file) as tar:
        files = {m.name[len(root):] for m in tar.getmembers() if m.isfile()}
        problems = [f"has no {license}" for license in LICENSES if license not in files]
        readme = package.get("readme")
        if not readme:
            problems.append("names no readme")
        elif readme not in files:
            problems.append(f"does not contain its readme {readme}")
        else:
            text = tar.extractfile(root + readme).read().decode("utf-8")
            base = posixpath.dirname(readme)
            for link in relative_links(text):
                path = posixpath.normpath(posixpath.join(base, link))
                inside = path in files or any(f.startswith(path.rstrip("/") + "/") for f in files)
                if path.startswith("..") or not inside:
                    problems.append(f"its {readme} links to {link}, which is not in the package")
    for problem in problems:
        print(f"{name} {version}: {problem}", file=sys.stderr)
    return not problems


def main():
    packages = published_packages()
    target = Path(
        subprocess.run([str(Path(__file__).resolve().parent / "target-dir")],
                       check=True, capture_output=True, text=True).stdout.strip()
    )
    # A package directory left by an earlier run holds .crate files of the same version:
    # cargo verifies a crate against those of its dependencies, so a kept target verified
    # load-runtime against last run's load-core and failed. Start from none.
    shutil.rmtree(target / "package", ignore_errors=True)
    # Cargo unpacks the crates it verifies against into CARGO_HOME's registry sources, and
    # never unpacks a name and version again: a warm machine verified load-runtime against
    # a load-core 0.3.0 unpacked by an earlier run, without the API it now has. Our own
    # crates' versions are never fetched from there: drop them.
    cargo_home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
    for package in packages:
        unpacked = f"{package['name']}-{package['version']}"
        for stale in cargo_home.glob(f"registry/src/*/{unpacked}"):
            shutil.rmtree(stale, ignore_errors=True)
        for stale in cargo_home.glob(f"registry/cache/*/{unpacked}.crate"):
            stale.unlink(missing_ok=True)
    # Cargo keeps a registry dependency's build by name and version, never by content: a kept
    # target reused a load-core 0.3.0 an earlier run had compiled, without the API it now has
    # (`RejectReason`), and load-runtime failed to verify against it. Verify in a directory of
    # its own, emptied first.
    verify = target / "package-verify"
    shutil.rmtree(verify, ignore_errors=True)
    args = ["cargo", "package", "--allow-dirty", "--locked", "--target-dir", str(verify)]
    for package in packages:
        args += ["-p", package["name"]]
    run(args)
    ok = True
    for package in packages:
        crate_file = verify / "package" / f"{package['name']}-{package['version']}.crate"
        ok &= check_crate(package, crate_file)
        print(f"{package['name']} {package['version']}: packaged, verified, licenses and README links in it")
    if not ok:
        sys.exit("a published crate does not package as it should (above)")


if __name__ == "__main__":
    main()
