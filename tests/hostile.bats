#!/usr/bin/env bats
# Hostile input: files built to hurt a reader.  Each gets a correct result
# or one clear line and a non-zero status, in bounded time and memory.

load helpers

@test "a gzip bomb of zeros stops at the longest record, in bounded memory" {
	# Inflating 1 GiB takes minutes under the sanitizers: the plain build
	# runs this.
	[ -z "${ASAN_OPTIONS-}${TSAN_OPTIONS-}" ] || skip "too slow under a sanitizer"
	# 2 GiB of zeros in 2 MiB: 2048 gzip members of 1 MiB each.
	python3 -c 'import gzip, sys
m = gzip.compress(b"\0" * (1 << 20), compresslevel=9, mtime=0)
sys.stdout.buffer.write(m * 2048)' > bomb.gz
	local f
	for f in tsv jsonl; do
		# Memory well below what the bomb inflates to.
		run --separate-stderr bash -c 'ulimit -v 3000000 && exec "$0" index --format "$1" bomb.gz' \
			"$DOCDEX" "$f"
		status_is 1
		equals "$stderr" "docdex index: a record longer than 1.0 GiB, the most one may hold, at byte 0: 'bomb.gz'"
		[ ! -e bomb.gz.ddx ]
	done
	# TREC: no <DOC> anywhere, so no record at all.
	run --separate-stderr dx index --format trec bomb.gz
	status_is 0
	equals "$(dx index --stats bomb.gz | awk -F'\t' '$1 == "records" { print $2 }')" 0
}

@test "NUL bytes inside records come back byte for byte" {
	printf 'a\tone\0two\nb\t\0\0\nc\tthree\n' > nul.tsv
	run --separate-stderr dx index nul.tsv
	status_is 0
	printf 'a\nb\nc\n' | dx get nul.tsv > out
	cmp out nul.tsv
}

@test "an id of 64 KiB is indexed and found" {
	local id
	id=$(head -c 65536 /dev/zero | tr '\0' 'x')
	{ printf '%s\tthe long one\n' "$id"; printf 'short\tthe short one\n'; } > long.tsv
	run --separate-stderr dx index long.tsv
	status_is 0
	echo "$id" | dx get long.tsv > out
	equals "$(cut -f2 out)" "the long one"
	equals "$(dx get long.tsv short | cut -f2)" "the short one"
}

@test "a million tiny records" {
	awk 'BEGIN { for (i = 0; i < 1000000; i++) printf "%d\tx\n", i }' > tiny.tsv
	run --separate-stderr dx index tiny.tsv
	status_is 0
	equals "$(dx index --stats tiny.tsv | awk -F'\t' '$1 == "records" { print $2 }')" 1000000
	equals "$(dx get tiny.tsv 0 999999 500000)" "$(printf '0\tx\n999999\tx\n500000\tx')"
}

@test "a corpus replaced by another of the same size and mtime is refused" {
	"$DX_SYNTH" --count 2000 -o c.tsv
	dx index -q c.tsv
	# Same length, same modification time, other bytes: the sampled
	# fingerprint tells them apart.
	"$DX_SYNTH" --count 2000 --seed 7 -o other.tsv
	head -c "$(stat -c %s c.tsv)" other.tsv > same.tsv
	[ "$(stat -c %s same.tsv)" = "$(stat -c %s c.tsv)" ]
	touch -r c.tsv same.tsv
	mv same.tsv c.tsv
	run --separate-stderr dx get c.tsv 0
	status_is 1
	equals "$output" ""
	[[ $stderr == "docdex get: "*"changed since it was indexed"* ]]
}

@test "paths with spaces, quotes and bytes that are not UTF-8, and symlinks" {
	local dir=$'a dir with \'quotes\' and "more" \xff'
	mkdir "$dir"
	printf '1\tone\n2\ttwo\n' > "$dir/c $'\xfe'.tsv"
	run --separate-stderr dx index "$dir/c $'\xfe'.tsv"
	status_is 0
	equals "$(dx get "$dir/c $'\xfe'.tsv" 2)" "$(printf '2\ttwo')"
	# A link to the corpus: the index goes beside the link, and serves.
	ln -s "$dir/c $'\xfe'.tsv" link.tsv
	run --separate-stderr dx index link.tsv
	status_is 0
	equals "$(dx get link.tsv 1)" "$(printf '1\tone')"
	# A link to the index serves as the index.
	ln -s "$dir/c $'\xfe'.tsv.ddx" link.ddx
	equals "$(dx get link.ddx 2)" "$(printf '2\ttwo')"
}
