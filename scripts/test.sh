#!/usr/bin/env bash
# Runs every check a submission must pass: formatting, no module cycles
# (scripts/module-graph.py), lints, documentation without broken or
# private links, and the whole test suite (unit, property, the ovs-ofctl
# agreement test, fuzz-corpus regression, the end-to-end tests against
# Open vSwitch in crates/netlab). Tests that need Debian packages install
# them themselves; run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
python3 scripts/module-graph.py --self-test
python3 scripts/module-graph.py --check
cargo clippy --workspace --all-targets --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
cargo test --workspace --locked
