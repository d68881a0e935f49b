#!/usr/bin/env bats
# What docdex writes over, and what it refuses to: outputs that are
# devices, FIFOs or links; outputs that would replace an input; inputs
# that are no regular file; closed standard descriptors.

load helpers

two_docs() {
	printf '1\tone\n2\ttwo\n' > c.tsv
}

@test "-o onto a FIFO writes through to its reader and leaves the FIFO in place" {
	two_docs
	mkfifo fifo
	cat fifo > got &
	run --separate-stderr dx index -q -o fifo c.tsv
	status_is 0
	wait
	[ -p fifo ]
	equals "$(head -c 8 got | od -An -c | tr -s ' ')" " 211 D D X \r \n 032 \n"
	printf 'q1\tquery\n' > q.tsv
	printf 'q1\t1\t2\n' > t.tsv
	dx index -q c.tsv
	cat fifo > got &
	run --separate-stderr dx sample --queries q.tsv --triples t.tsv -o fifo c.tsv
	status_is 0
	wait
	[ -p fifo ]
	equals "$(cat got)" "$(printf 'query\tone\ttwo')"
}

@test "-o through a link to /proc/self/fd/1 reaches stdout; a link to a file replaces the file, keeps the link" {
	two_docs
	dx index -q c.tsv
	printf 'q1\tquery\n' > q.tsv
	printf 'q1\t1\t2\n' > t.tsv
	ln -s /proc/self/fd/1 out
	run --separate-stderr dx sample --queries q.tsv --triples t.tsv -o out c.tsv
	status_is 0
	equals "$output" "$(printf 'query\tone\ttwo')"
	[ -L out ]
	# Standard output on a file opened to append: appended to, as by ">>",
	# never replaced by a new file.
	echo earlier > log
	dx sample --queries q.tsv --triples t.tsv -o /dev/stdout c.tsv >> log
	dx sample --queries q.tsv --triples t.tsv -o out c.tsv >> log
	equals "$(cat log)" "$(printf 'earlier\nquery\tone\ttwo\nquery\tone\ttwo')"
	echo old > target
	ln -s target link
	# A file there is the user's: kept, and replaced with --force only.
	run --separate-stderr dx sample --queries q.tsv --triples t.tsv -o link c.tsv
	status_is 1
	equals "$stderr" "docdex sample: output exists, give --force to replace it: 'link'"
	equals "$(cat target)" old
	run --separate-stderr dx sample --queries q.tsv --triples t.tsv -f -o link c.tsv
	status_is 0
	[ -L link ]
	equals "$(cat target)" "$(printf 'query\tone\ttwo')"
	# The triples there are no index: replaced with --force only.
	run --separate-stderr dx index -q -o link c.tsv
	status_is 1
	equals "$(cat target)" "$(printf 'query\tone\ttwo')"
	run --separate-stderr dx index -q --force -o link c.tsv
	status_is 0
	[ -L link ]
	run --separate-stderr dx get target 2
	equals "$output" "$(printf '2\ttwo')"
}

@test "-o /dev/fd/N and /proc/self/fd/N write through the descriptor, whose file is appended to, never replaced" {
	two_docs
	dx index -q c.tsv
	printf 'q1\tquery\n' > q.tsv
	printf 'q1\t1\t2\n' > t.tsv
	# These names are links the kernel makes to the file behind the
	# descriptor: read through, they would name the log itself, which
	# --force would then replace with a new file.
	echo earlier > log
	local inode
	inode=$(stat -c %i log)
	dx sample --queries q.tsv --triples t.tsv -f -o /dev/fd/1 c.tsv >> log
	dx sample --queries q.tsv --triples t.tsv -f -o /proc/self/fd/3 c.tsv 3>> log
	dx sample --queries q.tsv --triples t.tsv -o /dev/fd/4 c.tsv 4>> log
	equals "$(cat log)" "$(printf 'earlier\nquery\tone\ttwo\nquery\tone\ttwo\nquery\tone\ttwo')"
	equals "$(stat -c %i log)" "$inode"
	dx index -q -f -o /dev/fd/3 c.tsv 3>> log
	equals "$(head -n 4 log)" "$(printf 'earlier\nquery\tone\ttwo\nquery\tone\ttwo\nquery\tone\ttwo')"
	equals "$(tail -c +51 log | head -c 4 | od -An -c | tr -s ' ')" " 211 D D X"
	equals "$(stat -c %i log)" "$inode"
}

@test "-o onto a character device writes through to it, never renames over it" {
	two_docs
	# A device node of our own, when this user may make one (root); else
	# the system's /dev/null, which a rename over it would replace.
	local dev=/dev/null
	if mknod null c 1 3 2>/dev/null; then
		dev=$PWD/null
	fi
	run --separate-stderr dx index -q -o "$dev" c.tsv
	status_is 0
	[ -c "$dev" ]
	dx index -q c.tsv
	printf 'q1\tquery\n' > q.tsv
	printf 'q1\t1\t2\n' > t.tsv
	run --separate-stderr dx sample --queries q.tsv --triples t.tsv -o "$dev" c.tsv
	status_is 0
	[ -c "$dev" ]
	equals "$(ls -A | grep -c '^\.c\.tsv' || true)" 0
}

@test "-o onto a directory, or a link to nothing: one line, status 1, nothing written" {
	mkdir w && cd w
	two_docs
	mkdir dir
	run --separate-stderr dx index -o dir c.tsv
	status_is 1
	equals "$stderr" "docdex index: cannot create: 'dir': is a directory"
	ln -s nowhere dangling
	run --separate-stderr dx index -o dangling c.tsv
	status_is 1
	equals "$stderr" "docdex index: a symbolic link to nothing, not written: 'dangling': no such file or directory"
	[ ! -e nowhere ]
	equals "$(ls -A | sort | tr '\n' ' ')" "c.tsv dangling dir "
}

@test "an output that would replace an input is refused: index -o, through links, and the index of a --bgzf copy" {
	mkdir w && cd w
	two_docs
	cp c.tsv before
	run --separate-stderr dx index -o c.tsv c.tsv
	status_is 1
	equals "$stderr" "docdex index: the output would replace a file this command reads: 'c.tsv'"
	cmp c.tsv before
	ln c.tsv hard
	ln -s c.tsv soft
	run --separate-stderr dx index -o hard c.tsv
	status_is 1
	run --separate-stderr dx index -o soft c.tsv
	status_is 1
	cmp c.tsv before
	run --separate-stderr dx index --bgzf c.gz -o c.tsv c.tsv
	status_is 1
	cmp c.tsv before
	[ ! -e c.gz ]
	# The library refuses it too, whoever calls it: the index of the BGZF
	# copy over the copy itself.
	run --separate-stderr dx index --bgzf c.gz -o c.gz c.tsv
	status_is 1
	equals "$stderr" "docdex index: the index would replace a corpus file: 'c.gz'"
	cmp c.tsv before
	equals "$(ls -A | sort | tr '\n' ' ')" "before c.gz c.tsv hard soft "
}

@test "index replaces no existing file it did not write without --force: --bgzf, -o, CORPUS.ddx" {
	mkdir w && cd w
	# The cp-order slip: the output named first is a corpus.
	printf '1\thello\n2\tworld\n' > victim.tsv
	printf '7\tother\n' > other.tsv
	cp victim.tsv victim.before
	run --separate-stderr dx index --bgzf victim.tsv other.tsv
	status_is 1
	equals "$output" ""
	equals "$stderr" "docdex index: output exists, give --force to replace it: 'victim.tsv'"
	cmp victim.tsv victim.before
	equals "$(ls -A | sort | tr '\n' ' ')" "other.tsv victim.before victim.tsv "
	# -o, and the default CORPUS.ddx, holding something that is no index.
	echo notes > notes.txt
	run --separate-stderr dx index -o notes.txt other.tsv
	status_is 1
	equals "$stderr" "docdex index: output exists and is not a docdex index, give --force to replace it: 'notes.txt'"
	equals "$(cat notes.txt)" notes
	echo mine > other.tsv.ddx
	run --separate-stderr dx index other.tsv
	status_is 1
	equals "$stderr" "docdex index: output exists and is not a docdex index, give --force to replace it: 'other.tsv.ddx'"
	equals "$(cat other.tsv.ddx)" mine
	# Through a link, the file it points to is what is checked.
	ln -s notes.txt link
	run --separate-stderr dx index -o link other.tsv
	status_is 1
	[ -L link ]
	equals "$(cat notes.txt)" notes
	# Both outputs of --bgzf are checked before either is written.
	echo mine > new.gz.ddx
	run --separate-stderr dx index --bgzf new.gz other.tsv
	status_is 1
	equals "$stderr" "docdex index: output exists and is not a docdex index, give --force to replace it: 'new.gz.ddx'"
	[ ! -e new.gz ]
	equals "$(cat new.gz.ddx)" mine
	# --force replaces them.
	run --separate-stderr dx index -f --bgzf victim.tsv other.tsv
	status_is 0
	equals "$(gzip -dc victim.tsv)" "$(cat other.tsv)"
	equals "$(dx get victim.tsv 7)" "$(printf '7\tother')"
	run --separate-stderr dx index --force -o link other.tsv
	status_is 0
	[ -L link ]
	equals "$(dx get notes.txt 7)" "$(printf '7\tother')"
	dx index -f other.tsv
	equals "$(dx get other.tsv 7)" "$(printf '7\tother')"
	# --force never lets an output replace an input.
	run --separate-stderr dx index -f -o other.tsv other.tsv
	status_is 1
	equals "$stderr" "docdex index: the output would replace a file this command reads: 'other.tsv'"
	equals "$(cat other.tsv)" "$(printf '7\tother')"
	run --separate-stderr dx index -f --bgzf other.tsv other.tsv
	status_is 1
	equals "$(cat other.tsv)" "$(printf '7\tother')"
}

@test "an index docdex wrote is rebuilt over without --force, whichever corpus it indexed" {
	two_docs
	printf '7\tother\n' > other.tsv
	dx index -q c.tsv
	run --separate-stderr dx index c.tsv
	status_is 0
	equals "$stderr" ""
	run --separate-stderr dx index -o c.tsv.ddx other.tsv
	status_is 0
	equals "$(dx get c.tsv.ddx 7)" "$(printf '7\tother')"
	# An empty file there is no index.
	: > empty.ddx
	run --separate-stderr dx index -o empty.ddx c.tsv
	status_is 1
	[ ! -s empty.ddx ]
}

@test "CORPUS whose CORPUS.ddx indexes another file: refused, not served" {
	two_docs
	printf 'x\tother\n' > other.tsv
	dx index -q c.tsv
	cp c.tsv.ddx other.tsv.ddx
	run --separate-stderr dx get other.tsv 1
	status_is 1
	equals "$output" ""
	equals "$stderr" "docdex get: index of another file (c.tsv), rebuild it with docdex index: 'other.tsv.ddx'"
	printf 'q1\tquery\n' > q.tsv
	printf 'q1\t1\t2\n' > t.tsv
	run --separate-stderr dx sample --queries q.tsv --triples t.tsv other.tsv
	status_is 1
	equals "$stderr" "docdex sample: index of another file (c.tsv), rebuild it with docdex index: 'other.tsv.ddx'"
	# Through a link to the corpus, or the index named itself, it serves.
	ln -s c.tsv alias.tsv
	cp c.tsv.ddx alias.tsv.ddx
	equals "$(dx get alias.tsv 2)" "$(printf '2\ttwo')"
	equals "$(dx get other.tsv.ddx 2)" "$(printf '2\ttwo')"
}

@test "a FIFO at the corpus or index path is refused at once, not waited on" {
	two_docs
	dx index -q c.tsv
	mkfifo f.tsv g.ddx
	run --separate-stderr timeout 20 "$DOCDEX" get f.tsv 1
	status_is 1
	equals "$stderr" "docdex get: not a regular file: 'f.tsv'"
	run --separate-stderr timeout 20 "$DOCDEX" get g.ddx 1
	status_is 1
	equals "$stderr" "docdex get: not a regular file: 'g.ddx'"
	# The corpus file an index names, a FIFO now.
	mv c.tsv real.tsv
	mkfifo c.tsv
	run --separate-stderr timeout 20 "$DOCDEX" get c.tsv.ddx 1
	status_is 1
	equals "$stderr" "docdex get: corpus file is not a regular file: 'c.tsv'"
}

@test "--bgzf onto a FIFO or a device is refused before any work: the copy is indexed next" {
	mkdir w && cd w
	two_docs
	mkfifo fifo
	local out
	for out in fifo /dev/null; do
		run --separate-stderr timeout 20 "$DOCDEX" index --bgzf "$out" c.tsv
		status_is 1
		equals "$stderr" "docdex index: the BGZF output must be a regular file, to be indexed: '$out'"
		run --separate-stderr timeout 20 "$DOCDEX" index -f --bgzf "$out" c.tsv
		status_is 1
	done
	[ -p fifo ] && [ -c /dev/null ]
	[ ! -e fifo.ddx ]
	# stdout by name, a file: the index would go to /dev/stdout.ddx.
	run --separate-stderr sh -c '"$DOCDEX" index --bgzf /dev/stdout c.tsv > out.bgz'
	status_is 1
	equals "$stderr" "docdex index: the BGZF output must be a regular file, to be indexed: '/dev/stdout'"
	rm out.bgz
	mkdir dir
	run --separate-stderr dx index --bgzf dir c.tsv
	status_is 1
	equals "$stderr" "docdex index: cannot create: 'dir': is a directory"
	equals "$(ls -A | sort | tr '\n' ' ')" "c.tsv dir fifo "
}

@test "closed stdin: get reads no ids from the corpus it opened on descriptor 0; closed stdout: a failed write" {
	two_docs
	gzip c.tsv
	dx index -q c.tsv.gz
	run --separate-stderr bash -c '"$0" get c.tsv.gz <&-' "$DOCDEX"
	status_is 0
	equals "$output" ""
	equals "$stderr" ""
	# A closed stdout: the index is written where it belongs, nothing else.
	run --separate-stderr bash -c '"$0" index -q c.tsv.gz >&-' "$DOCDEX"
	status_is 0
	run --separate-stderr dx get c.tsv.gz 2
	equals "$output" "$(printf '2\ttwo')"
	# Documents sent to a closed stdout are not lost without a word (they
	# went to /dev/null, status 0): as cat says.
	run --separate-stderr bash -c '"$0" get c.tsv.gz 2 >&-' "$DOCDEX"
	status_is 1
	equals "$stderr" "docdex get: cannot write output: 'stdout': bad file descriptor"
	run --separate-stderr bash -c '"$0" --version >&-' "$DOCDEX"
	status_is 1
	equals "$stderr" "docdex --version: cannot write output: 'stdout': bad file descriptor"
}

@test "ids and values in messages: every byte shown, one line, at most 4 KiB" {
	two_docs
	dx index -q c.tsv
	run --separate-stderr dx get c.tsv < <(printf 'a\0b\nnew\nline\n')
	status_is 1
	equals "$stderr" "$(printf "docdex get: id not found: 'a\\\\x00b'\ndocdex get: id not found: 'new'\ndocdex get: id not found: 'line'")"
	local long
	long=$(head -c 100000 /dev/zero | tr '\0' 'x')
	run --separate-stderr dx get --format "$long" c.tsv 1
	status_is 2
	[ "$(printf '%s' "$stderr" | wc -l)" -eq 0 ]
	[ "${#stderr}" -lt 4300 ]
	[[ $stderr == "docdex get: bad --format, give raw, tsv or jsonl: 'xxx"*"...' (see docdex get --help)" ]]
	run --separate-stderr dx get c.tsv "$(printf 'tab\there\nand a newline')"
	status_is 1
	equals "$stderr" "docdex get: id not found: 'tab\\x09here\\x0aand a newline'"
}

@test "--seed takes every u64, the largest too" {
	two_docs
	dx index -q c.tsv
	run --separate-stderr dx get --random 1 --seed 18446744073709551615 c.tsv
	status_is 0
	run --separate-stderr dx get --random 1 --seed 18446744073709551616 c.tsv
	status_is 2
	equals "$stderr" "docdex get: bad --seed, give a non-negative integer: '18446744073709551616' (see docdex get --help)"
}

@test "xz, bzip2 and zstd corpora are refused by their magic, with --skip-bad too" {
	local f name undo
	for f in tiny.tsv.xz:xz:"xz -d" tiny.tsv.bz2:bzip2:"bzip2 -d" tiny.tsv.zst:zstd:"zstd -d"; do
		IFS=: read -r f name undo <<< "$f"
		use_data "$f"
		run --separate-stderr dx index --skip-bad "$f"
		status_is 1
		equals "$stderr" "docdex index: compressed with $name, which docdex does not read: decompress it ($undo) or recompress it with gzip or bgzip: '$f'"
		[ ! -e "$f.ddx" ]
		run --separate-stderr dx index --bgzf out.gz "$f"
		status_is 1
		[ ! -e out.gz ]
	done
}

@test "xz, bzip2 and zstd queries, qrels and runs are refused from a pipe too" {
	local f name undo
	for f in tiny.tsv.xz:xz:"xz -d" tiny.tsv.bz2:bzip2:"bzip2 -d" tiny.tsv.zst:zstd:"zstd -d"; do
		IFS=: read -r f name undo <<< "$f"
		use_data "$f"
		# A pipe cannot be read again from its start: the reader checks the
		# first bytes it reads.
		run --separate-stderr bash -c 'cat "$1" | "$2" sample --format ids --qrels /dev/stdin --run /dev/null' _ "$f" "$DOCDEX"
		status_is 1
		equals "$stderr" "docdex sample: compressed with $name, which docdex does not read: decompress it ($undo) or recompress it with gzip or bgzip: '/dev/stdin'"
		# A regular file is told the same way.
		run --separate-stderr dx sample --format ids --qrels "$f" --run /dev/null
		status_is 1
		equals "$stderr" "docdex sample: compressed with $name, which docdex does not read: decompress it ($undo) or recompress it with gzip or bgzip: '$f'"
	done
}

@test "a file of another format than --format says gives no empty index" {
	two_docs
	run --separate-stderr dx index --format trec c.tsv
	status_is 1
	equals "$stderr" "docdex index: no trec record in 12 B of content, is it in another format? (see --format): 'c.tsv'"
	[ ! -e c.tsv.ddx ]
	# An empty file is an empty index, as before.
	: > empty.tsv
	run --separate-stderr dx index --format tsv empty.tsv
	status_is 0
}
