#!/usr/bin/env bats
# docdex index: formats, options, bad input, --stats and --verify.

load helpers

@test "each format and layout of the generator indexes, and every id serves its record" {
	for kind in passages documents; do
		for layout in tsv jsonl-v2 beir trec; do
			"$DX_SYNTH" --kind $kind --layout $layout --count 300 --seed 3 -o c.$layout
			run --separate-stderr dx index -q c.$layout
			status_is 0
			equals "$stderr" ""
			run dx index --stats c.$layout
			status_is 0
			[[ $output == *$'\nrecords\t300\n'* ]]
			# All records back by position, then by id, in corpus order.
			seq 0 299 > pos
			dx get --position --format tsv --field id,url c.$layout < pos > /dev/null 2>&1 || true
			dx get --position --format jsonl c.$layout < pos > by-pos
			[ "$(wc -l < by-pos)" -eq 300 ]
		done
	done
}

@test "TSV records are the lines of the file, ids from column 1" {
	"$DX_SYNTH" --kind documents --count 500 -o d.tsv
	dx index -q d.tsv
	cut -f1 d.tsv > ids
	run --separate-stderr dx get d.tsv < ids
	status_is 0
	equals "$output" "$(cat d.tsv)"
	run dx index --stats d.tsv
	[[ $output == *$'\nformat\ttsv\n'* ]]
	[[ $output == *$'\nid-kind\thash\n'* ]]
	[[ $output == *$'\nparam\tcolumns=id,url,title,body\n'* ]]
}

@test "integer ids counting up are sequential and need no id table" {
	"$DX_SYNTH" --count 1000 -o p.tsv
	dx index -q p.tsv
	run dx index --stats p.tsv
	[[ $output == *$'\nid-kind\tsequential\nid-base\t0\n'* ]]
	[[ $output != *id-hash* ]]
	run --separate-stderr dx get p.tsv 999 0 1000 0999
	status_is 1
	equals "${lines[0]%%$'\t'*}" 999
	equals "${lines[1]%%$'\t'*}" 0
	equals "$stderr" "docdex get: id not found: '1000'
docdex get: id not found: '0999'"
}

@test "JSONL: the id key is found, strings and numbers, escapes decoded" {
	printf '{"x": 1, "doc_id": "a\\u00e9"}\n{"doc_id": 42, "x": 2}\n' > j.jsonl
	dx index -q j.jsonl
	run dx index --stats j.jsonl
	[[ $output == *$'\nparam\tid_field=doc_id\n'* ]]
	run --separate-stderr dx get j.jsonl "aé" 42
	status_is 0
	equals "$output" '{"x": 1, "doc_id": "a\u00e9"}
{"doc_id": 42, "x": 2}'
}

@test "JSONL: --id-field picks another key" {
	printf '{"_id": "a", "alt": "x1"}\n{"_id": "b", "alt": "x2"}\n' > j.jsonl
	dx index -q --id-field alt j.jsonl
	run --separate-stderr dx get --field _id j.jsonl x2 x1
	status_is 0
	equals "$output" "b
a"
}

@test "TSV: --id-column and --columns" {
	printf 'text one\tq1\tT1\ntext two\tq2\tT2\n' > t.tsv
	dx index -q --id-column 2 --columns body,qid,title t.tsv
	run --separate-stderr dx get --field title,body t.tsv q2
	status_is 0
	equals "$output" "T2 text two"
	run --separate-stderr dx get --field 1 t.tsv q1
	equals "$output" "text one"
	run --separate-stderr dx get --field nope t.tsv q1
	status_is 2
	equals "$stderr" "docdex get: bad field for the tsv corpus t.tsv (columns body,qid,title), no column of that name: 'nope'"
}

@test "CRLF, a byte order mark, blank lines and a last line without newline" {
	printf '\xef\xbb\xbfa\tone\r\n\r\n \t \nb\ttwo\r\n\n\nc\tthree' > w.tsv
	dx index -q w.tsv
	run --separate-stderr dx get w.tsv c a b
	status_is 0
	equals "$output" "c	three
a	one
b	two"
	run dx index --stats w.tsv
	[[ $output == *$'\nrecords\t3\n'* ]]
}

@test "bytes that are not UTF-8 pass through untouched" {
	printf 'x\tcaf\xe9 \xff\xfe na\xc3\xafve\n' > l1.tsv
	dx index -q l1.tsv
	dx get l1.tsv x > out
	cmp out l1.tsv
}

@test "the format is detected from the content, not the name, and can be forced" {
	printf '<DOC>\n<DOCNO>d1</DOCNO>\nx\n</DOC>\n' > looks.tsv
	dx index -q looks.tsv
	run dx index --stats looks.tsv
	[[ $output == *$'\nformat\ttrec\n'* ]]
	printf 'no tabs here\nat all\n' > plain.txt
	run --separate-stderr dx index plain.txt
	status_is 1
	equals "$stderr" "docdex index: cannot tell the corpus format, give --format tsv, jsonl or trec: 'plain.txt'"
	[ ! -e plain.txt.ddx ]
	# Forced, a line without a tab is a record of one column: its id.
	run --separate-stderr dx index --format tsv plain.txt
	status_is 0
	run dx get plain.txt "at all"
	equals "$output" "at all"
	printf 'a\tb\n' > tab.jsonl
	run --separate-stderr dx index --format jsonl tab.jsonl
	status_is 1
	equals "$stderr" "docdex index: malformed JSON record: 'tab.jsonl:1'"
}

@test "a file of another kind under a corpus's name: one line, no index" {
	# A tar archive (gzipped too) holds a tab in its first line, so it
	# reads as TSV; so does UTF-16 text, and an ELF program may.  Their
	# first column holds control bytes, which no corpus's first id does.
	printf 'a\tb\n' > c.tsv
	tar cf arch.tsv c.tsv
	gzip -c arch.tsv > arch.tsv.gz
	printf 'a\0\t\0b\0\n\0' > utf16.tsv
	printf '\177ELF\2\1\1\0\0\0\0\0\0\0\0\0\3\0>\0\1\0\0\0\t\0\0\0\n' > elf.tsv
	# A program without a tab in its first line: no format, or refused
	# as TSV when forced.
	head -c 3000 "$DOCDEX" > prog.tsv
	local f byte
	for f in arch.tsv:00 arch.tsv.gz:00 utf16.tsv:00 elf.tsv:7f prog.tsv:7f; do
		byte=${f##*:} f=${f%:*}
		if [ "$f" != prog.tsv ]; then
			run --separate-stderr dx index "$f"
			status_is 1
			equals "$stderr" "docdex index: not a text corpus: a control byte (0x$byte) in the first record's first column (a binary file, or UTF-16?): '$f:1'"
			[ ! -e "$f.ddx" ]
		fi
		run --separate-stderr dx index --format tsv "$f"
		status_is 1
		equals "$stderr" "docdex index: not a text corpus: a control byte (0x$byte) in the first record's first column (a binary file, or UTF-16?): '$f:1'"
		[ ! -e "$f.ddx" ]
	done
	# A control byte after the first column is content.
	printf 'a\tone\001two\n' > ctl.tsv
	dx index -q ctl.tsv
	dx get ctl.tsv a > out
	cmp out ctl.tsv
}

@test "several files need -o, and records carry their file" {
	"$DX_SYNTH" --kind documents --count 50 --seed 1 -o a.tsv
	"$DX_SYNTH" --kind documents --count 50 --seed 2 -o b.tsv
	# Different seeds can share ids; keep b's apart.
	sed -i 's/^D/E/' b.tsv
	mkdir idx
	dx index -q -o idx/all.ddx a.tsv b.tsv
	run dx index --stats idx/all.ddx
	[[ $output == *$'\nsource\t../a.tsv\t'*$'\t0\t50\tok\tplain\t'* ]]
	[[ $output == *$'\nsource\t../b.tsv\t'*$'\t50\t50\tok\tplain\t'* ]]
	cat a.tsv b.tsv | cut -f1 > ids
	run --separate-stderr dx get idx/all.ddx < ids
	status_is 0
	equals "$output" "$(cat a.tsv b.tsv)"
	printf '{"id": "1"}\n' > c.jsonl
	run --separate-stderr dx index -o x.ddx a.tsv c.jsonl
	status_is 1
	equals "$stderr" "docdex index: file in jsonl format, unlike the first file (tsv): 'c.jsonl'"
}

@test "the index follows the corpus: relative paths, then the absolute path" {
	"$DX_SYNTH" --count 10 -o c.tsv
	mkdir elsewhere moved
	dx index -q -o elsewhere/c.ddx c.tsv
	# Both moved together: the relative path still holds.
	cp -p c.tsv moved/ && cp elsewhere/c.ddx moved/c.ddx
	mkdir moved/elsewhere && mv moved/c.ddx moved/elsewhere/
	mv c.tsv c.tsv.away
	run --separate-stderr dx get moved/elsewhere/c.ddx 3
	status_is 0
	[[ $output == 3$'\t'* ]]
	# Only the index moved: the absolute path finds the corpus.
	mv c.tsv.away c.tsv
	mkdir -p far/away && cp elsewhere/c.ddx far/away/
	run --separate-stderr dx get far/away/c.ddx 4
	status_is 0
	[[ $output == 4$'\t'* ]]
}

@test "duplicate ids: an error naming both places, or --duplicates first|last" {
	printf 'a\tone\nb\ttwo\na\tthree\n' > d.tsv
	run --separate-stderr dx index d.tsv
	status_is 1
	equals "$stderr" "docdex index: duplicate id at d.tsv:1 and d.tsv:3 (keep one with --duplicates first or last): 'a'"
	[ ! -e d.tsv.ddx ]
	run --separate-stderr dx index --duplicates first d.tsv
	status_is 0
	equals "$stderr" "docdex index: 1 records had an id already taken, kept the first"
	run dx get d.tsv a
	equals "$output" "a	one"
	dx index -q --duplicates last d.tsv 2>/dev/null
	run dx get d.tsv a
	equals "$output" "a	three"
	# Every record keeps its place and its own id.
	run dx get --position --format tsv d.tsv 0 2
	equals "$output" "a	one
a	three"
}

@test "records without an id fail with file and line, or are skipped and counted" {
	use_data trecweb-missing-docno.trec
	run --separate-stderr dx index trecweb-missing-docno.trec
	status_is 1
	equals "$stderr" "docdex index: <DOC> without <DOCNO> (skip such records with --skip-bad): 'trecweb-missing-docno.trec:10'"
	run --separate-stderr dx index --skip-bad trecweb-missing-docno.trec
	status_is 0
	equals "$stderr" "docdex index: skipped 1 records without an id, the first at: 'trecweb-missing-docno.trec:10'"
	run dx get --format tsv --field docno trecweb-missing-docno.trec WEB-0001 WEB-0003
	equals "$output" "WEB-0001	WEB-0001
WEB-0003	WEB-0003"
	run --separate-stderr dx index --verify trecweb-missing-docno.trec
	status_is 0
	printf '{"_id": "1"}\n{"title": "no id"}\n' > j.jsonl
	run --separate-stderr dx index j.jsonl
	status_is 1
	equals "$stderr" "docdex index: record without the id field (skip such records with --skip-bad): 'j.jsonl:2'"
	printf 'a\tx\n\tno id\n' > t.tsv
	run --separate-stderr dx index t.tsv
	equals "$stderr" "docdex index: record with an empty id (skip such records with --skip-bad): 't.tsv:2'"
	printf '{"contents": "x"}\n' > n.jsonl
	run --separate-stderr dx index n.jsonl
	status_is 1
	equals "$stderr" "docdex index: no id field (docid, _id, id, pid or doc_id) in the first record, give --id-field: 'n.jsonl:1'"
}

@test "malformed records are errors even with --skip-bad" {
	printf '{"_id": "1"}\n{"_id": "2", "text": "unterminated}\n' > j.jsonl
	run --separate-stderr dx index --skip-bad j.jsonl
	status_is 1
	equals "$stderr" "docdex index: malformed JSON record: 'j.jsonl:2'"
	printf '<DOC>\n<DOCNO>1</DOCNO>\n</DOC>\n<DOC>\n<DOCNO>2</DOCNO>\ncut off\n' > t.trec
	run --separate-stderr dx index --skip-bad t.trec
	status_is 1
	equals "$stderr" "docdex index: unterminated record at the end of the file: 't.trec:4'"
	use_data json-array-id-missing.json
	run --separate-stderr dx index --format jsonl json-array-id-missing.json
	status_is 1
	equals "$stderr" "docdex index: malformed JSON record: 'json-array-id-missing.json:1'"
}

@test "missing, unreadable and odd inputs get one clear line" {
	run --separate-stderr dx index nope.tsv
	status_is 1
	equals "$stderr" "docdex index: cannot open: 'nope.tsv': no such file or directory"
	mkdir adir
	run --separate-stderr dx index adir
	status_is 1
	equals "$stderr" "docdex index: a directory, not a corpus file: 'adir'"
	run --separate-stderr dx index --bgzf out.gz adir
	status_is 1
	equals "$stderr" "docdex index: a directory, not a corpus file: 'adir'"
	[ ! -e out.gz ]
	run --separate-stderr dx index -
	status_is 2
	touch empty.tsv
	run --separate-stderr dx index empty.tsv
	status_is 1
	equals "$stderr" "docdex index: empty corpus, nothing to tell its format from, give --format: 'empty.tsv'"
	run --separate-stderr dx index --format tsv empty.tsv
	status_is 0
	run dx index --stats empty.tsv
	[[ $output == *$'\nrecords\t0\n'* ]]
	printf 'a\tb\n' > c.tsv
	run --separate-stderr dx index -o no/such/dir/c.ddx c.tsv
	status_is 1
	equals "$stderr" "docdex index: cannot resolve: 'no/such/dir': no such file or directory"
}

@test "re-indexing replaces the index in one step and leaves no temporary file" {
	"$DX_SYNTH" --count 100 -o c.tsv
	dx index -q c.tsv
	cp c.tsv.ddx first.ddx
	dx index -q c.tsv
	cmp c.tsv.ddx first.ddx
	equals "$(ls -A)" "c.tsv
c.tsv.ddx
first.ddx"
	# A failed build leaves the earlier index as it was.
	printf 'x\ty\nx\tz\n' >> c.tsv
	run dx index -q c.tsv
	status_is 1
	cmp c.tsv.ddx first.ddx
	equals "$(ls -A)" "c.tsv
c.tsv.ddx
first.ddx"
}

@test "--stats prints what an index holds, TAB-separated" {
	use_data msmarco-passage-toy.tsv
	dx index -q msmarco-passage-toy.tsv
	run --separate-stderr dx index --stats msmarco-passage-toy.tsv
	status_is 0
	equals "${lines[0]}" "index	msmarco-passage-toy.tsv.ddx"
	equals "${lines[1]}" "version	2"
	[[ ${lines[2]} =~ ^bytes$'\t'[0-9]+$ ]]
	equals "${lines[3]}" "records	89"
	equals "${lines[4]}" "format	tsv"
	equals "${lines[5]}" "id-kind	hash"
	[[ ${lines[6]} =~ ^bytes-per-record$'\t'[0-9]+\.[0-9]{2}$ ]]
	equals "${lines[7]}" "source	msmarco-passage-toy.tsv	26919	0	89	ok	plain	26919	0	0"
	[[ $output == *$'\nsection\trecords\t'* ]]
	[[ $output == *$'\nparam\tformat=tsv\n'* ]]
	# The source's state follows the file.
	touch -d '2001-01-01' msmarco-passage-toy.tsv
	run dx index --stats msmarco-passage-toy.tsv
	[[ $output == *$'\tchanged\tplain\t'* ]]
	rm msmarco-passage-toy.tsv
	run dx index --stats msmarco-passage-toy.tsv.ddx
	[[ $output == *$'\tmissing\tplain\t'* ]]
}

@test "a corpus without an index: --stats, --verify and get say it alike" {
	printf '1\tone\n' > c.tsv
	local want="no index, build it with docdex index: 'c.tsv.ddx'"
	run --separate-stderr dx index --stats c.tsv
	status_is 1
	equals "$stderr" "docdex index: $want"
	run --separate-stderr dx index --verify c.tsv
	status_is 1
	equals "$stderr" "docdex index: $want"
	run --separate-stderr dx get c.tsv 1
	status_is 1
	equals "$stderr" "docdex get: $want"
	# An index named that is missing is a file that cannot be opened.
	run --separate-stderr dx index --stats gone.ddx
	status_is 1
	equals "$stderr" "docdex index: cannot open: 'gone.ddx': no such file or directory"
}

# Runs docdex with its standard streams on a terminal (script(1) makes
# one), into $tty: what the terminal showed, CRs dropped.
on_tty() {
	local cmd="'$DOCDEX'" a
	for a in "$@"; do
		cmd+=" '$a'"
	done
	tty=$(script -qec "$cmd" /dev/null | tr -d '\r')
}

@test "a summary line on a terminal; nothing with -q or off a terminal" {
	printf '1\tone\n2\ttwo\n' > c.tsv
	on_tty index c.tsv
	[[ $tty =~ ^indexed\ 2\ records\ \(12\ B\)\ into\ c\.tsv\.ddx\ \([0-9]+\ B\)$ ]]
	on_tty index --bgzf c.gz c.tsv
	[[ $tty =~ ^rewrote\ c\.tsv\ \(12\ B\)\ as\ BGZF\ into\ c\.gz\ \([0-9]+\ B\)\ and\ indexed\ 2\ records\ into\ c\.gz\.ddx\ \([0-9]+\ B\)$ ]]
	on_tty index -q c.tsv
	equals "$tty" ""
	on_tty index --quiet -f --bgzf c.gz c.tsv
	equals "$tty" ""
	# A failure on a terminal: its one line, no summary.
	on_tty index nope.tsv
	equals "$tty" "docdex index: cannot open: 'nope.tsv': no such file or directory"
	run --separate-stderr dx index c.tsv
	status_is 0
	equals "$stderr" ""
	run --separate-stderr dx index -f --bgzf c.gz c.tsv
	status_is 0
	equals "$stderr" ""
	equals "$output" ""
}

@test "--verify re-reads the corpus and finds what the fingerprint does not" {
	"$DX_SYNTH" --count 20000 -o c.tsv
	dx index -q c.tsv
	run --separate-stderr dx index --verify c.tsv
	status_is 0
	equals "$output" "ok	20000 records	$(stat -c %s c.tsv) bytes"
	# Change one id in the middle of the file, between the sampled blocks,
	# keeping size and mtime: get cannot tell, --verify can.
	local line=10007
	local at
	at=$(head -n $((line - 1)) c.tsv | wc -c)
	touch -r c.tsv stamp
	printf 'X' | dd of=c.tsv bs=1 seek="$at" count=1 conv=notrunc status=none
	touch -r stamp c.tsv
	run --separate-stderr dx index --verify c.tsv
	status_is 1
	equals "$stderr" "docdex index: record 10006 differs from the index: its id: 'c.tsv:$line'"
}

@test "--verify and --stats report a full output device" {
	[ -w /dev/full ] || { echo "no /dev/full on this machine" >&2; return 1; }
	"$DX_SYNTH" --count 10 -o c.tsv
	dx index -q c.tsv
	run --separate-stderr dx index --verify c.tsv
	status_is 0
	run --separate-stderr bash -c "'$DOCDEX' index --verify c.tsv > /dev/full"
	status_is 1
	equals "$stderr" "docdex index: cannot write output: 'stdout': no space left on device"
	run --separate-stderr bash -c "'$DOCDEX' index --stats c.tsv > /dev/full"
	status_is 1
	equals "$stderr" "docdex index: cannot write output: 'stdout': no space left on device"
	run --separate-stderr bash -c "'$DOCDEX' get c.tsv 1 2 > /dev/full"
	status_is 1
	equals "$stderr" "docdex get: cannot write output: 'stdout': no space left on device"
}
