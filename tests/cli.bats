#!/usr/bin/env bats
# The command line as a whole: help, version, dispatch, usage errors, and
# the agreement of --help, man pages and completions.

load helpers

@test "--version names the version, the compiler and the libraries" {
	run --separate-stderr dx --version
	status_is 0
	[[ ${lines[0]} =~ ^docdex\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	[[ ${lines[1]} == build:\ * ]]
	[[ $output == *"zlib: "* ]]
	[[ $output == *"libyaml: "* ]]
	[[ $output == *$'\ncodecs: '* ]]
	equals "$stderr" ""
	# What serves besides zlib (the gzip scan's own inflater in any
	# build), and that zlib serves alone when asked.
	run --separate-stderr env DOCDEX_CODEC=default "$DOCDEX" --version
	[[ $output =~ $'\n'codecs:\ (libdeflate\ [0-9.]+,\ )?(ISA-L\ [0-9.]+,\ )?docdex\ inflate($'\n'|$) ]]
	local served=${BASH_REMATCH[1]}${BASH_REMATCH[2]}
	run --separate-stderr env DOCDEX_CODEC=zlib "$DOCDEX" --version
	[[ $output == *$'\ncodecs: zlib (DOCDEX_CODEC=zlib; built with '"${served}docdex inflate)"* ]]
}

@test "-V is --version, and near misses of the global options are pointed to them" {
	run --separate-stderr dx --version
	local want=$output
	run --separate-stderr dx -V
	status_is 0
	equals "$output" "$want"
	equals "$stderr" ""
	run --separate-stderr dx --verison
	status_is 2
	equals "$output" ""
	equals "$stderr" "docdex: unknown option: '--verison', did you mean '--version'? (see docdex --help)"
	run --separate-stderr dx --hlep
	status_is 2
	equals "$stderr" "docdex: unknown option: '--hlep', did you mean '--help'? (see docdex --help)"
	run --separate-stderr dx version
	status_is 2
	equals "$stderr" "docdex: 'version' is not a docdex command, did you mean '--version'? (see docdex --help)"
	run --separate-stderr dx -x
	status_is 2
	equals "$stderr" "docdex: unknown option: '-x' (see docdex --help)"
	run --separate-stderr dx --frobnicate
	status_is 2
	equals "$stderr" "docdex: unknown option: '--frobnicate' (see docdex --help)"
	# The man page and the three completions offer -V too.
	local dir=$BATS_TEST_DIRNAME/..
	grep -q '^\\fB\\-V\\fR, \\fB\\-\\-version\\fR$' "$dir/man/docdex.1"
	grep -q 'local global_opts=".* -V --version' "$dir/completions/docdex.bash"
	grep -q "{-V,--version}'\[show the version" "$dir/completions/_docdex"
	grep -q -- "-s V -l version -d 'show the version" "$dir/completions/docdex.fish"
}

@test "help help shows the usage of help, which every completion offers with a description" {
	run --separate-stderr dx help help
	status_is 0
	equals "$stderr" ""
	equals "${lines[0]}" "usage: docdex help [COMMAND]"
	local want=$output
	run --separate-stderr dx help --help
	status_is 0
	equals "$output" "$want"
	# fish: after "docdex help", each command with the summary that
	# docdex --help gives it, and help with its own.
	local fish=$BATS_TEST_DIRNAME/../completions/docdex.fish name summary n=0
	! grep -q "help.*-d 'command'" "$fish"
	while read -r name summary; do
		grep -qF -- "-n \$docdex_help_arg -a $name -d '$summary'" "$fish"
		n=$((n + 1))
	done < <(dx --help | sed -n 's/^  \([a-z-]*\)  *\(.*\)$/\1 \2/p')
	equals "$n" 5
	grep -qF -- "-n \$docdex_help_arg -a help -d 'show the usage of docdex or of a command'" "$fish"
}

@test "docdex --help lists every command; no arguments is a usage error" {
	run --separate-stderr dx --help
	status_is 0
	for c in index get sample bench pin-test; do
		[[ $output == *"  $c "* ]]
	done
	run --separate-stderr dx
	status_is 2
	equals "$output" ""
	[[ $stderr == usage:* ]]
}

@test "help CMD, CMD --help and CMD -h print the same usage on stdout" {
	for c in index get sample bench pin-test; do
		run --separate-stderr dx help "$c"
		status_is 0
		local a=$output
		run --separate-stderr dx "$c" --help
		status_is 0
		equals "$output" "$a"
		run --separate-stderr dx "$c" -h
		status_is 0
		equals "$output" "$a"
		equals "$stderr" ""
		[[ $a == "usage: docdex $c "* ]]
	done
}

@test "a help or version that cannot be written fails with one line; a reader gone does not" {
	local args
	for args in --help -h -V --version help "help help" "help get" "get --help" "index -h" \
		"sample --help" "bench --help" "pin-test -h"; do
		# shellcheck disable=SC2086
		run --separate-stderr sh -c '"$0" "$@" > /dev/full' "$DOCDEX" $args
		status_is 1
		equals "$output" ""
		[[ $stderr =~ ^docdex\ [a-z-]+:\ cannot\ write\ output:\ \'stdout\':\ no\ space\ left\ on\ device$ ]] ||
			fail "$args: $stderr"
	done
	equals "$stderr" "docdex pin-test: cannot write output: 'stdout': no space left on device"
	# A pipe whose reader is gone before the help is written (EPIPE).
	run --separate-stderr python3 -c 'import os, subprocess, sys
r, w = os.pipe()
os.close(r)
sys.exit(subprocess.call(sys.argv[1:], stdout=w))' "$DOCDEX" bench --help
	status_is 0
	equals "$stderr" ""
}

@test "an argument after --help, --version or help COMMAND is a usage error" {
	local args
	for args in "--help x" "-h x" "--version x" "-V x" "help get bogus" "help help x"; do
		# shellcheck disable=SC2086
		run --separate-stderr dx $args
		status_is 2
		equals "$output" ""
		equals "$stderr" "docdex: extra argument: '${args##* }' (see docdex --help)"
	done
}

@test "an unknown command gets the closest name" {
	run --separate-stderr dx indx
	status_is 2
	equals "$stderr" "docdex: 'indx' is not a docdex command, did you mean 'index'? (see docdex --help)"
	run --separate-stderr dx gte x
	status_is 2
	[[ $stderr == *"did you mean 'get'?"* ]]
	run --separate-stderr dx frobnicate
	status_is 2
	equals "$stderr" "docdex: 'frobnicate' is not a docdex command (see docdex --help)"
	run --separate-stderr dx help nope
	status_is 2
}

@test "usage errors exit 2 with one line naming the problem" {
	run --separate-stderr dx index --bogus x
	status_is 2
	equals "$stderr" "docdex index: unknown option: '--bogus' (see docdex index --help)"
	run --separate-stderr dx index -z x
	status_is 2
	equals "$stderr" "docdex index: unknown option: '-z' (see docdex index --help)"
	run --separate-stderr dx index x -o
	status_is 2
	equals "$stderr" "docdex index: option needs a value: '-o' (see docdex index --help)"
	run --separate-stderr dx get --field
	status_is 2
	equals "$stderr" "docdex get: option needs a value: '--field' (see docdex get --help)"
	run --separate-stderr dx index --format csv x
	status_is 2
	equals "$stderr" "docdex index: bad --format, give auto, tsv, jsonl or trec: 'csv' (see docdex index --help)"
	# Names longer than an index keeps: the option's error, before any file is read.
	local long
	long=$(printf 'k%.0s' $(seq 256))
	run --separate-stderr dx index --id-field "$long" x
	status_is 2
	equals "$stderr" "docdex index: --id-field too long, give at most 255 bytes: '$long' (see docdex index --help)"
	run --separate-stderr dx index --id-field "${long%k}" x
	status_is 1
	# A column with no name, which no --field could name.
	for v in "x,," ",x" "" "a,,b"; do
		run --separate-stderr dx index --columns "$v" x
		status_is 2
		equals "$stderr" "docdex index: bad --columns, give names separated by commas: '$v' (see docdex index --help)"
	done
	# Not a number, nor a number too large to be one: nan and inf.
	local v
	for v in nan inf -inf 1e999; do
		run --separate-stderr dx sample --queries q --qrels r --random --min-rel "$v" c
		status_is 2
		equals "$stderr" "docdex sample: bad --min-rel, give a number: '$v' (see docdex sample --help)"
	done
	long=$(printf 'k,%.0s' $(seq 512))
	run --separate-stderr dx index --columns "$long" x
	status_is 2
	equals "$stderr" "docdex index: --columns too long, give at most 1023 bytes: '$long' (see docdex index --help)"
	run --separate-stderr dx get --format xml c
	status_is 2
	run --separate-stderr dx get --random x c
	status_is 2
	run --separate-stderr dx get
	status_is 2
	equals "$stderr" "docdex get: no corpus or index given (see docdex get --help)"
	run --separate-stderr dx index
	status_is 2
	run --separate-stderr dx index a b
	status_is 2
	equals "$stderr" "docdex index: several files need -o PATH for the index (see docdex index --help)"
	run --separate-stderr dx --frob
	status_is 2
}

# The long and short options of a command, from each place that lists them.
opts_help() {
	dx "$1" --help | grep -oE '^ +(-[a-zA-Z@], +)?--[a-z][a-z-]*' |
		grep -oE -- '-(-[a-z][a-z-]*|[a-zA-Z@])' | sort -u
}
opts_man() {
	sed -n '/^\.SH OPTIONS/,/^\.SH/p' "$BATS_TEST_DIRNAME/../man/docdex-$1.1" |
		grep -oE '\\-(\\-[a-z][a-z-]*\b|[a-zA-Z]\b|@)' | sed 's/\\//g' | sort -u
}
opts_bash() {
	grep -E "local ${1//-/_}_opts=" "$BATS_TEST_DIRNAME/../completions/docdex.bash" |
		sed 's/.*="\(.*\)".*/\1/' | tr ' ' '\n' | grep . | sort -u
}
# zsh: the command's function, and the functions whose arguments it takes
# (bench and pin-test share theirs).
opts_zsh() {
	local file=$BATS_TEST_DIRNAME/../completions/_docdex fn
	local body
	body=$(sed -n "/^_docdex_${1//-/_}()/,/^}/p" "$file")
	for fn in $(grep -oE '^ *_docdex_[a-z_]*_args$' <<< "$body"); do
		body+=$'\n'$(sed -n "/^$fn()/,/^}/p" "$file")
	done
	grep -oE "(^|[\"'({ ,])-(-[a-z][a-z-]*\b|[a-zA-Z]\b|@)" <<< "$body" | sed "s/^[\"'({ ,]//" | sort -u
}
opts_fish() {
	grep -E "__fish_seen_subcommand_from ([a-z-]+ )*$1( [a-z-]+)*'" "$BATS_TEST_DIRNAME/../completions/docdex.fish" |
		grep -oE ' -[ls] [a-zA-Z@][a-z-]*' | sed 's/ -l /--/; s/ -s /-/' | sort -u
}

@test "every option is in --help, the man page and the three completions alike" {
	for c in index get sample bench pin-test; do
		local want
		want=$(opts_help "$c")
		[ -n "$want" ]
		equals "$(opts_man "$c")" "$want"
		equals "$(opts_bash "$c")" "$want"
		equals "$(opts_zsh "$c")" "$want"
		equals "$(opts_fish "$c")" "$want"
	done
}

@test "the man pages render without warnings" {
	for page in "$BATS_TEST_DIRNAME"/../man/*.[15]; do
		run --separate-stderr groff -man -ww -z "$page"
		status_is 0
		equals "$stderr" ""
	done
}

@test "a closed pipe ends output quietly" {
	"$DX_SYNTH" --count 20000 -o c.tsv
	dx index -q c.tsv
	seq 0 19999 > ids
	run --separate-stderr bash -c "set -o pipefail; '$DOCDEX' get c.tsv < ids | head -n 1 | cut -c1-2"
	status_is 0
	equals "$output" "0	"
	equals "$stderr" ""
}
