#!/usr/bin/env bats
# Hostile input: files built to hurt a reader.  Each gets a correct result
# or one clear line and a non-zero status, in bounded time and memory.

load helpers

@test "a gzip bomb of zeros stops at the longest record, in bounded memory" {
	# Inflating 1 GiB takes minutes under the sanitizers, and valgrind's
	# own memory does not fit in the limit below: the plain build runs this.
	[ -z "$CHECKER" ] || skip "too slow or too big under $CHECKER"
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
	# TREC: no <DOC> anywhere, so no record in 2 GiB: another format.
	run --separate-stderr dx index --format trec bomb.gz
	status_is 1
	equals "$stderr" "docdex index: no trec record in 2.0 GiB of content, is it in another format? (see --format): 'bomb.gz'"
	[ ! -e bomb.gz.ddx ]
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

# Sets FIELD of a copy of the index $1 to VALUE, checksums mended so that
# the reader's bounds checks, not its CRCs, must catch the lie; then asks
# for records 0, 1 and the last, and expects one line naming the damage.
lying_index() {
	local orig=$1 corpus=$2 last=$3 field=$4 value=$5 why=$6
	cp "$orig" "$corpus.ddx"
	"$DX_POKE" "$corpus.ddx" "$field" "$value"
	run --separate-stderr dx get "$corpus" 0 1 "$last"
	status_is 1 || { echo "$field=$value" >&2; return 1; }
	equals "$stderr" "docdex get: $why"
}

@test "an index whose counts and offsets point past its own end or the corpus's" {
	"$DX_SYNTH" --count 3000 -o c.tsv
	dx index -q c.tsv
	mv c.tsv.ddx plain.ddx
	local size damaged="index damaged (%s), rebuild it with docdex index: 'c.tsv.ddx'"
	size=$(stat -c %s c.tsv)
	# Counts beyond the records section, sections beyond the file.
	lying_index plain.ddx c.tsv 2999 nrecords 3001 "$(printf "$damaged" "bad record sections")"
	lying_index plain.ddx c.tsv 2999 nrecords 0xffffffffffff "$(printf "$damaged" "bad header fields")"
	lying_index plain.ddx c.tsv 2999 nsources 9 "$(printf "$damaged" "bad sources section")"
	lying_index plain.ddx c.tsv 2999 section.3.offset 0x7fffffffffffffc0 "$(printf "$damaged" "bad section table")"
	lying_index plain.ddx c.tsv 2999 section.3.size 0xfffffffffff00000 "$(printf "$damaged" "bad section table")"
	lying_index plain.ddx c.tsv 2999 source.0.nrecords 3001 "$(printf "$damaged" "bad sources section")"
	lying_index plain.ddx c.tsv 2999 source.0.usize $((size + 1)) "$(printf "$damaged" "bad sources section")"
	# Records beyond the corpus: at its end, past it, or too long for it.
	lying_index plain.ddx c.tsv 2999 record.2999.offset "$size" "$(printf "$damaged" "record beyond the end of its file")"
	lying_index plain.ddx c.tsv 2999 record.1.offset 0xffffffffff "$(printf "$damaged" "record beyond the end of its file")"
	lying_index plain.ddx c.tsv 2999 record.0.length 0xfffffe "$(printf "$damaged" "record beyond the end of its file")"
	# "Long" with no long-records entry behind it.
	lying_index plain.ddx c.tsv 2999 record.0.length 0xffffff "$(printf "$damaged" "long record missing")"

	# A gzip corpus: its size and access points are claims too.
	gzip -k c.tsv
	dx index -q c.tsv.gz
	mv c.tsv.gz.ddx gz.ddx
	damaged="index damaged (%s), rebuild it with docdex index: 'c.tsv.gz.ddx'"
	size=$(stat -c %s c.tsv.gz)
	# More content than deflate can expand the file to (1032 to 1).
	lying_index gz.ddx c.tsv.gz 2999 source.0.usize $((size * 1032 + 1032)) "$(printf "$damaged" "bad sources section")"
	lying_index gz.ddx c.tsv.gz 2999 source.0.npoints \
		$(($(dx index --stats gz.ddx | awk -F'\t' '$1 == "source" { print $9 }') + 1)) \
		"$(printf "$damaged" "bad sources section")"
	lying_index gz.ddx c.tsv.gz 2999 point.0.coff $((size + 1)) "$(printf "$damaged" "access points out of order")"
	# A size deflate allows but the file does not hold: found on reading.
	cp gz.ddx c.tsv.gz.ddx
	"$DX_POKE" c.tsv.gz.ddx source.0.usize $((size * 1032))
	"$DX_POKE" c.tsv.gz.ddx record.2999.offset $((size * 1000))
	run --separate-stderr dx get c.tsv.gz 2999
	status_is 1
	equals "$stderr" "docdex get: cannot read the gzip corpus through its index (record past the end of the compressed data): 'c.tsv.gz'"
	# And the untouched indexes still serve.
	cp gz.ddx c.tsv.gz.ddx
	equals "$(dx get c.tsv.gz 2999)" "$(tail -n 1 c.tsv)"
}

@test "a gzip index whose packed windows or their dictionary lie, and indexes of other format versions" {
	# Enough points that the later packed windows use the dictionary.
	"$DX_SYNTH" --count 20000 -o c.tsv
	gzip -k c.tsv
	dx index -q --span 64K c.tsv.gz
	mv c.tsv.gz.ddx gz.ddx
	local damaged="cannot read the gzip corpus through its index (%s): 'c.tsv.gz'" last
	# The last point: record 19999 is read through it.
	last=$(($(dx index --stats gz.ddx | awk -F'\t' '$1 == "source" { print $9 }') - 1))
	[ "$last" -ge 20 ]
	# A packed window read as a sparse one, too short for its bytes, cut
	# short; and a point both a member's start and packed.
	lying_index gz.ddx c.tsv.gz 19999 point.$last.flags 0 "$(printf "$damaged" "bad window")"
	lying_index gz.ddx c.tsv.gz 19999 point.$last.window_len 100 "$(printf "$damaged" "bad window")"
	lying_index gz.ddx c.tsv.gz 19999 point.$last.window_clen 50 "$(printf "$damaged" "bad window")"
	lying_index gz.ddx c.tsv.gz 19999 point.$last.flags 3 "$(printf "$damaged" "bad access point")"
	# Their dictionary, the first point's window: cut short, or not
	# flagged as one; and a packed window that uses it said not to (its
	# bytes then refer to what is not there).
	lying_index gz.ddx c.tsv.gz 19999 point.0.window_clen 50 "$(printf "$damaged" "bad dictionary")"
	lying_index gz.ddx c.tsv.gz 19999 point.0.flags 1 "$(printf "$damaged" "no dictionary")"
	lying_index gz.ddx c.tsv.gz 19999 point.$last.flags 2 "$(printf "$damaged" "bad window")"
	# Version 2, which had no packed windows, is read; 1 and 5 are not.
	cp gz.ddx c.tsv.gz.ddx
	"$DX_POKE" c.tsv.gz.ddx version 2
	equals "$(dx get c.tsv.gz 0 19999)" "$(sed -n '1p;$p' c.tsv)"
	for v in 1 5; do
		lying_index gz.ddx c.tsv.gz 19999 version $v \
			"index format version $v, this docdex reads versions 2 to 4: rebuild it: 'c.tsv.gz.ddx'"
	done
}

@test "a record of 300 MiB on one line (40 MiB under a sanitizer), plain and gzipped" {
	# 40 MiB under a sanitizer: still a long record (over 16 MiB, the
	# longest an index entry holds) and forty of the scan's chunks, where
	# 300 MiB took ThreadSanitizer's build 170 s, three quarters of the suite.
	local mib=300
	! under_sanitizer || mib=40
	{
		printf 'small\tfirst\n'
		printf 'big\t'
		head -c $((mib << 20)) /dev/zero | tr '\0' 'w'
		printf '\nafter\tlast\n'
	} > big.tsv
	gzip -1k big.tsv
	local f
	for f in big.tsv big.tsv.gz; do
		run --separate-stderr dx index "$f"
		status_is 0
		cmp <(dx get "$f" big) <(sed -n 2p big.tsv)
		equals "$(dx get "$f" after small)" "$(printf 'after\tlast\nsmall\tfirst')"
	done
	# An index may not claim a record beyond the longest one a build takes.
	"$DX_POKE" big.tsv.ddx longrec.0.length $(((1 << 30) + 1))
	run --separate-stderr dx get big.tsv big
	status_is 1
	equals "$stderr" "docdex get: index damaged (bad long-records section), rebuild it with docdex index: 'big.tsv.ddx'"
}

@test "an index whose offsets lie within the corpus: get and sample refuse, never serve another document" {
	"$DX_SYNTH" --count 3000 -o c.tsv
	dx index -q c.tsv
	# Record 5 pointed at record 0's bytes, checksums mended.
	"$DX_POKE" c.tsv.ddx record.5.offset 0
	local why="index damaged or corpus changed in place (record 5 does not hold its id), rebuild it with docdex index: 'c.tsv.ddx'"
	run --separate-stderr dx get c.tsv 5
	status_is 1
	equals "$output" ""
	equals "$stderr" "docdex get: $why"
	run --separate-stderr dx get --position c.tsv 5
	status_is 1
	equals "$stderr" "docdex get: $why"
	printf 'q1\tquery one\n' > queries.tsv
	printf 'q1\t7\t5\n' > triples.tsv
	run --separate-stderr dx sample --triples triples.tsv --queries queries.tsv c.tsv
	status_is 1
	equals "$stderr" "docdex sample: $why"
	# The records it does not touch are served; record 4 is not, for its
	# end would run into where the index puts record 5.
	equals "$(dx get c.tsv 3 6)" "$(sed -n '4p;7p' c.tsv)"
	run --separate-stderr dx get c.tsv 4
	status_is 1
	equals "$stderr" "docdex get: index damaged or corpus changed in place (record 4 does not end where the index says), rebuild it with docdex index: 'c.tsv.ddx'"
}

# A record's length that lies (checksums mended): longer glues the next
# record on, shorter cuts it; both are refused in one line, in every format
# and in plain, gzip and BGZF files.
lying_length() {
	local corpus=$1 pos=$2 by=$3 len
	len=$(python3 - "$corpus.ddx" "$pos" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
nsec = struct.unpack_from('<I', data, 20)[0]
for i in range(nsec):
    typ, _, off, size = struct.unpack_from('<IIQQ', data, 80 + 32 * i)
    if typ == 3:
        packed = struct.unpack_from('<Q', data, off + 8 * int(sys.argv[2]))[0]
        print(packed & ((1 << 24) - 1))
PY
)
	"$DX_POKE" "$corpus.ddx" "record.$pos.length" $((len + by))
}

@test "a record length that lies (longer or shorter) is refused, never served glued or cut" {
	"$DX_SYNTH" --count 300 -o c.tsv
	"$DX_SYNTH" --count 300 --layout beir -o c.jsonl
	"$DX_SYNTH" --count 300 --layout trec -o c.trec
	gzip -k c.tsv
	dx index -q --bgzf c.bgz.gz c.jsonl
	local f by why wrong
	for f in c.tsv c.jsonl c.trec c.tsv.gz c.bgz.gz; do
		for by in 1 -1 -3; do
			dx index -q "$f"
			lying_length "$f" 7 "$by"
			# A JSON object cut short, or with a newline after it, is no
			# object: its id cannot be read, which says as much.
			wrong="does not end where the index says"
			[[ $f == c.tsv* || $f == c.trec ]] || wrong="does not hold its id"
			why="docdex get: index damaged or corpus changed in place (record 7 $wrong), rebuild it with docdex index: '$f.ddx'"
			run --separate-stderr dx get "$f" --position 7
			status_is 1
			equals "$output" ""
			equals "$stderr" "$why"
			# The records around it are served as they are.
			run --separate-stderr dx get "$f" --position 6 8
			status_is 0
		done
	done
	# The last record of a file: a longer length would run past the file
	# (a bounds error), a shorter one is cut.
	dx index -q c.tsv
	lying_length c.tsv 299 -1
	run --separate-stderr dx get c.tsv --position 299
	status_is 1
	equals "$stderr" "docdex get: index damaged or corpus changed in place (record 299 does not end where the index says), rebuild it with docdex index: 'c.tsv.ddx'"
}

@test "a record whose length lies by the length of the next record plus its newline glues two records: refused" {
	printf 'a\tone\nb\ttwo\nc\tthree\n' > c.tsv
	dx index -q c.tsv
	# "a<TAB>one" would become "a<TAB>one<LF>b<TAB>two", which ends at a newline.
	lying_length c.tsv 0 6
	run --separate-stderr dx get c.tsv a
	status_is 1
	equals "$output" ""
	equals "$stderr" "docdex get: index damaged or corpus changed in place (record 0 does not end where the index says), rebuild it with docdex index: 'c.tsv.ddx'"
	printf 'q1\tquery\n' > q.tsv
	printf 'q1\tb\ta\n' > t.tsv
	run --separate-stderr dx sample --queries q.tsv --triples t.tsv c.tsv
	status_is 1
	equals "$stderr" "docdex sample: index damaged or corpus changed in place (record 0 does not end where the index says), rebuild it with docdex index: 'c.tsv.ddx'"
}

@test "a corpus rewritten in place with the same ids under a running get: refused, not served cut or glued" {
	printf 'a\tone\nb\ttwo two\nc\tthree\n' > c.tsv
	dx index -q c.tsv
	mkfifo ids
	dx get c.tsv < ids > out 2> err &
	local pid=$!
	exec 7> ids
	echo a >&7
	# Wait for the first answer: the corpus is open and mapped.
	wait_until '[ -s out ]'
	equals "$(cat out)" "$(printf 'a\tone')"
	# The same ids and size, texts of other lengths: b's record now ends early.
	printf 'a\tone\nb\ttwo\nc\tthree 3\n' | dd of=c.tsv conv=notrunc status=none
	echo b >&7
	exec 7>&-
	wait "$pid" && st=0 || st=$?
	equals "$st" 1
	equals "$(cat out)" "$(printf 'a\tone')"
	equals "$(cat err)" "docdex get: index damaged or corpus changed in place (record 1 does not end where the index says), rebuild it with docdex index: 'c.tsv.ddx'"
}

@test "a gzip or BGZF corpus cut short under a running reader: one line and status 1, no endless retry" {
	"$DX_SYNTH" --count 20000 -o c.tsv
	gzip -k c.tsv
	dx index -q --bgzf b.gz c.tsv
	cp -p c.tsv.gz c.orig
	cp -p b.gz b.orig
	# The compressed bytes are read in place where the file is mapped
	# (mmap, and auto with the file in memory, as it is here), else with
	# pread: each way meets the file's new end.
	local f access msg
	for f in c.tsv.gz b.gz; do
		for access in pread mmap auto; do
			cp -p "${f%%.*}.orig" "$f"
			dx index -q "$f"
			# out and err from the run before would end the wait below
			# before this reader has even opened the corpus.
			rm -f ids out err
			mkfifo ids
			timeout 60 "$DOCDEX" get --access "$access" "$f" < ids > out 2> err &
			local pid=$!
			exec 7> ids
			echo 0 >&7
			wait_until '[ -s out ]'
			truncate -s 50000 "$f"
			echo 19999 >&7
			exec 7>&-
			wait "$pid" && st=0 || st=$?
			equals "$st" 1
			msg="docdex get: a corpus or index file could not be read where it was mapped: it was cut short while in use (overwritten in place), or the disk failed"
			[ "$access" = pread ] && msg="docdex get: corpus file shorter than when it was opened, it was changed while in use: '$f'"
			equals "$(cat err)" "$msg"
		done
	done
}
