#!/usr/bin/env bats
# Reports read back (bench and pin-test's --from and --baseline) and
# experiment files (-c) are input like any other: absurd figures give a
# finite plot, a report of very many cells is refused or read in time and
# memory that grow with it, and a file or value of any size gives a
# message of one short line.  Reports are written here by python3, as
# rs_write_json writes them, so no test measures anything.

load helpers

# Runs docdex with its arguments under a limit of $1 KiB of address space,
# or without one under a checker (its shadow memory needs more).
limited() {
	local kib=$1
	shift
	[ -z "$CHECKER" ] || kib=unlimited
	run --separate-stderr bash -c 'ulimit -v "$1" && shift && exec "$0" "$@"' "$DOCDEX" "$kib" "$@"
}

# A bench report: one cell per argument, "STRATEGY:WORKERS:SAMPLES_PER_S"
# with SAMPLES_PER_S a JSON number (or null); two repetitions each.
report() {
	python3 - "$@" <<'EOF'
import sys
cells = []
for spec in sys.argv[1:]:
    s, w, v = spec.split(":")
    cells.append('{"key": "%s/j%s/t1", "strategy": "%s", "workers": %s, "threads": 1, '
                  '"status": "ok", "reason": "", "repetitions": [{"samples_per_s": %s, '
                  '"pss_mib": 3.5}, {"samples_per_s": 1000, "pss_mib": 3.25}]}' % (s, w, s, w, v))
print('{"report": "docdex bench", "format_version": 1, "cells": [\n%s\n]}' % ",\n".join(cells))
EOF
}

@test "--plot of figures near a double's limit, denormal or out of range ends with a small SVG" {
	report mmap:1:1.6e308 mmap:2:1000 pread:1:-1e308 pread:2:5e-324 stdio:1:1e999 stdio:2:null > r.json
	# The gridlines were once drawn until ymax, which had overflowed to
	# infinity: 445 MB of SVG in 5 s.
	run --separate-stderr timeout 60 "$DOCDEX" bench --from r.json --plot p.svg -o t.csv -q
	status_is 0
	equals "$stderr" ""
	(( $(stat -c %s p.svg) < 20000 ))
	python3 -c 'import xml.etree.ElementTree as E; E.parse("p.svg")'
	# The y axis of samples/s, in figures a person reads.
	run python3 -c 'import re
svg = open("p.svg").read()
print(" ".join(re.findall(r"text-anchor=\"end\">([^<]*)<", svg)[:5]))'
	equals "$output" "0 5e307 1e308 1.5e308 2e308"
	# The table: the mean of 1.6e308 and 1000 as the median, not infinity;
	# a number beyond a double's range read as none.
	run --separate-stderr dx bench --from r.json --format csv
	status_is 0
	[[ ${lines[1]} == mmap/j1/t1,mmap,1,1,ok,,2,0,8e+307,1000,1.6e+308,* ]]
	[[ ${lines[5]} == stdio/j1/t1,stdio,1,1,ok,,2,0,1000,1000,1000,* ]]
	# Only values such as these: every coordinate is a short number.
	run grep -cE '"[-0-9.]{12,}"' p.svg
	equals "$output" 0
}

@test "a report of a million empty cells is refused in one line, within a memory limit" {
	python3 -c 'import sys
sys.stdout.write("{\"report\": \"docdex bench\", \"cells\": [" + ",".join(["{}"] * 1000000) + "]}")' > empty.json
	# Read as cells of a 512-byte reason each, it once took 878 MB.
	limited 400000 bench --from empty.json -q -o r.csv
	status_is 1
	equals "$output" ""
	equals "$stderr" "docdex bench: report has more than 100000 cells: 'empty.json'"
	[ ! -e r.csv ]
	report mmap:1:1000 > r.json
	limited 400000 bench --from r.json -q --baseline empty.json
	status_is 1
	equals "$stderr" "docdex bench: baseline has more than 100000 cells: 'empty.json'"
	# A million repetitions in one cell likewise.
	python3 -c 'import sys
sys.stdout.write("{\"report\": \"docdex pin-test\", \"cells\": [{\"status\": \"ok\", \"repetitions\": [" + ",".join(["{}"] * 1000001) + "]}]}")' > reps.json
	limited 400000 pin-test --from reps.json -q
	status_is 1
	equals "$stderr" "docdex pin-test: report has more than 1000000 repetitions: 'reps.json'"
}

@test "40000 cells are read, reported, plotted and compared with a baseline in time n log n" {
	[ "$CHECKER" != valgrind ] || skip "too slow under valgrind"
	# A line of its own for each cell (each thread count), a tick for each
	# worker count: every pass over the cells that was quadratic (the
	# fastest of each group, series, ticks, the baseline's cells) is met.
	python3 -c 'import sys
cells = ["{\"key\": \"mmap/j%d/t%d\", \"strategy\": \"mmap\", \"workers\": %d, \"threads\": %d, \"status\": \"ok\", \"repetitions\": [{\"samples_per_s\": %d, \"pss_mib\": 1}]}" % (i, i, i, i, 1000 + i) for i in range(1, 40001)]
sys.stdout.write("{\"report\": \"docdex bench\", \"cells\": [\n" + ",\n".join(cells) + "\n]}\n")' > c.json
	# Once over a minute; now a second or two.
	run --separate-stderr timeout 40 "$DOCDEX" bench --from c.json --plot p.svg --baseline c.json \
		-o r.json -q
	status_is 0
	equals "$output" ""
	equals "$stderr" "compared 40000 cells with c.json: 0 regressed beyond 10%"
	run python3 -c 'import json
r = json.load(open("r.json"))
print(len(r["cells"]), sum(c["fastest"] for c in r["cells"]))'
	# Each cell alone at its worker count, measured once: none beat another.
	equals "$output" "40000 0"
	python3 -c 'import xml.etree.ElementTree as E; E.parse("p.svg")'
}

@test "-c /dev/zero is refused at 1 MiB in one line" {
	local cmd
	for cmd in bench pin-test; do
		# Once read until memory ran out: held to 1 GB here, so that
		# the old reader fails instead of taking the machine's.
		limited 1000000 "$cmd" -c /dev/zero
		status_is 2
		equals "$output" ""
		equals "$stderr" "docdex $cmd: experiment file larger than 1 MiB: '/dev/zero'"
	done
}

@test "a bad value of any size in an experiment file gives a message of one short line" {
	# 50 MB: beyond the size an experiment file may have.
	python3 -c 'import sys
sys.stdout.write("workers: 1\nworkload: " + "x" * 50000000 + "\n")' > huge.yaml
	run --separate-stderr dx bench -c huge.yaml
	status_is 2
	equals "$stderr" "docdex bench: experiment file larger than 1 MiB: 'huge.yaml'"
	# Within it, a value of 600,000 bytes is cut at 4 KiB, and its
	# control bytes (a YAML escape may write any) are shown escaped.
	python3 -c 'import sys
sys.stdout.write("workload: \"\\e[31m" + "x" * 600000 + "\"\nstrategies: [mmap, \"" + "y" * 400000 + "\"]\n")' > big.yaml
	run --separate-stderr dx bench -c big.yaml
	status_is 2
	(( ${#stderr} < 4300 ))
	[[ $stderr != *$'\n'* ]]
	[[ $stderr == "docdex bench: big.yaml:1: bad workload, give triples, random or scan: '\\x1b[31mxxxx"*"...' (see docdex bench --help)" ]]
	sed -i 1d big.yaml
	run --separate-stderr dx bench -c big.yaml
	status_is 2
	(( ${#stderr} < 4300 ))
	[[ $stderr == "docdex bench: big.yaml:1: bad strategies, give memory, stdio, pread, mmap, gzip, bgzf, gzip-cached, bgzf-cached or all: 'mmap,yyyy"*"...' (see docdex bench --help)" ]]
}

@test "a baseline comparison shows a report's keys and reasons with their control bytes escaped" {
	python3 -c 'print("{\"report\": \"docdex bench\", \"cells\": [{\"key\": \"m\\u001b[2Jx/j1/t1\", \"strategy\": \"m\\u001b[2Jx\", \"workers\": 1, \"threads\": 1, \"status\": \"failed\", \"reason\": \"worker died\\nsignal 9\\u001b[0m\"}]}")' > now.json
	report "m\\u001b[2Jx:1:1000" > base.json
	run --separate-stderr dx bench --from now.json --baseline base.json -q
	status_is 3
	equals "$stderr" 'regressed: m\x1b[2Jx/j1/t1: was ok, now failed: worker died\x0asignal 9\x1b[0m
compared 1 cell with base.json: 1 regressed beyond 10%'
}

@test "pin-test --from 96000 cells finds each cell's partner for its summary in time n log n" {
	[ "$CHECKER" != valgrind ] || skip "too slow under valgrind"
	# 48000 worker counts, each with and without buffers: each technique's
	# summary pairs every cell with its partner, which was a pass over every
	# cell for every cell.
	python3 -c 'import sys
cells = []
for w in range(1, 48001):
    for pin in ("none", "buffers"):
        cells.append("{\"key\": \"%s/disk/warm/j%d/t1\", \"pin\": \"%s\", \"placement\": \"disk\", \"cache\": \"warm\", \"workers\": %d, \"threads\": 1, \"status\": \"ok\", \"repetitions\": [{\"samples_per_s\": %d, \"pss_mib\": 1}]}" % (pin, w, pin, w, 1000 + w + (pin == "buffers") * 10))
sys.stdout.write("{\"report\": \"docdex pin-test\", \"cells\": [\n" + ",\n".join(cells) + "\n]}\n")' > p.json
	run --separate-stderr timeout 60 "$DOCDEX" pin-test --from p.json -o r.json -q
	status_is 0
	run python3 -c 'import json
r = json.load(open("r.json"))
s = [t for t in r["summary"] if t["dimension"] == "pin"]
print(len(r["cells"]), s[0]["technique"], s[0]["pairs"])'
	equals "$output" "96000 pin buffers vs none 48000"
}

# A bench report of cells "STRATEGY:WORKERS:S1,S2[,...]" with those
# samples/s over its repetitions and PSS of 10 GiB.
spread_report() {
	python3 - "$@" <<'EOF2'
import os, sys
cells = []
for spec in sys.argv[1:]:
    s, w, vs = spec.split(":")
    pss = os.environ.get("PSS_MIB", "10240")
    reps = ", ".join('{"samples_per_s": %s, "pss_mib": %s, "mib_per_s": -0.01}' % (v, pss)
                     for v in vs.split(","))
    cells.append('{"key": "%s/j%s/t1", "strategy": "%s", "workers": %s, "threads": 1, '
                 '"status": "ok", "reason": "", "repetitions": [%s]}' % (s, w, s, w, reps))
print('{"report": "docdex bench", "format_version": 1, "params": {"corpus": "c.tsv", '
      '"records": 3000000, "corpus_bytes": 1073741824, "workload": "random", "batch": 32, '
      '"repeat": 2, "duration_s": 2, "warmup_s": 0.5}, "cells": [\n%s\n]}' % ",\n".join(cells))
EOF2
}

@test "the fastest is marked only where its repetitions are clear of every other cell's" {
	spread_report mmap:1:3000000,3100000 pread:1:1000000,1100000 \
		mmap:2:2000000,2600000 pread:2:2400000,2500000 mmap:4:900000 pread:4:800000 > r.json
	run --separate-stderr dx bench --from r.json
	status_is 0
	# workers 1: clear; 2: the ranges overlap; 4: one repetition each.
	[[ ${lines[0]} == "corpus: c.tsv, 3,000,000 records, 1.0 GiB" ]]
	[[ ${lines[1]} == "workload: random, batches of 32; 2 repetitions of 2 s, after 0.5 s of warm-up" ]]
	equals "$(printf '%s\n' "${lines[@]}" | grep -c '^\*  mmap ')" 1
	printf '%s\n' "${lines[@]}" | grep -q '^\*  mmap      1 '
	printf '%s\n' "${lines[@]}" | grep -q '^no clear winner at workers 2: pread/j2/t1 (±2%) and mmap/j2/t1 (±13%) overlap'
	printf '%s\n' "${lines[@]}" | grep -q '^no winner told at workers 4: mmap/j4/t1 was measured once'
	# 100 columns, MiB/s of noise below resolution as 0, not -0.0.
	for l in "${lines[@]}"; do (( ${#l} <= 100 )); done
	! printf '%s\n' "${lines[@]}" | grep -q -- '-0\.0'
	run --separate-stderr dx bench --from r.json --format json
	equals "$(python3 -c 'import json,sys; print(sum(c["fastest"] for c in json.load(sys.stdin)["cells"]))' <<< "$output")" 1
}

@test "the plot labels its axes as people write them, rings the winner, and renders" {
	spread_report mmap:1:3000000,3100000 pread:1:1000000,1100000 \
		mmap:2:2000000,2600000 pread:2:2400000,2500000 > r.json
	run --separate-stderr dx bench --from r.json --plot p.svg -q
	status_is 0
	# Ticks of 7 characters ("150 MiB") beside the axis title too.
	PSS_MIB=150 spread_report mmap:1:3000000 pread:1:1000000 > r2.json
	run --separate-stderr dx bench --from r2.json --plot p2.svg -q
	status_is 0
	run python3 - <<'EOF2'
import re, xml.etree.ElementTree as E
svg = open("p.svg").read()
E.fromstring(svg)
ticks = re.findall(r'text-anchor="end">([^<]*)<', svg)
print(" ".join(ticks))
print(len(re.findall(r'class="fastest"', svg)))
print("corpus: c.tsv, 3,000,000 records, 1.0 GiB" in svg, "proportional set size" in svg)
# Each panel's upright axis title clear of its widest tick label (about 7
# units a character at 12 px; the title's letters reach 10 left of its
# baseline and 3 right): "150 MiB" once touched "PSS".
clear = []
for panel in (svg + open("p2.svg").read()).split('<g transform="translate(')[1:]:
    ends = [(float(x), t) for x, t in re.findall(r'<text x="([0-9.]+)"[^>]*text-anchor="end">([^<]*)<', panel)]
    up = re.search(r'rotate\(-90 ([0-9.]+) ', panel)
    if ends and up:
        clear.append(float(up.group(1)) + 3 <= min(x - 7 * len(t) for x, t in ends) and float(up.group(1)) >= 10)
print(len(clear), all(clear))
EOF2
	equals "${lines[0]}" "0 1M 2M 3M 4M 0 2 GiB 4 GiB 6 GiB 8 GiB 10 GiB 12 GiB"
	equals "${lines[1]}" 1
	equals "${lines[2]}" "True True"
	equals "${lines[3]}" "4 True"
	# Rendered as a person sees it, where a renderer is installed.
	if command -v rsvg-convert > /dev/null; then
		rsvg-convert p.svg -o p.png
		run python3 -c 'import struct
d = open("p.png", "rb").read(24)
print(d[:8] == b"\x89PNG\r\n\x1a\n", struct.unpack(">II", d[16:24])[0] > 800)'
		equals "$output" "True True"
	fi
}

@test "20000 cells without figures: each reason written once, numbered by its first row, in time n log n" {
	python3 -c 'import sys
cells = ["{\"key\": \"mmap/j%d/t1\", \"strategy\": \"mmap\", \"workers\": %d, \"threads\": 1, \"status\": \"skipped\", \"reason\": \"r%d\", \"repetitions\": []}" % (i, i, i % 7000) for i in range(1, 20001)]
sys.stdout.write("{\"report\": \"docdex bench\", \"cells\": [\n" + ",\n".join(cells) + "\n]}\n")' > s.json
	# Once minutes: each row looked for its reason among all the rows before.
	run --separate-stderr timeout 40 "$DOCDEX" bench --from s.json
	status_is 0
	equals "$(grep -c '^\[[0-9]*\] r[0-9]*$' <<< "$output")" 7000
	grep -Eq '^   mmap +1  skipped \[1\]$' <<< "$output"
	grep -Eq '^   mmap +7001  skipped \[1\]$' <<< "$output"
	grep -Eq '^   mmap +17001  skipped \[3001\]$' <<< "$output"
	grep -q '^\[7000\] r0$' <<< "$output"
}
