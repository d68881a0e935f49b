# bash completion for docdex(1)                             -*- shell-script -*-
#
# Completes the commands, each command's options, the values of options
# that take one of a fixed list, and file names where a file is expected.
# Works with or without the bash-completion package.

# Completes file names that start with $1 (one a line, so that names with
# blanks survive).
_docdex_files()
{
    local cur=$1
    if declare -F _filedir >/dev/null 2>&1; then
        _filedir
        return
    fi
    local IFS=$'\n'
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -f -- "$cur"))
}

# Completes directory names that start with $1.
_docdex_dirs()
{
    local cur=$1
    if declare -F _filedir >/dev/null 2>&1; then
        _filedir -d
        return
    fi
    local IFS=$'\n'
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -d -- "$cur"))
}

# Completes experiment files (*.yaml, *.yml) and directories that start
# with $1.
_docdex_yaml_files()
{
    local cur=$1
    if declare -F _filedir >/dev/null 2>&1; then
        _filedir '@(yaml|yml)'
        return
    fi
    local IFS=$'\n' f
    compopt -o filenames 2>/dev/null
    COMPREPLY=()
    for f in $(compgen -f -- "$cur"); do
        [[ -d $f || $f == *.yaml || $f == *.yml ]] && COMPREPLY+=("$f")
    done
}

# The number of words after word $1 of the command line that are neither
# options nor the values of the options in $2 (" --opt --opt2 "); every
# word after "--" counts.
_docdex_positionals()
{
    local at=$1 valued=$2 w i n=0
    for ((i = at + 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if [[ $valued == *" $w "* ]]; then
            [[ ${COMP_WORDS[i + 1]} == = ]] && ((i++))
            ((i++))
        elif [[ $w == -- ]]; then
            ((n += COMP_CWORD - i - 1))
            break
        elif [[ $w != -* && $w != = ]]; then
            ((n++))
        fi
    done
    echo "$n"
}

# Completes the last item of a comma-separated list $1 from the words $2.
_docdex_list()
{
    local cur=$1 words=$2
    local last=${cur##*,}
    local head=${cur%"$last"}
    COMPREPLY=($(compgen -P "$head" -W "$words" -- "$last"))
    # The list may go on: no space after an item.
    compopt -o nospace 2>/dev/null
}

_docdex()
{
    local commands="index get sample bench pin-test help"
    local global_opts="-h --help -V --version"
    local index_opts="-o --output --format --id-column --id-field --columns --duplicates --skip-bad --span --sparse-windows --bgzf --level -@ --threads --stats --verify -f --force -q --quiet -h --help"
    local get_opts="--field --format --position --random --seed --missing --batch --access --inflate-cache -h --help"
    local sample_opts="--queries --qrels --min-rel --run --depth --margin --weights --exclude-judged --random --run-ratio --triples --pairs -o --output --format --field --negatives --count --epochs --seed --start --rank --world-size --drop-last --strict --stats --no-readahead --access --inflate-cache -f --force -q --quiet -h --help"
    local bench_opts="--strategies --workload --batch -j --workers --threads --duration --samples --warmup --repeat --mem-limit --limit-by --inflate-cache --queries --qrels --run --depth --negatives --seed --synthetic --tmpdir --format -o --output --plot --baseline --tolerance --from -c --config --wide -f --force -q --quiet -h --help"
    local pin_test_opts="--pin --placement --ramdisk --cache --strategy --workload --batch -j --workers --threads --duration --samples --warmup --repeat --mem-limit --limit-by --inflate-cache --queries --qrels --run --depth --negatives --seed --synthetic --tmpdir --format -o --output --plot --baseline --tolerance --from -c --config --wide -f --force -q --quiet -h --help"
    # The options that take a value, in the next word or after "=".
    local index_valued="-o --output --format --id-column --id-field --columns --duplicates --span --bgzf --level -@ --threads"
    local get_valued="--field --format --random --seed --missing --batch --access --inflate-cache"
    local sample_valued="--queries --qrels --min-rel --run --depth --margin --weights --run-ratio --triples --pairs -o --output --format --field --negatives --count --epochs --seed --start --rank --world-size --access --inflate-cache"
    local bench_valued="--strategies --workload --batch -j --workers --threads --duration --samples --warmup --repeat --mem-limit --limit-by --inflate-cache --queries --qrels --run --depth --negatives --seed --synthetic --tmpdir --format -o --output --plot --baseline --tolerance --from -c --config"
    local pin_test_valued="--pin --placement --ramdisk --cache --strategy --workload --batch -j --workers --threads --duration --samples --warmup --repeat --mem-limit --limit-by --inflate-cache --queries --qrels --run --depth --negatives --seed --synthetic --tmpdir --format -o --output --plot --baseline --tolerance --from -c --config"

    local cur=${COMP_WORDS[COMP_CWORD]}
    local prev=""
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()

    # The command: the first word after docdex that is not an option.
    local cmd="" at i
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} != -* ]]; then
            cmd=${COMP_WORDS[i]}
            break
        fi
    done
    at=$i

    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$global_opts" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        fi
        return 0
    fi

    # The option whose value is being completed, if any: "--opt value",
    # or "--opt=value", which bash splits into "--opt" "=" "value" unless
    # COMP_WORDBREAKS lacks "=".
    local opt="" val="" prefix=""
    if [[ $cur == --*=* ]]; then
        opt=${cur%%=*}
        val=${cur#*=}
        prefix=$opt=
    elif [[ $cur == = && $prev == --* ]]; then
        opt=$prev
    elif [[ $prev == = ]] && ((COMP_CWORD > 2)); then
        opt=${COMP_WORDS[COMP_CWORD - 2]}
        val=$cur
    elif [[ $prev == -* ]]; then
        opt=$prev
        val=$cur
    fi

    local valued
    case $cmd in
    index) valued=" $index_valued " ;;
    get) valued=" $get_valued " ;;
    sample) valued=" $sample_valued " ;;
    bench) valued=" $bench_valued " ;;
    pin-test) valued=" $pin_test_valued " ;;
    *) valued=" " ;;
    esac
    if [[ -n $opt && $valued == *" $opt "* ]]; then
        case $cmd:$opt in
        index:-o | index:--output | index:--bgzf)
            _docdex_files "$val"
            ;;
        index:--level)
            COMPREPLY=($(compgen -W "1 2 3 4 5 6 7 8 9 10 11 12" -- "$val"))
            ;;
        index:--format)
            COMPREPLY=($(compgen -W "auto tsv jsonl trec" -- "$val"))
            ;;
        index:--duplicates)
            COMPREPLY=($(compgen -W "error first last" -- "$val"))
            ;;
        get:--format)
            COMPREPLY=($(compgen -W "raw tsv jsonl" -- "$val"))
            ;;
        get:--missing)
            COMPREPLY=($(compgen -W "warn skip" -- "$val"))
            ;;
        get:--access | sample:--access)
            COMPREPLY=($(compgen -W "auto mmap pread" -- "$val"))
            ;;
        sample:--queries | sample:--qrels | sample:--run | sample:--triples | sample:-o | sample:--output)
            _docdex_files "$val"
            ;;
        sample:--format)
            COMPREPLY=($(compgen -W "tsv ids jsonl tevatron flagembedding" -- "$val"))
            ;;
        sample:--pairs)
            COMPREPLY=($(compgen -W "all query" -- "$val"))
            ;;
        sample:--weights)
            COMPREPLY=($(compgen -W "uniform rank" -- "$val"))
            ;;
        bench:--strategies)
            _docdex_list "$val" "memory stdio pread mmap gzip bgzf gzip-cached bgzf-cached all"
            ;;
        bench:--workload | pin-test:--workload)
            COMPREPLY=($(compgen -W "triples random scan" -- "$val"))
            ;;
        bench:--format | pin-test:--format)
            COMPREPLY=($(compgen -W "table csv json markdown" -- "$val"))
            ;;
        bench:--queries | bench:--qrels | bench:--run | bench:-o | bench:--output | bench:--plot | \
            bench:--baseline | bench:--from | pin-test:--queries | pin-test:--qrels | pin-test:--run | \
            pin-test:-o | pin-test:--output | pin-test:--plot | pin-test:--baseline | pin-test:--from)
            _docdex_files "$val"
            ;;
        bench:--tmpdir | pin-test:--tmpdir | pin-test:--ramdisk)
            _docdex_dirs "$val"
            ;;
        bench:-c | bench:--config | pin-test:-c | pin-test:--config)
            _docdex_yaml_files "$val"
            ;;
        pin-test:--pin)
            _docdex_list "$val" "none buffers populate corpus cuda all"
            ;;
        pin-test:--placement)
            _docdex_list "$val" "disk ramdisk"
            ;;
        pin-test:--cache)
            _docdex_list "$val" "warm cold"
            ;;
        pin-test:--strategy)
            COMPREPLY=($(compgen -W "memory stdio pread mmap gzip bgzf gzip-cached bgzf-cached" -- "$val"))
            ;;
        bench:--limit-by | pin-test:--limit-by)
            COMPREPLY=($(compgen -W "cgroup projection" -- "$val"))
            ;;
        esac
        # Numbers, names and field lists have nothing to complete.
        if [[ -n $prefix ]]; then
            for i in "${!COMPREPLY[@]}"; do
                COMPREPLY[i]=$prefix${COMPREPLY[i]}
            done
        fi
        return 0
    fi

    case $cmd in
    index)
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$index_opts" -- "$cur"))
        else
            _docdex_files "$cur"
        fi
        ;;
    get | sample | bench | pin-test)
        if [[ $cur == -* ]]; then
            local opts=${cmd//-/_}_opts
            COMPREPLY=($(compgen -W "${!opts}" -- "$cur"))
            return 0
        fi
        # The first word that is neither an option nor an option's value
        # is the corpus or index (get: the words after it are ids; bench
        # and pin-test make a synthetic corpus without one).
        (($(_docdex_positionals "$at" "$valued") == 0)) && _docdex_files "$cur"
        ;;
    help)
        ((at == COMP_CWORD - 1)) &&
            COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        ;;
    esac
    return 0
}

complete -F _docdex docdex
