# One entry point for every check; CI runs `make test` (see .ci/run).
CARGO ?= cargo

.PHONY: test fmt-check clippy unit loom conformance toolchain bench-engine bench bench-quick

test: toolchain fmt-check clippy unit loom conformance bench-quick

# Installs what a fresh machine lacks: rustfmt and clippy, and libclang, which
# the real `rocksdb` crate (used only by benches, migrate and compat's
# differential test, never by `alexdb` itself) needs to build.
toolchain:
	@command -v cargo >/dev/null || { echo "cargo is required (https://rustup.rs)"; exit 1; }
	@$(CARGO) fmt --version >/dev/null 2>&1 || rustup component add rustfmt
	@$(CARGO) clippy --version >/dev/null 2>&1 || rustup component add clippy
	@ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1 || ls /usr/lib/*/libclang*.so >/dev/null 2>&1 || \
		{ echo "installing libclang-dev (needed to build the real rocksdb crate)"; \
		  apt-get update -qq && apt-get install -y -qq libclang-dev; }

fmt-check:
	$(CARGO) fmt --all -- --check

# The `ci` profile (Cargo.toml): our code as in release, the real RocksDB
# (a reference for tests) unoptimized so that its first build is short.
clippy:
	$(CARGO) clippy --profile ci --workspace --all-targets -- -D warnings

unit:
	$(CARGO) test --workspace --profile ci

# loom models of the publish / read / reclaim protocol, in their own target dir
# so the cfg change does not invalidate the main build cache.
loom:
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom $(CARGO) test --release -p alexdb-engine --test loom_protocol

# rust-rocksdb 0.25's own test files (from the rocksdb package in cargo's
# registry), built against alexdb one file at a time; prints a per-file table.
# Skips compat/conformance/excluded.txt; files in pending.txt are reported but
# do not fail the build. See compat/conformance/run.sh.
conformance:
	CARGO="$(CARGO)" compat/conformance/run.sh

bench-engine:
	$(CARGO) bench -p alexdb-engine

# The side-by-side runner on 20K keys, every engine and workload once, so the
# runner cannot rot; --check fails unless the report names every engine and
# workload with a figure (it checks completeness, not speed).
bench-quick:
	$(CARGO) run --profile ci -p alexdb-bench -- --quick --check --out target/bench-quick

# The README's main command: AlexDB against RocksDB (default and tuned),
# SQLite and LMDB at 1M uniform keys (the issue's goals), 3 repetitions, about
# 5-10 minutes after the build. Prints the table; writes bench-results/
# report.md, results.json and latency.svg. The full sweep (100K and 1M keys,
# three key sets) is `cargo run --release -p alexdb-bench`.
bench: toolchain
	$(CARGO) run --release -p alexdb-bench -- --keys 1000000 --keysets uniform --out bench-results
