#!/usr/bin/env bats
# The core library as another project uses it: installed by make install
# (shared and static, docdex.h, docdex.pc), found by pkg-config, linked
# by a program of its own (tests/libuse.c); and what the shared library
# exports.

load helpers

ROOT=$BATS_TEST_DIRNAME/..

# make in the source tree, with the build that make check is testing
# (its build directory and flags), outside the make that runs the tests.
sub_make() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ${DX_MAKE:-make} -s -C "$ROOT" \
	    ${DX_BUILD_DIR:+B=$DX_BUILD_DIR} ${DX_CC:+CC="$DX_CC"} \
	    CFLAGS="${DX_CFLAGS--O2 -g}" LDFLAGS="${DX_LDFLAGS-}" "$@"
}

@test "make install: a program built with pkg-config against the installed library indexes and gets a record" {
	command -v pkg-config > /dev/null || skip "pkg-config is not installed"
	local prefix=$BATS_TEST_TMPDIR/usr
	run sub_make install PREFIX="$prefix"
	status_is 0
	local v
	v=$(sed -n 's/^#define DX_VERSION "\(.*\)"/\1/p' "$ROOT/lib/docdex.h")
	[ -f "$prefix/lib/libdocdex.so.$v" ]
	equals "$(readlink "$prefix/lib/libdocdex.so.${v%%.*}")" "libdocdex.so.$v"
	equals "$(readlink "$prefix/lib/libdocdex.so")" "libdocdex.so.${v%%.*}"
	[ -f "$prefix/lib/libdocdex.a" ]
	cmp "$prefix/include/docdex.h" "$ROOT/lib/docdex.h"
	export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
	equals "$(pkg-config --variable=prefix docdex)" "$prefix"
	equals "$(pkg-config --modversion docdex)" "$v"
	# shellcheck disable=SC2046,SC2086
	${DX_CC:-cc} ${DX_CFLAGS--O2 -g} -o libuse "$ROOT/tests/libuse.c" $(pkg-config --cflags --libs docdex) \
	    ${DX_LDFLAGS-} -Wl,-rpath,"$prefix/lib"
	# The program runs with the installed shared library.
	ldd ./libuse | grep -q "$prefix/lib/libdocdex.so.${v%%.*}"
	printf 'a1\tfirst text\nb2\tsecond text\nc3\tthird text\n' > c.tsv
	run --separate-stderr ./libuse c.tsv b2
	status_is 0
	equals "$output" "$v 3 records, b2: b2	second text"
	run --separate-stderr ./libuse c.tsv zz
	status_is 1
	equals "$output" "zz: not found"
	run --separate-stderr ./libuse missing.tsv b2
	status_is 1
	[[ $stderr == "libuse: cannot open: '"*"missing.tsv': no such file or directory" ]]
	run sub_make uninstall PREFIX="$prefix"
	status_is 0
	equals "$(find "$prefix" -type f -o -type l)" ""
}

@test "make install honours DESTDIR: the files under it, docdex.pc naming PREFIX; make uninstall removes them" {
	local stage=$BATS_TEST_TMPDIR/stage
	run sub_make install DESTDIR="$stage" PREFIX=/opt/dx
	status_is 0
	[ -x "$stage/opt/dx/bin/docdex" ]
	[ -f "$stage/opt/dx/include/docdex.h" ]
	[ -L "$stage/opt/dx/lib/libdocdex.so" ]
	grep -qx 'prefix=/opt/dx' "$stage/opt/dx/lib/pkgconfig/docdex.pc"
	grep -qx 'Libs: -L${libdir} -ldocdex' "$stage/opt/dx/lib/pkgconfig/docdex.pc"
	grep -qx 'libdir=${prefix}/lib' "$stage/opt/dx/lib/pkgconfig/docdex.pc"
	# libdeflate and ISA-L where the build has them (docdex --version names them).
	grep -Eqx 'Libs.private: -lm -lpthread( -ldeflate)?( -lisal)?' "$stage/opt/dx/lib/pkgconfig/docdex.pc"
	grep -qx 'Requires.private: zlib' "$stage/opt/dx/lib/pkgconfig/docdex.pc"
	run sub_make uninstall DESTDIR="$stage" PREFIX=/opt/dx
	status_is 0
	equals "$(find "$stage" -type f -o -type l)" ""
}

@test "the shared library exports the functions of docdex.h, each of them, and nothing else" {
	[ -n "${DX_LIBSO:-}" ] || skip "DX_LIBSO is set by make check"
	command -v nm > /dev/null || skip "nm is not installed"
	nm -D --defined-only "$DX_LIBSO" | awk '$2 ~ /^[TDBRVWi]$/ { print $3 }' | sed 's/@.*//' | sort > exported
	sed -n 's/^DX_EXPORT .*[^a-z0-9_]\(dx_[a-z0-9_]*\)(.*/\1/p' "$BATS_TEST_DIRNAME/../lib/docdex.h" | sort > declared
	[ "$(wc -l < declared)" -ge 50 ]
	equals "$(grep -v '^dx_[a-z0-9]' exported)" ""
	equals "$(grep '^dx__' exported)" ""
	equals "$(comm -3 exported declared)" ""
}
