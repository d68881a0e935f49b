#!/usr/bin/env bats
# docdex bench: complete results for every strategy, reports that parse and
# hold every documented field, the baseline gate, experiment files, the
# memory limit, the plot, clean-up on signals.  Figures are never asserted
# against a speed: cells run for a tenth of a second.

load helpers

# Short cells; the temporary directory is the test's own, to see it emptied.
QUICK=(--duration 0.1 --warmup 0 --repeat 2)

setup() {
	cd "$BATS_TEST_TMPDIR" || exit 1
	mkdir -p tmp
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
}

# A small TSV corpus of passages (about 1.7 MB) with its index.
small_corpus() {
	"$DX_SYNTH" --count 5000 -o c.tsv --queries q.tsv --qrels qrels.txt --run run.txt --nqueries 200
	dx index -q c.tsv
}

@test "every strategy on the built-in synthetic corpus gives a complete result, and the temporary files go" {
	run --separate-stderr dx bench --synthetic passages:3000 -j 1,2 "${QUICK[@]}" -q -o r.json
	status_is 0
	equals "$output" ""
	equals "$stderr" ""
	local s expect=()
	for s in memory stdio pread mmap gzip bgzf; do
		expect+=(--expect "$s/j1/t1=ok" --expect "$s/j2/t1=ok")
	done
	check_report r.json --repeat 2 "${expect[@]}"
	python3 -c 'import json, sys; d = json.load(open("r.json")); sys.exit(len(d["cells"]) != 12 or d["params"]["corpus"] != "synthetic passages:3000" or d["params"]["records"] != 3000)'
	equals "$(ls tmp)" ""
}

@test "JSON and CSV hold every field the man page lists; the table marks the fastest" {
	small_corpus
	run --separate-stderr dx bench --strategies memory,pread,mmap -j 1,2 --threads 1,2 "${QUICK[@]}" \
		--workload random -o r.json c.tsv
	status_is 0
	equals "$stderr" ""
	# The table on stdout: what was measured, a heading, 12 cells, the
	# fastest of each worker count marked where the noise lets it be told,
	# as in the JSON, and every line within 100 columns.
	[[ ${lines[0]} == "corpus: c.tsv, 5,000 records, "* ]]
	grep -qE '^   strategy  j  t +samples/s +± +MiB/s +p50 ms +p99 ms +setup s +private MiB +file MiB$' <<< "$output"
	equals "$(grep -cE '^[* ]  (memory|pread|mmap) ' <<< "$output")" 12
	equals "$(grep -c '^\*  [a-z]' <<< "$output")" \
		"$(python3 -c 'import json; print(sum(c["fastest"] for c in json.load(open("r.json"))["cells"]))')"
	! awk 'length > 100' <<< "$output" | grep -q .
	run --separate-stderr dx bench --from r.json --format csv -o r.csv -q
	status_is 0
	check_report r.json --repeat 2 --csv r.csv --man "$BATS_TEST_DIRNAME/../man/docdex-bench.1"
	run --separate-stderr dx bench --from r.json --format markdown
	status_is 0
	[[ ${lines[0]} == '| '*strategy*'|'* ]]
	[[ ${lines[1]} == '|'*'---'* ]]
}

@test "triples from queries, qrels and a run; scan; a gzip corpus gets memory and gzip" {
	small_corpus
	run --separate-stderr dx bench --queries q.tsv --qrels qrels.txt --run run.txt --negatives 3 \
		--strategies stdio,mmap "${QUICK[@]}" -q -o t.json c.tsv
	status_is 0
	check_report t.json --expect stdio/j1/t1=ok --expect mmap/j1/t1=ok
	# A sample is the query, its positive and 3 negatives: 4 documents.
	python3 -c 'import json, sys; c = json.load(open("t.json"))["cells"][1]["summary"]; sys.exit(abs(c["docs_per_s"]["median"] / c["samples_per_s"]["median"] - 4) > 0.01)'
	run --separate-stderr dx bench --workload scan --strategies pread "${QUICK[@]}" -q -o s.json c.tsv
	status_is 0
	check_report s.json --expect pread/j1/t1=ok
	gzip -k c.tsv
	dx index -q c.tsv.gz
	run --separate-stderr dx bench "${QUICK[@]}" -q -o g.json c.tsv.gz
	status_is 0
	check_report g.json --expect memory/j1/t1=ok --expect gzip/j1/t1=ok
	equals "$(python3 -c 'import json; print(len(json.load(open("g.json"))["cells"]))')" 2
}

@test "--inflate-cache adds gzip-cached, which inflates each stretch once where gzip inflates per batch" {
	small_corpus
	gzip -k c.tsv
	dx index -q c.tsv.gz
	export DOCDEX_CACHE_DIR=$BATS_TEST_TMPDIR/shm
	mkdir "$DOCDEX_CACHE_DIR"
	run --separate-stderr dx bench --workload random --samples 2000 --warmup 0 --repeat 2 \
		--inflate-cache 64M -q -o g.json c.tsv.gz
	status_is 0
	check_report g.json --expect memory/j1/t1=ok --expect gzip/j1/t1=ok --expect gzip-cached/j1/t1=ok
	# The bytes inflated over the measured part, from the rate and the
	# time 2,000 samples took: the cached cell's at most the text once (its
	# cache holds every stretch), the other's many times that.
	run python3 - "$(stat -c %s c.tsv)" <<'EOF2'
import json, sys
size = int(sys.argv[1])
cells = {c["strategy"]: c for c in json.load(open("g.json"))["cells"]}
for s in ("gzip", "gzip-cached"):
    for r in cells[s]["repetitions"]:
        print(s, r["inflate_mib_per_s"] * 2**20 * 2000 / r["samples_per_s"] / size)
EOF2
	local s ratio
	while read -r s ratio; do
		case $s in
		gzip) python3 -c "import sys; sys.exit(not $ratio > 3)" ;;
		gzip-cached) python3 -c "import sys; sys.exit(not $ratio < 1.1)" ;;
		esac
	done <<< "$output"
	equals "$(ls "$DOCDEX_CACHE_DIR")" ""
}

@test "a strategy that does not apply is skipped with its reason; a corpus without an index gets a temporary one" {
	"$DX_SYNTH" --count 2000 -o c.tsv
	run --separate-stderr dx bench --strategies mmap,gzip,bgzf "${QUICK[@]}" -q -o r.json c.tsv
	status_is 0
	check_report r.json --expect mmap/j1/t1=ok --expect gzip/j1/t1=skipped --expect bgzf/j1/t1=skipped
	[[ $(python3 -c 'import json; print(json.load(open("r.json"))["cells"][1]["reason"])') == "needs a gzip corpus"* ]]
	[ ! -e c.tsv.ddx ]
	equals "$(ls tmp)" ""
}

@test "--baseline: a doctored baseline exits 3 naming the cell; the same report exits 0" {
	small_corpus
	dx bench --strategies pread,mmap "${QUICK[@]}" -q -o r.json c.tsv
	run --separate-stderr dx bench --from r.json --baseline r.json -q
	status_is 0
	equals "$stderr" "compared 2 cells with r.json: 0 regressed beyond 10%"
	# The baseline was three times faster for mmap.
	python3 - <<-'EOF'
		import json
		d = json.load(open("r.json"))
		for c in d["cells"]:
		    if c["key"] == "mmap/j1/t1":
		        for k in ("median", "min", "max"):
		            c["summary"]["samples_per_s"][k] *= 3
		json.dump(d, open("fast.json", "w"))
		for c in d["cells"]:
		    if c["key"] == "pread/j1/t1":
		        for k in ("median", "min", "max"):
		            c["summary"]["pss_mib"][k] /= 3
		json.dump(d, open("small.json", "w"))
	EOF
	run --separate-stderr dx bench --from r.json --baseline fast.json -q
	status_is 3
	[[ $stderr == "regressed: mmap/j1/t1: samples/s "*" (-66.7%; tolerance 10%;"* ]]
	[[ $stderr == *"compared 2 cells with fast.json: 1 regressed beyond 10%" ]]
	run --separate-stderr dx bench --from r.json --baseline small.json --tolerance 5 -q
	status_is 3
	[[ $stderr == "regressed: pread/j1/t1: PSS "*"MiB (+200.0%; tolerance 5%;"* ]]
	# A tolerance beyond the difference forgives it.
	run --separate-stderr dx bench --from r.json --baseline fast.json --tolerance 70 -q
	status_is 0
	run --separate-stderr dx bench --from r.json --baseline missing.json -q
	status_is 1
	[[ $stderr == "docdex bench: cannot read baseline: 'missing.json': no such file or directory" ]]
	echo '{"report": "docdex get"}' > other.json
	run --separate-stderr dx bench --from r.json --baseline other.json -q
	status_is 1
	equals "$stderr" "docdex bench: not a docdex bench report: 'other.json'"
}

@test "experiment files: the example runs; the command line overrides; errors name the line and the key" {
	mkdir exp
	cp "$DATA/bench-experiment.yaml" exp/
	# Run from elsewhere: outputs go beside the file; -j and --repeat win.
	run --separate-stderr dx bench -c exp/bench-experiment.yaml -j 1 --repeat 1 --duration 0.1 -q
	status_is 0
	check_report exp/bench-report.json --repeat 1
	python3 -c 'import json, sys; d = json.load(open("exp/bench-report.json")); sys.exit(d["params"]["workers"] != [1])'
	python3 -c 'import xml.etree.ElementTree as E; E.parse("exp/bench-plot.svg")'

	printf 'synthetic: passages:1000\nrepeat: 1\nstrategy: mmap\n' > bad.yaml
	run --separate-stderr dx bench -c bad.yaml
	status_is 2
	equals "$stderr" "docdex bench: bad.yaml:3: unknown key: 'strategy' (see docdex bench --help)"
	printf 'synthetic: passages:1000\n\nduration: fast\n' > bad.yaml
	run --separate-stderr dx bench -c bad.yaml
	status_is 2
	equals "$stderr" "docdex bench: bad.yaml:3: bad duration, give a number of seconds: 'fast' (see docdex bench --help)"
	printf 'workers: [1, 2]\nrepeat: [1, 2]\n' > bad.yaml
	run --separate-stderr dx bench -c bad.yaml
	status_is 2
	equals "$stderr" "docdex bench: bad.yaml:2: repeat takes one value, not a list: '1,2' (see docdex bench --help)"
	printf 'workers: [1, 2]\nplot:\n  file: x.svg\n' > bad.yaml
	run --separate-stderr dx bench -c bad.yaml
	status_is 2
	equals "$stderr" "docdex bench: a value must be a scalar or a list of scalars: 'bad.yaml:3: plot'"
	printf 'workers: [1, 2\nrepeat: 1\n' > bad.yaml
	run --separate-stderr dx bench -c bad.yaml
	status_is 2
	[[ $stderr == "docdex bench: malformed YAML: "*": 'bad.yaml:2'" ]]
	run --separate-stderr dx bench -c missing.yaml
	status_is 2
	equals "$stderr" "docdex bench: cannot open: 'missing.yaml': no such file or directory"
	equals "$(ls tmp)" ""
}

@test "--mem-limit by projection marks memory OOM without running it when the corpus does not fit" {
	small_corpus
	# The corpus is 1.7 MB; 1 MiB cannot hold a copy of it, the index fits.
	run --separate-stderr dx bench --strategies memory,stdio,mmap -j 1,2 --mem-limit 1M \
		--limit-by projection "${QUICK[@]}" --workload random -o r.json c.tsv
	status_is 0
	check_report r.json --expect memory/j1/t1=oom --expect memory/j2/t1=oom --expect stdio/j2/t1=ok \
		--expect mmap/j1/t1=ok --expect mmap/j2/t1=ok
	# The reason once, under the table, for both cells that have it.
	grep -q '^   memory    1  oom \[1\]$' <<< "$output"
	grep -q '^   memory    2  oom \[2\]$' <<< "$output"
	grep -q '^\[1\] projected 2.0 MiB > limit 1.0 MiB$' <<< "$output"
	python3 - <<-'EOF'
		import json, sys
		c = {c["key"]: c for c in json.load(open("r.json"))["cells"]}
		m = c["memory/j1/t1"]
		# Not run: no repetition; its projection is the corpus and its table.
		sys.exit(m["repetitions"] != [] or not 1.7e6 < m["projected_bytes"] < 2.5e6
		         or c["memory/j2/t1"]["projected_bytes"] < 2 * m["projected_bytes"] * 0.99)
	EOF
}

@test "--mem-limit in a memory cgroup: the kernel kills the memory strategy, the index strategies run on" {
	memcg_or_skip
	# 48 MiB of corpus; a limit of 24 MiB holds no copy of it, but the
	# page cache of the index strategies is reclaimed within the limit.
	"$DX_SYNTH" --size 48M -o c.tsv
	dx index -q c.tsv
	before=$(memcg_groups)
	run --separate-stderr dx bench --strategies memory,pread,mmap -j 1,2 --mem-limit 24M \
		"${QUICK[@]}" --workload random -o r.json c.tsv
	status_is 0
	# ThreadSanitizer keeps shadow memory for every page a worker touches,
	# the mapped corpus's too, and charges it to the worker.
	local mmap=(--expect mmap/j1/t1=ok --expect mmap/j2/t1=ok)
	if sanitized_with thread; then mmap=(); fi
	check_report r.json --expect memory/j1/t1=oom --expect memory/j2/t1=oom --expect pread/j1/t1=ok \
		--expect pread/j2/t1=ok "${mmap[@]}"
	grep -q '^   memory    1  oom \[1\]$' <<< "$output"
	grep -qE '^\[1\] killed for memory: 1 worker over the limit of 24.0 MiB \(cgroup v[12]; peak ' <<< "$output"
	python3 - <<-'EOF'
		import json, sys
		r = json.load(open("r.json"))
		c = {c["key"]: c for c in r["cells"]}
		# Killed after it ran, not skipped: the projection is still reported.
		sys.exit(not r["params"]["mem_limit_by"].startswith("cgroup v")
		         or r["params"]["mem_limit_bytes"] != 24 << 20
		         or c["memory/j1/t1"]["projected_bytes"] < 48e6)
	EOF
	# Every cell's group is gone.
	equals "$(memcg_groups)" "$before"
}

# The memory cgroup of bench process $1's running cell, once it is made;
# fails without one.
group_of() {
	local pid=$1 group
	wait_until 'group=$(memcg_groups | grep "/docdex-bench\.$pid\.[0-9]*$")' && echo "$group"
}

@test "SIGKILL during a cell in a memory cgroup leaves its empty group; the next run removes it, never a live run's" {
	memcg_or_skip
	small_corpus
	before=$(memcg_groups)
	# Started as itself, not through dx's function, so that $! is its pid.
	"$DOCDEX" bench --strategies pread --mem-limit 1G --duration 60 --repeat 1 -q -o a.json c.tsv 3>&- &
	local pid=$! i group
	group=$(group_of "$pid")
	kill -KILL "$pid"
	wait "$pid" || true
	# The workers die with their parent, and leave the group empty.
	wait_until '[ -z "$(cat "$group/cgroup.procs")" ]'
	[ -d "$group" ]
	# A live run's group is kept while another run sweeps (a cell long
	# enough to outlast the other run's start, even on a loaded machine).
	"$DOCDEX" bench --strategies pread --mem-limit 1G --duration 10 --repeat 1 -q -o live.json c.tsv 3>&- &
	local live=$! livegroup
	livegroup=$(group_of "$live")
	run --separate-stderr dx bench --strategies pread --mem-limit 1G "${QUICK[@]}" -q -o r.json c.tsv
	status_is 0
	[ ! -e "$group" ]
	[ -d "$livegroup" ]
	wait "$live"
	check_report live.json --expect pread/j1/t1=ok
	equals "$(memcg_groups)" "$before"
}

@test "--limit-by projection is kept where asked; --limit-by is checked" {
	small_corpus
	run --separate-stderr dx bench --strategies memory -j 1 --mem-limit 1M --limit-by projection \
		"${QUICK[@]}" --workload random -o r.json c.tsv
	status_is 0
	grep -q '"mem_limit_by": "projection"' r.json
	run --separate-stderr dx bench --limit-by guess c.tsv
	status_is 2
	equals "$stderr" "docdex bench: bad --limit-by, give cgroup or projection: 'guess' (see docdex bench --help)"
}

@test "--plot writes an SVG that an XML parser reads, a line for each strategy" {
	small_corpus
	run --separate-stderr dx bench --strategies memory,mmap -j 1,2 "${QUICK[@]}" --workload random \
		--plot p.svg -q -o r.json c.tsv
	status_is 0
	python3 - <<-'EOF'
		import sys
		import xml.etree.ElementTree as E
		root = E.parse("p.svg").getroot()
		ns = "{http://www.w3.org/2000/svg}"
		text = " ".join(t.text or "" for t in root.iter(ns + "text"))
		lines = root.findall(".//" + ns + "polyline")
		sys.exit(root.tag != ns + "svg" or "docdex bench" not in text or "memory" not in text
		         or "mmap" not in text or len(lines) < 4)
	EOF
	# Written whole or not at all: a plot that cannot be written leaves the old one.
	cp p.svg old.svg
	run --separate-stderr dx bench --from r.json --plot no/such/dir/p.svg -q
	status_is 1
	[[ $stderr == "docdex bench: "*"'no/such/dir/p.svg'"* ]]
}

@test "a cell that fails is reported failed, the run goes on, and the status is 1" {
	small_corpus
	printf 'q1\tx\n' > q1.tsv
	printf 'q1 0 not-in-the-corpus 1\n' > q1.qrels
	run --separate-stderr dx bench --queries q1.tsv --qrels q1.qrels --strategies pread,mmap \
		"${QUICK[@]}" -q -o r.json c.tsv
	status_is 1
	check_report r.json --expect pread/j1/t1=failed --expect mmap/j1/t1=failed
	local reason
	reason=$(python3 -c 'import json; print(json.load(open("r.json"))["cells"][0]["reason"])')
	[[ $reason == "worker 0: "* ]]
	# The report being in a file, one line says why the status is 1.
	equals "$stderr" "docdex bench: 2 cells failed, the first: 'pread/j1/t1': $reason"
}

@test "SIGINT and SIGTERM stop the workers and remove the temporary corpus" {
	local sig
	for sig in INT TERM; do
		"$DOCDEX" bench --synthetic passages:5000 -j 2 --duration 30 --repeat 1 -q -o r.json \
			--tmpdir "$BATS_TEST_TMPDIR/tmp" 2> err &
		local pid=$!
		# Until the workers run: the parent has children.
		wait_until '[ "$(pgrep -c -P $pid)" = 2 ]'
		local kids
		kids=$(pgrep -P $pid)
		[ -n "$(ls tmp)" ]
		kill -$sig $pid
		local st=0
		wait $pid || st=$?
		equals $st 130
		equals "$(cat err)" "docdex bench: interrupted"
		equals "$(ls tmp)" ""
		[ ! -e r.json ]
		for i in $kids; do
			! kill -0 "$i" 2>/dev/null
		done
	done
}

@test "usage errors" {
	run --separate-stderr dx bench --strategies mmap,floppy
	status_is 2
	equals "$stderr" "docdex bench: bad --strategies, give memory, stdio, pread, mmap, gzip, bgzf, gzip-cached, bgzf-cached or all: 'mmap,floppy' (see docdex bench --help)"
	run --separate-stderr dx bench -j 1,0
	status_is 2
	[[ $stderr == "docdex bench: bad --workers, give a list of worker counts such as 1,2,4,8: '1,0'"* ]]
	run --separate-stderr dx bench --synthetic passages:10 c.tsv
	status_is 2
	[[ $stderr == "docdex bench: give a corpus or --synthetic, not both: 'c.tsv'"* ]]
	run --separate-stderr dx bench --qrels x
	status_is 2
	[[ $stderr == "docdex bench: --qrels needs --queries"* ]]
	run --separate-stderr dx bench --synthetic lots
	status_is 2
	run --separate-stderr dx bench --frobnicate
	status_is 2
	run --separate-stderr dx bench missing.tsv
	status_is 1
	[[ $stderr == "docdex bench: "*"'missing.tsv'"* ]]
	equals "$(ls tmp)" ""
}
