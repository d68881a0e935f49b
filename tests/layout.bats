#!/usr/bin/env bats
# The three parts of the tree and what each may use: lib/ (the core
# library, public header docdex.h), bench/ (the benchmark engine, public
# header dxbench.h) and cmd/ (the subcommands).

load helpers

ROOT=$BATS_TEST_DIRNAME/..

# The quoted includes of the files given, one "FILE HEADER" a line.
includes() {
	local f
	for f in "$@"; do
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
			sed "s|^|${f#"$ROOT"/} |"
	done
}

@test "cmd/ includes only the public headers of the core and the engine, and its own" {
	local bad
	bad=$(includes "$ROOT"/cmd/*.[ch] | while read -r file header; do
		case $header in
		docdex.h | dxbench.h) ;;
		*) [ -e "$ROOT/cmd/$header" ] || echo "$file includes $header" ;;
		esac
	done)
	equals "$bad" ""
}

@test "the core includes nothing of the engine or the commands; the engine nothing of the commands" {
	local bad
	bad=$(includes "$ROOT"/lib/*.[ch] | while read -r file header; do
		[ -e "$ROOT/lib/$header" ] || echo "$file includes $header"
	done)
	equals "$bad" ""
	bad=$(includes "$ROOT"/bench/*.[ch] | while read -r file header; do
		[ -e "$ROOT/bench/$header" ] || [ -e "$ROOT/lib/$header" ] || echo "$file includes $header"
	done)
	equals "$bad" ""
}

@test "the shared core library needs zlib and libc (and libdeflate where built with it), not libyaml or libdl" {
	[ -n "${DX_LIBSO:-}" ] || skip "DX_LIBSO is set by make check"
	command -v readelf > /dev/null || skip "readelf is not installed"
	run --separate-stderr readelf -d "$DX_LIBSO"
	status_is 0
	[[ $output == *"Library soname: [libdocdex.so."* ]]
	[[ $output == *"[libz.so."* ]]
	[[ $output != *libyaml* ]]
	[[ $output != *"[libdl."* ]]
}
