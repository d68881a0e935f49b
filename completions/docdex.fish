# fish completion for docdex(1): the commands, each command's options, the
# values of options that take one of a fixed list, and file names where a
# file is expected.

set -l docdex_commands index get sample bench pin-test help

# No command yet: the commands and the global options.
complete -c docdex -f
complete -c docdex -n "not __fish_seen_subcommand_from $docdex_commands" -a index -d 'build an index over corpus files (or show or verify one)'
complete -c docdex -n "not __fish_seen_subcommand_from $docdex_commands" -a get -d 'print documents by id, by position or at random'
complete -c docdex -n "not __fish_seen_subcommand_from $docdex_commands" -a sample -d 'training triples from queries, qrels and runs'
complete -c docdex -n "not __fish_seen_subcommand_from $docdex_commands" -a bench -d 'throughput and memory of the loading strategies'
complete -c docdex -n "not __fish_seen_subcommand_from $docdex_commands" -a pin-test -d 'what pinned memory, workers and a RAM disk do for loading'
complete -c docdex -n "not __fish_seen_subcommand_from $docdex_commands" -a help -d 'show the usage of docdex or of a command'
complete -c docdex -n "not __fish_seen_subcommand_from $docdex_commands" -s h -l help -d 'show the usage and the list of commands'
complete -c docdex -n "not __fish_seen_subcommand_from $docdex_commands" -s V -l version -d 'show the version and how docdex was built'

# docdex help COMMAND, each with what it does.
set -l docdex_help_arg '__fish_seen_subcommand_from help; and test (count (commandline -opc)) -eq 2'
complete -c docdex -n $docdex_help_arg -a index -d 'build an index over corpus files (or show or verify one)'
complete -c docdex -n $docdex_help_arg -a get -d 'print documents by id, by position or at random'
complete -c docdex -n $docdex_help_arg -a sample -d 'training triples from queries, qrels and runs'
complete -c docdex -n $docdex_help_arg -a bench -d 'throughput and memory of the loading strategies'
complete -c docdex -n $docdex_help_arg -a pin-test -d 'what pinned memory, workers and a RAM disk do for loading'
complete -c docdex -n $docdex_help_arg -a help -d 'show the usage of docdex or of a command'

# docdex index: corpus files (or an index, with --stats and --verify).
complete -c docdex -n '__fish_seen_subcommand_from index' -F
complete -c docdex -n '__fish_seen_subcommand_from index' -s o -l output -r -F -d 'where to write the index (needed for several files)'
complete -c docdex -n '__fish_seen_subcommand_from index' -l format -x -a 'auto\t"from the content (default)" tsv\t"tab-separated columns" jsonl\t"one JSON object a line" trec\t"TREC SGML documents"' -d 'corpus format'
complete -c docdex -n '__fish_seen_subcommand_from index' -l id-column -x -d 'TSV: the column holding the id, from 1'
complete -c docdex -n '__fish_seen_subcommand_from index' -l id-field -x -d 'JSONL: the key holding the id'
complete -c docdex -n '__fish_seen_subcommand_from index' -l columns -x -d 'TSV: comma-separated column names'
complete -c docdex -n '__fish_seen_subcommand_from index' -l duplicates -x -a 'error\t"fail (default)" first\t"keep the first record" last\t"keep the last record"' -d 'what to do with an id found on two records'
complete -c docdex -n '__fish_seen_subcommand_from index' -l skip-bad -d 'skip records without an id instead of failing'
complete -c docdex -n '__fish_seen_subcommand_from index' -l span -x -d 'gzip: uncompressed bytes between access points (K, M or G suffix; default 896K)'
complete -c docdex -n '__fish_seen_subcommand_from index' -l sparse-windows -d 'gzip: windows as index format version 2 kept them, for older docdex'
complete -c docdex -n '__fish_seen_subcommand_from index' -l bgzf -r -F -d 'rewrite the file as BGZF into this file, then index that'
complete -c docdex -n '__fish_seen_subcommand_from index' -l level -x -a '1\t"fastest" 2 3 4 5 6 7 8 9 10 11\t"default" 12\t"smallest"' -d 'BGZF: compression level'
complete -c docdex -n '__fish_seen_subcommand_from index' -s @ -l threads -x -d 'BGZF: threads compressing blocks (default 1)'
complete -c docdex -n '__fish_seen_subcommand_from index' -l stats -d 'print what an index holds, as TAB-separated lines'
complete -c docdex -n '__fish_seen_subcommand_from index' -l verify -d 'check the index against its corpus'
complete -c docdex -n '__fish_seen_subcommand_from index' -s f -l force -d 'replace an existing output that is not a docdex index'
complete -c docdex -n '__fish_seen_subcommand_from index' -s q -l quiet -d 'no progress bar and no summary line'
complete -c docdex -n '__fish_seen_subcommand_from index' -s h -l help -d 'show the usage and options'

# Whether no corpus or index was given yet to the command $argv[1]: no
# word after it that is neither an option nor the value of one of the
# options $argv[2..-1].
function __docdex_needs_corpus
    set -l cmd $argv[1]
    set -l valued $argv[2..-1]
    set -l words (commandline -opc)
    set -l seen 0
    set -l skip 0
    for w in $words[2..-1]
        if test $seen -eq 0
            test "$w" = $cmd; and set seen 1
            continue
        end
        if test $skip -eq 1
            set skip 0
            continue
        end
        if contains -- $w $valued
            set skip 1
        else if not string match -q -- '-*' $w
            return 1
        end
    end
    return 0
end
# The options of bench and pin-test that take a value.
set -g __docdex_matrix_valued --workload --batch -j --workers --threads --duration --samples --warmup --repeat --mem-limit --limit-by --inflate-cache --queries --qrels --run --depth --negatives --seed --synthetic --tmpdir --format -o --output --plot --baseline --tolerance --from -c --config

# docdex get: the corpus or index, then ids (nothing to complete).
complete -c docdex -n '__fish_seen_subcommand_from get; and __docdex_needs_corpus get --field --format --random --seed --missing --batch --access --inflate-cache' -F
complete -c docdex -n '__fish_seen_subcommand_from get' -l field -x -d 'print these fields, joined by a space'
complete -c docdex -n '__fish_seen_subcommand_from get' -l format -x -a 'raw\t"the record as it is (default)" tsv\t"id, a TAB and the text" jsonl\t"a JSON object with id and text"' -d 'output format'
complete -c docdex -n '__fish_seen_subcommand_from get' -l position -d 'read 0-based positions in corpus order, not ids'
complete -c docdex -n '__fish_seen_subcommand_from get' -l random -x -d 'print N distinct documents drawn at random'
complete -c docdex -n '__fish_seen_subcommand_from get' -l seed -x -d 'seed for the random draw'
complete -c docdex -n '__fish_seen_subcommand_from get' -l missing -x -a 'warn\t"say so and exit with status 1 (default)" skip\t"pass over it in silence"' -d 'what to do with an id not in the corpus'
complete -c docdex -n '__fish_seen_subcommand_from get' -l batch -x -d 'look up to N ids together, reading their records in file order (default 1024)'
complete -c docdex -n '__fish_seen_subcommand_from get sample bench pin-test' -l inflate-cache -x -d 'share what is inflated from a gzip or BGZF corpus, in a cache of SIZE in /dev/shm'
complete -c docdex -n '__fish_seen_subcommand_from get' -l access -x -a 'auto\t"the mapping while the records are in memory, pread while they are not (default)" mmap\t"the shared mapping" pread\t"a copy of each record"' -d 'how records of a plain corpus are read'
complete -c docdex -n '__fish_seen_subcommand_from get' -s h -l help -d 'show the usage and options'

# docdex sample: the corpus or index, one only (none needed with --format ids).
complete -c docdex -n '__fish_seen_subcommand_from sample; and __docdex_needs_corpus sample --queries --qrels --min-rel --run --depth --margin --weights --run-ratio --triples --pairs -o --output --format --field --negatives --count --epochs --seed --start --rank --world-size --access --inflate-cache' -F
complete -c docdex -n '__fish_seen_subcommand_from sample' -l queries -r -F -d 'query texts: qid TAB text, JSONL or TREC topics'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l qrels -r -F -d 'judgements: TREC or BEIR qrels'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l min-rel -x -d 'a judgement of N or more is a positive (default 1)'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l run -r -F -d 'draw negatives from a run, TREC or MS MARCO (qid TAB pid TAB rank)'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l depth -x -d 'keep the top K places of the run of each query, or places A-B, by score or rank (default all)'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l margin -x -d 'a run negative scores at most the run score of its positive less M, or less P% (TREC runs)'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l weights -x -a 'uniform\t"every candidate alike (default)" rank\t"place p with weight 1/p"' -d 'how a negative is drawn among the run candidates'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l exclude-judged -d 'no judged document is a negative, whatever its relevance'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l random -d 'draw negatives uniformly from the whole corpus'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l run-ratio -x -d 'with a run and random negatives, the share from the run (default 0.5)'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l triples -r -F -d 'ID triples to write in the order of the file'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l pairs -x -a 'all\t"every (query, positive) pair once (default)" query\t"each query once, its positives in turn"' -d 'what an epoch visits'
complete -c docdex -n '__fish_seen_subcommand_from sample' -s o -l output -r -F -d 'write to this file, replaced only once complete'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l format -x -a 'tsv\t"query, positive and negative texts (default)" ids\t"their ids" jsonl\t"a JSON object with ids, texts and the epoch" tevatron\t"the training JSONL of Tevatron" flagembedding\t"the fine-tuning JSONL of FlagEmbedding"' -d 'output format'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l field -x -d 'the document fields to print, joined by a space'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l negatives -x -d 'negatives per triple (1 to 1024, default 1)'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l count -x -d 'triples in all, over every shard'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l epochs -x -d 'passes over all pairs, or over the triples file (default 1)'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l seed -x -d 'seed for the draws'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l start -x -d 'begin at this triple of the whole sequence, to resume a job (default 0)'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l rank -x -d 'the shard of this process, from 0 (default $RANK, or 0)'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l world-size -x -d 'number of shards, each as long, the last padded (default $WORLD_SIZE, or 1)'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l drop-last -d 'leave out the remainder instead of padding the last shards'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l strict -d 'stop at the first bad input line or an input shaped like another kind'
complete -c docdex -n '__fish_seen_subcommand_from sample' -s q -l quiet -d 'no progress bar'
complete -c docdex -n '__fish_seen_subcommand_from sample' -s f -l force -d 'replace the -o file where one exists'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l stats -d 'print what was read and written to stderr'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l no-readahead -d 'do not read the documents of the next batch ahead'
complete -c docdex -n '__fish_seen_subcommand_from sample' -l access -x -a 'auto\t"the mapping while the records are in memory, pread while they are not (default)" mmap\t"the shared mapping" pread\t"a copy of each record"' -d 'how records of a plain corpus are read'
complete -c docdex -n '__fish_seen_subcommand_from sample' -s h -l help -d 'show the usage and options'

# docdex bench: a corpus or index, one at most (without one, a synthetic
# corpus is made).
# The loading strategies, for a comma-separated list.
function __docdex_bench_strategies
    printf '%s\t%s\n' memory 'the whole corpus in the memory of each worker' \
        stdio 'a private table of offsets, fseek and a line read' \
        pread 'the shared index, pread for the bytes' \
        mmap 'the index and the corpus mapped and shared' \
        gzip 'the shared index over a gzip corpus' \
        bgzf 'the shared index over a BGZF corpus' \
        gzip-cached 'gzip through the inflate cache the workers share' \
        bgzf-cached 'bgzf through the inflate cache the workers share' \
        all 'all eight'
end
complete -c docdex -n '__fish_seen_subcommand_from bench; and __docdex_needs_corpus bench --strategies $__docdex_matrix_valued' -F
complete -c docdex -n '__fish_seen_subcommand_from bench' -l strategies -x -a '(__fish_complete_list , __docdex_bench_strategies)' -d 'loading strategies to compare (default all that apply)'
# The options bench and pin-test share.
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l workload -x -a 'triples\t"a query, a positive and negatives (default)" random\t"a document at random" scan\t"the next document in corpus order"' -d 'what a sample is'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l batch -x -d 'samples per batch (1 to 65536, default 32)'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -s j -l workers -x -d 'numbers of worker processes, as 1,2,4,8 (default 1)'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l threads -x -d 'numbers of loader threads in each worker (default 1)'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l duration -x -d 'measured seconds per repetition (default 2)'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l samples -x -d 'measure N samples per worker instead of a duration'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l warmup -x -d 'unmeasured seconds before the measured part (default 0.5)'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l repeat -x -d 'repetitions of each cell (default 3)'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l mem-limit -x -d 'the memory a cell\'s workers may take'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l limit-by -x -a 'cgroup\t"the workers run in a memory cgroup of that size" projection\t"a cell projected over it is reported oom and not run"' -d 'how --mem-limit holds'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l queries -r -F -d 'query texts: qid TAB text, JSONL or TREC topics'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l qrels -r -F -d 'judgements: the positives of the triples'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l run -r -F -d 'draw negatives from a TREC or MS MARCO run'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l depth -x -d 'keep the top K run lines of each query, by score or rank (default all)'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l negatives -x -d 'negatives per triple (1 to 1024, default 1)'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l seed -x -d 'seed for the draws (default 0)'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l synthetic -x -d 'the synthetic corpus made without a corpus: passages:N, docs:N or a size'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l tmpdir -x -a '(__fish_complete_directories)' -d 'where the temporary directory goes (default $TMPDIR, or /tmp)'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l format -x -a 'table\t"for people (default)" csv\t"one row a cell" json\t"everything, for a later baseline" markdown\t"a Markdown table"' -d 'report format'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -s o -l output -r -F -d 'write the report to this file, replaced only once complete'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l plot -r -F -d 'samples/s and memory against workers, as SVG'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l baseline -r -F -d 'compare with an earlier JSON report, exit 3 on a regression'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l tolerance -x -d 'what the baseline comparison forgives, in percent (default 10)'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l from -r -F -d 'report an earlier JSON report instead of measuring'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -s c -l config -k -x -a '(__fish_complete_suffix .yaml)' -d 'read options from a YAML experiment file'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -l wide -d 'the table with every column'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -s f -l force -d 'replace an existing report or plot file'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -s q -l quiet -d 'no table when writing a report file, no progress'
complete -c docdex -n '__fish_seen_subcommand_from bench pin-test' -s h -l help -d 'show the usage and options'

# docdex pin-test: a corpus or index, one at most (without one, a synthetic
# corpus is made).
# The pinning modes, for a comma-separated list.
function __docdex_pin_test_pins
    printf '%s\t%s\n' none 'nothing pinned, the reference' \
        buffers 'batch buffers locked with mlock' \
        populate 'the corpus and index made resident, without locking' \
        corpus 'the corpus and index locked' \
        cuda 'batches copied to the GPU from pinned memory, and from pageable memory' \
        all 'every mode'
end
# Where the corpus is read from, for a comma-separated list.
function __docdex_pin_test_placements
    printf '%s\t%s\n' disk 'the corpus where it is' \
        ramdisk 'the corpus copied to a RAM filesystem'
end
# The page cache before each repetition, for a comma-separated list.
function __docdex_pin_test_caches
    printf '%s\t%s\n' warm 'the corpus read in first' \
        cold 'the corpus dropped from the page cache'
end
complete -c docdex -n '__fish_seen_subcommand_from pin-test; and __docdex_needs_corpus pin-test --pin --placement --ramdisk --cache --strategy $__docdex_matrix_valued' -F
complete -c docdex -n '__fish_seen_subcommand_from pin-test' -l pin -x -a '(__fish_complete_list , __docdex_pin_test_pins)' -d 'pinning modes to compare (default none,buffers,corpus,cuda)'
complete -c docdex -n '__fish_seen_subcommand_from pin-test' -l placement -x -a '(__fish_complete_list , __docdex_pin_test_placements)' -d 'where the corpus is read from (default disk,ramdisk)'
complete -c docdex -n '__fish_seen_subcommand_from pin-test' -l ramdisk -x -a '(__fish_complete_directories)' -d 'the tmpfs or ramfs directory for the copy (default /dev/shm)'
complete -c docdex -n '__fish_seen_subcommand_from pin-test' -l cache -x -a '(__fish_complete_list , __docdex_pin_test_caches)' -d 'the page cache before each repetition (default warm)'
complete -c docdex -n '__fish_seen_subcommand_from pin-test' -l strategy -x -a '(__docdex_bench_strategies | string match -v -r "^all\t")' -d 'how the workers read (default mmap, or bgzf or gzip for a compressed corpus)'
