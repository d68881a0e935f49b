#!/usr/bin/env bats
# gzip corpora: index and get straight from .gz files made by gzip, pigz,
# bgzip and docdex --bgzf; damaged and changed files.

load helpers

# The reference: the same corpus uncompressed, indexed and read by id.
plain_reference() {
	local plain=$1
	dx index -q "$plain"
	cut -f1 "$plain" | shuf --random-source=<(yes) > ids
	dx get "$plain" < ids > want
}

# get of every id (shuffled) from a gzip corpus gives the bytes get gives
# from the uncompressed one, in single reads and in batches; --verify passes.
# Under a sanitizer, whose decoder runs ten times as slow, the single reads
# (each inflating from its access point) take every seventh id; the batch
# reads still take every one.
serves_like_plain() {
	local gz=$1 one=ids want1=want
	run --separate-stderr dx index -q --span 64K "$gz"
	status_is 0
	equals "$stderr" ""
	dx get "$gz" < ids > got
	cmp got want
	if under_sanitizer; then
		awk 'NR % 7 == 1' ids > ids.some
		awk 'NR % 7 == 1' want > want.some
		one=ids.some want1=want.some
	fi
	dx get --batch 1 "$gz" < "$one" > got1
	cmp got1 "$want1"
	run --separate-stderr dx index -q --verify "$gz"
	status_is 0
}

@test "gzip, pigz, multi-member, bgzip and --bgzf files serve what the plain file does" {
	"$DX_SYNTH" --kind documents --count 1500 --seed 2 -o d.tsv
	plain_reference d.tsv
	gzip -6 -c d.tsv > gzip.tsv.gz
	serves_like_plain gzip.tsv.gz
	pigz -p 2 -c d.tsv > pigz.tsv.gz
	serves_like_plain pigz.tsv.gz
	head -n 600 d.tsv | gzip -1 > multi.tsv.gz
	sed -n 601,601p d.tsv | gzip -9 >> multi.tsv.gz
	tail -n +602 d.tsv | gzip >> multi.tsv.gz
	serves_like_plain multi.tsv.gz
	bgzip -c d.tsv > bgzip.tsv.gz
	serves_like_plain bgzip.tsv.gz
	run dx index --stats bgzip.tsv.gz
	[[ $output == *$'\tok\tbgzf\t'"$(stat -c %s d.tsv)"$'\t'* ]]
	run --separate-stderr dx index -q --bgzf own.tsv.gz d.tsv
	status_is 0
	serves_like_plain own.tsv.gz
}

@test "a file of many small gzip members, headers with every field: reads from a member's start serve, and check its trailer, under either codec" {
	"$DX_SYNTH" --kind passages --count 12000 --seed 4 -o p.tsv
	plain_reference p.tsv
	# 48 members of 250 records (some 90 KB), each header with an extra
	# field (not BGZF's), a name, a comment and the header's CRC; where
	# each member ends.
	python3 - <<-'EOF'
		import struct, zlib
		lines = open("p.tsv", "rb").read().splitlines(keepends=True)
		ends = []
		with open("mm.tsv.gz", "wb") as out:
		    for k in range(0, len(lines), 250):
		        data = b"".join(lines[k:k + 250])
		        extra = b"XY" + struct.pack("<H", 3) + b"abc"
		        head = (b"\x1f\x8b\x08\x1e" + bytes(4) + b"\x00\x03" + struct.pack("<H", len(extra)) + extra
		                + b"part%d\x00" % k + b"a comment\x00")
		        head += struct.pack("<H", zlib.crc32(head) & 0xFFFF)
		        c = zlib.compressobj(6, zlib.DEFLATED, -15)
		        out.write(head + c.compress(data) + c.flush() + struct.pack("<II", zlib.crc32(data), len(data)))
		        ends.append(out.tell())
		open("ends", "w").write(" ".join(map(str, ends)) + "\n")
	EOF
	gzip -t mm.tsv.gz
	cmp <(gzip -dc mm.tsv.gz) p.tsv
	dx index -q mm.tsv.gz
	# A point at each member's start and none between (a member is less
	# than a span): every read starts at a member's header.
	equals "$(dx index --stats mm.tsv.gz | awk -F'\t' '$1 == "source" { print $9 }')" 48
	# Under a sanitizer, every seventh id (as serves_like_plain).
	local c one=ids want1=want
	if under_sanitizer; then
		awk 'NR % 7 == 1' ids > ids.some
		awk 'NR % 7 == 1' want > want.some
		one=ids.some want1=want.some
	fi
	for c in zlib default; do
		DOCDEX_CODEC=$c dx get --batch 1 mm.tsv.gz < "$one" > got
		cmp got "$want1"
	done
	# A member in the second half whose trailer lies outside the index's
	# fingerprint (a file of up to 1 MiB it hashes whole); its first and
	# last records.  The last is read with the byte after it, in the next
	# member: through the trailer.
	local k end first last
	read -r k end < <(python3 - "$BATS_TEST_DIRNAME" <<-'EOF'
		import os, sys
		sys.path.insert(0, sys.argv[1])
		from bgzf_blocks import unseen
		S = os.path.getsize("mm.tsv.gz")
		ends = [int(e) for e in open("ends").read().split()]
		print(*next((k, e) for k, e in enumerate(ends) if k >= len(ends) // 2 and unseen(S, e - 8, 8)))
	EOF
	)
	first=$(sed -n "$((k * 250 + 1))p" p.tsv | cut -f1)
	last=$(sed -n "$((k * 250 + 250))p" p.tsv | cut -f1)
	# Its CRC changed, then its size: the last record's read fails with
	# one line under either codec, the first still serves.
	local at
	for at in $((end - 8)) $((end - 4)); do
		rm -f bad.tsv.gz*
		cp mm.tsv.gz bad.tsv.gz
		dx index -q bad.tsv.gz
		touch -r bad.tsv.gz when
		flip_byte bad.tsv.gz "$at"
		touch -r when bad.tsv.gz
		for c in zlib default; do
			equals "$(DOCDEX_CODEC=$c dx get bad.tsv.gz "$first")" "$(sed -n "$((k * 250 + 1))p" p.tsv)"
			run --separate-stderr env DOCDEX_CODEC=$c "$DOCDEX" get bad.tsv.gz "$last"
			status_is 1
			[[ $stderr =~ ^docdex\ get:\ corrupt\ gzip\ data\ near\ compressed\ byte\ [0-9]+:\ \'bad\.tsv\.gz\'$ ]]
		done
	done
}

@test "the scan's own inflater and zlib lay the same access points, which either reads from" {
	"$DX_SYNTH" --kind documents --count 1500 --seed 3 -o d.tsv
	# Dynamic blocks at three levels, many small blocks (pigz), stored
	# blocks (random bytes in a record), the fixed code (a short file).
	gzip -1 -c d.tsv > g1.tsv.gz
	gzip -9 -c d.tsv > g9.tsv.gz
	pigz -p 2 -b 32 -c d.tsv > pz.tsv.gz
	{ head -n 700 d.tsv; printf 'x-rand\t'; head -c 200000 /dev/urandom | tr -d '\n\t\r\0'; printf '\n'; tail -n +701 d.tsv; } > r.tsv
	gzip -6 -c r.tsv > r.tsv.gz
	printf 'x-fixed\tshort\n' > f.tsv
	gzip -c f.tsv > f.tsv.gz
	local pair plain gz
	for pair in d:g1 d:g9 d:pz r:r f:f; do
		plain=${pair%%:*}.tsv gz=${pair#*:}.tsv.gz
		DOCDEX_CODEC=zlib dx index -q -f --span 64K -o "$gz.z.ddx" "$gz"
		DOCDEX_CODEC=default dx index -q -f --span 64K -o "$gz.own.ddx" "$gz"
		# The same number of points; their windows are deflated by
		# different codecs, so the two files' bytes may differ.
		equals "$(dx index --stats "$gz.own.ddx" | awk -F'\t' '$1 == "source" { print $9 }')" \
		       "$(dx index --stats "$gz.z.ddx" | awk -F'\t' '$1 == "source" { print $9 }')"
		cut -f1 "$plain" | shuf --random-source=<(yes) > ids
		dx index -q -f "$plain"
		dx get "$plain" < ids > want
		DOCDEX_CODEC=zlib dx get "$gz.own.ddx" < ids > a
		cmp a want
		DOCDEX_CODEC=default dx get "$gz.z.ddx" < ids > b
		cmp b want
	done
	# pigz's small blocks gave many points.
	[ "$(dx index --stats pz.tsv.gz.own.ddx | awk -F'\t' '$1 == "source" { print $9 }')" -gt 20 ]
}

@test "packed windows (the default) and sparse ones: the same points, the packed ones smaller, read alike by every codec and access" {
	"$DX_SYNTH" --kind documents --count 1500 --seed 3 -o d.tsv
	gzip -6 -c d.tsv > g6.tsv.gz
	pigz -p 2 -b 32 -c d.tsv > pz.tsv.gz
	{ head -n 700 d.tsv; printf 'x-rand\t'; head -c 200000 /dev/urandom | tr -d '\n\t\r\0'; printf '\n'; tail -n +701 d.tsv; } > r.tsv
	gzip -6 -c r.tsv > r.tsv.gz
	dx index -q d.tsv
	dx index -q r.tsv
	local pair plain gz codec access sparse packed
	for pair in d:g6 d:pz r:r; do
		plain=${pair%%:*}.tsv gz=${pair#*:}.tsv.gz
		dx index -q -f --span 64K --sparse-windows -o "$gz.sparse.ddx" "$gz"
		dx index -q -f --span 64K -o "$gz.packed.ddx" "$gz"
		# Written as version 4 only where a window is packed.
		equals "$(dx index --stats "$gz.sparse.ddx" | sed -n 2p)" "version	2"
		equals "$(dx index --stats "$gz.packed.ddx" | sed -n 2p)" "version	4"
		# The same points (field 9 of source), and windows (10) of at
		# most 0.85 the bytes, the dictionary included.
		sparse=$(dx index --stats "$gz.sparse.ddx" | awk -F'\t' '$1 == "source" { print $9, $10 }')
		packed=$(dx index --stats "$gz.packed.ddx" | awk -F'\t' '$1 == "source" { print $9, $10 }')
		equals "${packed% *}" "${sparse% *}"
		[ "${packed% *}" -gt 5 ]
		[ $((${packed#* } * 100)) -le $((${sparse#* } * 85)) ] || { echo "$gz: $packed against $sparse" >&2; false; }
		cut -f1 "$plain" | shuf --random-source=<(yes) > ids
		dx get "$plain" < ids > want
		for codec in default zlib; do
			for access in pread mmap; do
				DOCDEX_CODEC=$codec dx get --access $access "$gz.packed.ddx" < ids > got
				cmp got want
				DOCDEX_CODEC=$codec dx get --access $access "$gz.sparse.ddx" < ids > got
				cmp got want
			done
		done
	done
}

@test "an index written as version 3 of the format, its packed windows in the order first used, reads alike" {
	# Written by the docdex that wrote version 3 (tests/data/SOURCES.md),
	# which knew the file by its size, time and contents.
	cp "$DATA/packed-v3.tsv.gz" "$DATA/packed-v3.tsv.gz.ddx" .
	touch -d @1767225600 packed-v3.tsv.gz
	equals "$(dx index --stats packed-v3.tsv.gz.ddx | sed -n 2p)" "version	3"
	gzip -dc packed-v3.tsv.gz > p.tsv
	dx index -q p.tsv
	cut -f1 p.tsv | shuf --random-source=<(yes) > ids
	dx get p.tsv < ids > want
	local codec access
	for codec in default zlib; do
		for access in pread mmap; do
			DOCDEX_CODEC=$codec dx get --access $access packed-v3.tsv.gz.ddx < ids > got
			cmp got want
		done
	done
	run dx index --verify packed-v3.tsv.gz.ddx
	status_is 0
	# Built again, it is version 4, with the same points.
	dx index -q -f --span 64K -o v4.ddx packed-v3.tsv.gz
	equals "$(dx index --stats v4.ddx | sed -n 2p)" "version	4"
	equals "$(dx index --stats v4.ddx | awk -F'\t' '$1 == "source" { print $9 }')" \
		"$(dx index --stats packed-v3.tsv.gz.ddx | awk -F'\t' '$1 == "source" { print $9 }')"
	dx get v4.ddx < ids > got
	cmp got want
}

@test "packed windows with their dictionaries, two gzip files in one index" {
	# Enough points in each (span 64K) that the later windows use the
	# file's dictionary; the second file's windows lie after the first's.
	"$DX_SYNTH" --count 10000 --seed 4 -o a.tsv
	"$DX_SYNTH" --count 10000 --seed 5 -o b.tsv
	sed -i 's/^/b/' b.tsv
	gzip -k a.tsv b.tsv
	dx index -q --span 64K -o ab.ddx a.tsv.gz b.tsv.gz
	[ "$(dx index --stats ab.ddx | awk -F'\t' '$1 == "source" && $9 > 16' | wc -l)" -eq 2 ]
	cat a.tsv b.tsv > ab.tsv
	dx index -q ab.tsv
	cut -f1 ab.tsv | shuf --random-source=<(yes) | head -n 4000 > ids
	dx get ab.tsv < ids > want
	dx get ab.ddx < ids > got
	cmp got want
	run dx index --verify ab.ddx
	status_is 0
}

@test "every format gzipped, in place, with stats telling what the file is" {
	for layout in tsv jsonl-v2 beir trec; do
		"$DX_SYNTH" --kind documents --layout $layout --count 300 -o c.$layout
		gzip -k c.$layout
		dx index -q c.$layout
		dx index -q c.$layout.gz
		dx get --position c.$layout -- $(seq 0 299) > want
		dx get --position c.$layout.gz -- $(seq 0 299) > got
		cmp got want
		run dx index --stats c.$layout.gz
		[[ $output == *$'\nsource\tc.'$layout$'.gz\t'*$'\t0\t300\tok\tgzip\t'"$(stat -c %s c.$layout)"$'\t'* ]]
		[[ $output == *$'\nsection\taccess-points\t'* ]]
	done
}

@test "records that cross access points and BGZF blocks come back whole" {
	# Documents of 7 KB on average at a 64 KiB span: about one in nine
	# crosses a point.
	"$DX_SYNTH" --kind documents --count 2000 --seed 4 -o d.tsv
	plain_reference d.tsv
	gzip -c d.tsv > d.tsv.gz
	serves_like_plain d.tsv.gz
	# A record of 200 KB spans four BGZF blocks, in --bgzf output and bgzip's.
	{ head -n 10 d.tsv; printf 'LONG\t'; head -c 200000 /dev/zero | tr '\0' 'x'; echo; tail -n +11 d.tsv; } > l.tsv
	plain_reference l.tsv
	dx index -q --bgzf l.bgz l.tsv
	[ "$(gzip -dc l.bgz | wc -c)" -eq "$(stat -c %s l.tsv)" ]
	dx get l.bgz LONG | cmp - <(grep '^LONG' l.tsv)
	dx get l.bgz < ids | cmp - want
	bgzip -c l.tsv > l.tsv.gz
	dx index -q l.tsv.gz
	dx get --batch 1 l.tsv.gz < ids | cmp - want
}

@test "--bgzf writes valid gzip in blocks that end at the last record that fits, or full" {
	"$DX_SYNTH" --kind documents --count 800 -o d.tsv
	run --separate-stderr dx index --bgzf d.bgz d.tsv
	status_is 0
	gzip -dc d.bgz | cmp - d.tsv
	gzip -t d.bgz
	bgzip -t d.bgz
	# Each block but the last ends at the last record start that fits in
	# 65280 bytes, unless that leaves more than 4096 of them unused: then
	# it holds 65280.  Both kinds occur with these records (6 KB a record).
	python3 - "$BATS_TEST_DIRNAME" <<-'EOF'
		import os, sys
		sys.path.insert(0, sys.argv[1])
		from bgzf_blocks import blocks, records
		starts = [at for at, _ in records("d.tsv")]
		bl, uoff, kinds = blocks("d.bgz", "d.tsv"), 0, set()
		for off, size, isize, first in bl[:-2]:
		    fits = [s for s in starts if uoff < s <= uoff + 65280] or [uoff]
		    want = fits[-1] - uoff if 0 < 65280 - (fits[-1] - uoff) <= 4096 else 65280
		    assert isize == want, (off, isize, want)
		    kinds.add(isize == 65280)
		    uoff += isize
		assert kinds == {True, False}, kinds
		assert bl[-1][2] == 0 and uoff + bl[-2][2] == os.path.getsize("d.tsv")
	EOF
	[ -e d.bgz.ddx ]
	run dx index --stats d.bgz
	[[ $output == *$'\tok\tbgzf\t'* ]]
	# bgzip reads the blocks back at the uncompressed offset of any record.
	local line=417 off
	off=$(head -n $((line - 1)) d.tsv | wc -c)
	bgzip -r d.bgz
	equals "$(bgzip -b "$off" -s 20 d.bgz)" "$(sed -n ${line}p d.tsv | head -c 20)"
	# -o places the index; --bgzf does not overwrite its input.
	dx index -q --bgzf d2.bgz -o elsewhere.ddx d.tsv
	[ -e elsewhere.ddx ] && [ ! -e d2.bgz.ddx ]
	run --separate-stderr dx index --bgzf ./d.tsv d.tsv
	status_is 1
	equals "$stderr" "docdex index: the BGZF output is the input file: './d.tsv'"
	gzip -dc d.bgz | cmp - d.tsv
	run --separate-stderr dx index --bgzf x.bgz a b
	status_is 2
	equals "$stderr" "docdex index: --bgzf rewrites one file (see docdex index --help)"
	run --separate-stderr dx index --level 0 --bgzf x.bgz d.tsv
	status_is 2
	run --separate-stderr dx index --level 5 d.tsv
	status_is 2
	equals "$stderr" "docdex index: --level goes with --bgzf (see docdex index --help)"
}

@test "--level: 1 to 12, 11 by default; libdeflate's 10 to 12 compress smaller, zlib makes them its 9" {
	"$DX_SYNTH" --kind documents --count 1000 -o d.tsv
	dx index -q --bgzf d.bgz d.tsv
	dx index -q --bgzf d11.bgz --level 11 d.tsv
	dx index -q --bgzf d9.bgz --level 9 d.tsv
	cmp d.bgz d11.bgz
	gzip -dc d9.bgz | cmp - d.tsv
	# The suite also runs under DOCDEX_CODEC=zlib: libdeflate asked for.
	if DOCDEX_CODEC=default "$DOCDEX" --version | grep -q '^codecs: libdeflate'; then
		DOCDEX_CODEC=default dx index -q --bgzf l11.bgz --level 11 d.tsv
		DOCDEX_CODEC=default dx index -q --bgzf l9.bgz --level 9 d.tsv
		[ "$(stat -c %s l11.bgz)" -lt "$(stat -c %s l9.bgz)" ]
	fi
	DOCDEX_CODEC=zlib dx index -q --bgzf z12.bgz --level 12 d.tsv
	DOCDEX_CODEC=zlib dx index -q --bgzf z9.bgz --level 9 d.tsv
	cmp z12.bgz z9.bgz
	gzip -dc z12.bgz | cmp - d.tsv
	run --separate-stderr dx index --bgzf x.bgz --level 13 d.tsv
	status_is 2
	equals "$stderr" "docdex index: bad --level, give 1 to 12: '13' (see docdex index --help)"
	[ ! -e x.bgz ]
}

@test "BGZF written and read by either codec: the same records, valid gzip, damage found block by block" {
	"$DX_SYNTH" --kind documents --count 3000 -o d.tsv
	dx index -q d.tsv
	DOCDEX_CODEC=zlib dx index -q --bgzf z.bgz d.tsv
	DOCDEX_CODEC=default dx index -q --bgzf l.bgz d.tsv
	local f c
	for f in z.bgz l.bgz; do
		gzip -t "$f"
		bgzip -t "$f"
		gzip -dc "$f" | cmp - d.tsv
		# The index is the same whichever codec read the blocks.
		DOCDEX_CODEC=zlib dx index -q -o z.ddx "$f"
		DOCDEX_CODEC=default dx index -q -o l.ddx "$f"
		cmp z.ddx l.ddx
		for c in zlib default; do
			cmp <(cut -f1 d.tsv | shuf --random-source=d.tsv | DOCDEX_CODEC=$c dx get "$f" -) \
				<(cut -f1 d.tsv | shuf --random-source=d.tsv | dx get d.tsv -)
		done
	done
	# Bytes of one block's deflate data changed after indexing, where the
	# index's fingerprint of the file (64 blocks of 4 KiB spread evenly,
	# lib/fileutil.c) does not look: that block's reads fail with one line
	# naming the file, under both codecs; the others serve.
	cp z.bgz bad.bgz
	dx index -q bad.bgz
	local at in_block first_id
	read -r at in_block < <(python3 - "$BATS_TEST_DIRNAME" <<-'EOF'
		import os, sys
		sys.path.insert(0, sys.argv[1])
		from bgzf_blocks import blocks, unseen
		S = os.path.getsize("bad.bgz")
		assert S > 1 << 20
		bl = blocks("bad.bgz", "d.tsv")
		for off, size, isize, first in bl[len(bl) // 2:]:
		    # The record that starts the block (blocks end at records).
		    for pos in range(off + 40, off + size - 16):
		        if first is not None and unseen(S, pos, 4):
		            print(pos, first)
		            raise SystemExit
		raise SystemExit("no block outside the fingerprint")
	EOF
	)
	touch -r bad.bgz when
	printf '\377\377\377\377' | dd of=bad.bgz bs=1 seek="$at" conv=notrunc status=none
	touch -r when bad.bgz
	first_id=$(head -n 1 d.tsv | cut -f1)
	# Indexing the damaged file fails with the same line under both.
	for c in zlib default; do
		run --separate-stderr env DOCDEX_CODEC=$c "$DOCDEX" index -o bad2.ddx bad.bgz
		status_is 1
		[[ $stderr =~ ^docdex\ index:\ (corrupt\ gzip\ data|gzip\ CRC\ mismatch)\ at\ compressed\ byte\ [0-9]+:\ \'bad\.bgz\'$ ]]
		[ ! -e bad2.ddx ]
	done
	for c in zlib default; do
		equals "$(DOCDEX_CODEC=$c dx get bad.bgz "$first_id")" "$(head -n 1 d.tsv)"
		run --separate-stderr env DOCDEX_CODEC=$c "$DOCDEX" get bad.bgz "$in_block"
		status_is 1
		[[ $stderr =~ ^docdex\ get:\ (corrupt\ gzip\ data\ near|gzip\ CRC\ mismatch\ at)\ compressed\ byte\ [0-9]+:\ \'bad\.bgz\'$ ]]
	done
}

@test "a BGZF block's CRC changed: index (either codec) and get name the CRC field's offset when they read the block to its end" {
	"$DX_SYNTH" --kind documents --count 3000 -o d.tsv
	dx index -q --bgzf bad.bgz d.tsv
	dx index -q bad.bgz
	# A block in the second half whose CRC field lies outside the index's
	# fingerprint of the file, the id of the record that starts it and of
	# the one that ends it (blocks end at records).
	local crc first last
	read -r crc first last < <(python3 - "$BATS_TEST_DIRNAME" <<-'EOF'
		import sys
		sys.path.insert(0, sys.argv[1])
		from bgzf_blocks import trailer_to_damage
		off, size, isize, first, last = trailer_to_damage("bad.bgz", "d.tsv", 8)
		print(off + size - 8, first, last)
	EOF
	)
	touch -r bad.bgz when
	flip_byte bad.bgz $((crc + 1))
	touch -r when bad.bgz
	local c
	for c in zlib default; do
		run --separate-stderr env DOCDEX_CODEC=$c "$DOCDEX" index -o bad2.ddx bad.bgz
		status_is 1
		equals "$stderr" "docdex index: gzip CRC mismatch at compressed byte $crc: 'bad.bgz'"
		# The block's first record alone is inflated short of its end,
		# where the CRC can be checked: a random record needs half a
		# block on average.
		equals "$(DOCDEX_CODEC=$c dx get bad.bgz "$first" | cut -f1)" "$first"
		# The record that ends it is read with the byte after it: the
		# whole block, its CRC checked (zlib reports the member's end).
		run --separate-stderr env DOCDEX_CODEC=$c "$DOCDEX" get bad.bgz "$last"
		status_is 1
		if [ $c = default ]; then
			equals "$stderr" "docdex get: gzip CRC mismatch at compressed byte $crc: 'bad.bgz'"
		else
			[[ $stderr =~ ^docdex\ get:\ corrupt\ gzip\ data\ near\ compressed\ byte\ [0-9]+:\ \'bad\.bgz\'$ ]]
		fi
	done
}

@test "a BGZF block whose ISIZE lies, a byte short or long: a read that takes the block to its end fails, in one part or two" {
	"$DX_SYNTH" --kind documents --count 3000 -o d.tsv
	dx index -q --bgzf bad.bgz d.tsv
	dx index -q bad.bgz
	touch -r bad.bgz when
	# A block in the second half whose ISIZE field lies outside the
	# index's fingerprint, its offset, and the records that start and end it.
	local off isize_at isize first last
	read -r off isize_at isize first last < <(python3 - "$BATS_TEST_DIRNAME" <<-'EOF'
		import sys
		sys.path.insert(0, sys.argv[1])
		from bgzf_blocks import trailer_to_damage
		off, size, isize, first, last = trailer_to_damage("bad.bgz", "d.tsv", 4)
		print(off, off + size - 4, isize, first, last)
	EOF
	)
	local d c
	for d in -1 1; do
		python3 -c 'import sys; f = open("bad.bgz", "r+b"); f.seek(int(sys.argv[1])); f.write((int(sys.argv[2]) + int(sys.argv[3])).to_bytes(4, "little"))' "$isize_at" "$isize" "$d"
		touch -r when bad.bgz
		for c in zlib default; do
			# Its first record alone: inflated short of the block's end.
			equals "$(DOCDEX_CODEC=$c dx get bad.bgz "$first" | cut -f1)" "$first"
			# Its last, alone (the block inflated whole), and after its
			# first in one batch (the rest of it inflated after the part
			# the first took).
			local ids
			for ids in "$last" "$first $last"; do
				run --separate-stderr env DOCDEX_CODEC=$c "$DOCDEX" get --batch 2 bad.bgz $ids
				status_is 1
				if [ $c = default ]; then
					equals "$stderr" "docdex get: corrupt gzip data near compressed byte $off: 'bad.bgz'"
				else
					[[ $stderr =~ ^docdex\ get:\ corrupt\ gzip\ data\ near\ compressed\ byte\ [0-9]+:\ \'bad\.bgz\'$ ]]
				fi
			done
		done
	done
}

@test "--bgzf -@ N: the same file for 1, 2 and 4 threads, under either codec; -@ goes with --bgzf" {
	# Records of every size, some longer than a block.
	"$DX_SYNTH" --kind documents --count 1500 -o d.tsv
	{ cat d.tsv; printf 'long\t'; head -c 200000 /dev/zero | tr '\0' 'x'; printf '\nlast\tone\n'; } > m.tsv
	local c t
	for c in zlib default; do
		for t in 1 2 4; do
			DOCDEX_CODEC=$c dx index -q --bgzf "m-$c-$t.bgz" --threads "$t" m.tsv
		done
		cmp "m-$c-1.bgz" "m-$c-2.bgz"
		cmp "m-$c-1.bgz" "m-$c-4.bgz"
		DOCDEX_CODEC=$c dx index -q --bgzf "m-$c-at.bgz" -@ 3 m.tsv
		cmp "m-$c-1.bgz" "m-$c-at.bgz"
		gzip -t "m-$c-4.bgz"
		bgzip -t "m-$c-4.bgz"
		gzip -dc "m-$c-4.bgz" | cmp - m.tsv
		equals "$(dx get "m-$c-4.bgz" last)" "$(printf 'last\tone')"
	done
	run --separate-stderr dx index -@ 2 m.tsv
	status_is 2
	equals "$stderr" "docdex index: --threads goes with --bgzf (see docdex index --help)"
	run --separate-stderr dx index --bgzf x.bgz --threads 0 m.tsv
	status_is 2
	equals "$stderr" "docdex index: bad --threads, give 1 to 256: '0' (see docdex index --help)"
	[ ! -e x.bgz ]
}

@test "the real gzipped samples: MS MARCO v2, segmented v2, BEIR, Mr.TyDi, an empty shard" {
	for f in msmarco-v2-doc.json.gz msmarco-v2-passage.json.gz msmarco-v2-doc-segmented-0.json.gz \
		beir-segment1.jsonl.gz mrtydi-ja.jsonl.gz mrtydi-ar.jsonl.gz; do
		use_data "$f"
		gzip -dc "$f" > plain.json
		python3 "$BATS_TEST_DIRNAME/expect_records.py" jsonl plain.json ids expected
		run --separate-stderr dx index -q "$f"
		status_is 0
		dx get "$f" < ids > got
		cmp got expected
	done
	run --separate-stderr dx get --field title mrtydi-ja.jsonl.gz "5#0"
	equals "$output" "アンパサンド"
	run --separate-stderr dx index -q --verify msmarco-v2-doc.json.gz
	status_is 0
	use_data msmarco-v2.1-passage-empty.json.gz
	run --separate-stderr dx index --format jsonl msmarco-v2.1-passage-empty.json.gz
	status_is 0
	run dx index --stats msmarco-v2.1-passage-empty.json.gz
	[[ $output == *$'\nrecords\t0\n'* ]]
}

@test "MS MARCO v2 bundles: many gzipped files in one index, ids checked against offsets" {
	"$DX_SYNTH" --kind documents --layout jsonl-v2 --count 400 --seed 1 -o msmarco_doc_00
	"$DX_SYNTH" --kind documents --layout jsonl-v2 --count 400 --seed 2 --bundle 1 -o msmarco_doc_01
	gzip msmarco_doc_00 msmarco_doc_01
	run --separate-stderr dx index -o v2.ddx msmarco_doc_00.gz msmarco_doc_01.gz
	status_is 0
	run --separate-stderr dx index --verify v2.ddx
	status_is 0
	local id
	id=$(gzip -dc msmarco_doc_01.gz | sed -n 10p | grep -o '"docid": "[^"]*"' | cut -d'"' -f4)
	[[ $id == msmarco_doc_01_* ]]
	run --separate-stderr dx get --field docid v2.ddx "$id"
	equals "$output" "$id"
	# A bundle under another bundle's name: its ids do not fit.
	cp msmarco_doc_00.gz msmarco_doc_07.gz
	dx index -q msmarco_doc_07.gz
	run --separate-stderr dx index --verify msmarco_doc_07.gz
	status_is 1
	equals "$stderr" "docdex index: record 0 differs from the index: its MS MARCO v2 id names bundle 00: 'msmarco_doc_07.gz:1'"
}

@test "a subset of MS MARCO v2 (judged passages) verifies, its ids' offsets counted; a bundle's name holds it to them" {
	"$DX_SYNTH" --kind passages --layout jsonl-v2 --count 300 --seed 3 -o msmarco_passage_00
	# Every third passage, as a judged subset is made; plain and gzipped.
	awk 'NR % 3 == 1' msmarco_passage_00 > judged.jsonl
	gzip -k judged.jsonl
	local f
	for f in judged.jsonl judged.jsonl.gz; do
		dx index -q "$f"
		run --separate-stderr dx index --verify "$f"
		status_is 0
		equals "$output" "ok	100 records	$(stat -c %s "$f") bytes"
		equals "$stderr" "docdex index: 99 MS MARCO v2 ids name a byte offset where their record is not (a subset of a bundle?), the first at: '$f:2'"
	done
	# The whole bundle under its own name: every offset holds, nothing said.
	dx index -q msmarco_passage_00
	run --separate-stderr dx index --verify msmarco_passage_00
	status_is 0
	equals "$stderr" ""
	# The subset under a bundle's name: name and content disagree, refused.
	cp judged.jsonl msmarco_passage_00.json
	dx index -q msmarco_passage_00.json
	run --separate-stderr dx index --verify msmarco_passage_00.json
	status_is 1
	[[ $stderr == "docdex index: record 1 differs from the index: its MS MARCO v2 id names byte "*", the record starts at byte "*": 'msmarco_passage_00.json:2'" ]]
}

@test "a gzip file that begins with an empty member (gzip of nothing, then cat) indexes and serves" {
	printf '1\tone\n2\ttwo\n' > c.tsv
	{ printf '' | gzip; gzip -c c.tsv; } > lead.tsv.gz
	{ printf '' | gzip; printf '' | gzip; printf '1\tone\n' | gzip; printf '' | gzip; printf '2\ttwo\n' | gzip; printf '' | gzip; } > many.tsv.gz
	local f
	for f in lead.tsv.gz many.tsv.gz; do
		run --separate-stderr dx index -q "$f"
		status_is 0
		run --separate-stderr dx get "$f" 2 1
		status_is 0
		equals "$output" "$(printf '2\ttwo\n1\tone')"
		run --separate-stderr dx index --verify "$f"
		status_is 0
	done
}

@test "ids asked twice in a batch of a gzip corpus are read once: no more decompression than asking each once" {
	[ "$CHECKER" != valgrind ] || skip "strace cannot watch valgrind's reads of the corpus alone"
	"$DX_SYNTH" --count 50000 -o c.tsv
	gzip c.tsv
	dx index -q c.tsv.gz
	python3 -c 'import random; r = random.Random(7); print("\n".join(str(i) for i in r.sample(range(50000), 200)))' > once
	cat once once > twice
	# The compressed bytes read (pread) are the measure of the work.
	local n1 n2
	env "$NO_LEAK_CHECK" strace -e trace=pread64 -o once.trace "$DOCDEX" get c.tsv.gz < once > once.out
	env "$NO_LEAK_CHECK" strace -e trace=pread64 -o twice.trace "$DOCDEX" get c.tsv.gz < twice > twice.out
	n1=$(grep -c '^pread64' once.trace)
	n2=$(grep -c '^pread64' twice.trace)
	equals "$n2" "$n1"
	cmp twice.out <(cat once.out once.out)
	# Records one after another are read in one run of decompression too,
	# though each is read with the bytes after it, where the next starts.
	seq 20000 20199 > run
	env "$NO_LEAK_CHECK" strace -e trace=pread64 -o run.trace "$DOCDEX" get c.tsv.gz < run > run.out
	[ "$(grep -c '^pread64' run.trace)" -lt 80 ]
	cmp run.out <(gzip -dc c.tsv.gz | sed -n '20001,20200p')
}

@test "damaged gzip files: one clear line with the file and the offset, no index" {
	"$DX_SYNTH" --count 20000 -o p.tsv
	gzip -c p.tsv > good.gz
	local size
	size=$(stat -c %s good.gz)

	head -c 300000 good.gz > truncated.tsv.gz
	run --separate-stderr dx index truncated.tsv.gz
	status_is 1
	equals "$stderr" "docdex index: truncated gzip file, it ends inside a member at compressed byte 300000: 'truncated.tsv.gz'"
	[ ! -e truncated.tsv.gz.ddx ]

	cp good.gz crc.tsv.gz
	flip_byte crc.tsv.gz $((size - 7))
	run --separate-stderr dx index crc.tsv.gz
	status_is 1
	equals "$stderr" "docdex index: gzip CRC mismatch at compressed byte $((size - 8)): 'crc.tsv.gz'"
	[ ! -e crc.tsv.gz.ddx ]

	cp good.gz len.tsv.gz
	flip_byte len.tsv.gz $((size - 2))
	run --separate-stderr dx index len.tsv.gz
	status_is 1
	equals "$stderr" "docdex index: gzip length mismatch at compressed byte $((size - 4)): 'len.tsv.gz'"

	cp good.gz body.tsv.gz
	printf '\377\377\377\377' | dd of=body.tsv.gz bs=1 seek=1000 conv=notrunc status=none
	# Damage inside the data: zlib's error, the CRC at the member's end, or a
	# record the garbage broke first, whichever comes first.
	run --separate-stderr dx index body.tsv.gz
	status_is 1
	[[ $stderr == "docdex index: "*": 'body.tsv.gz"* ]]
	[ "$(wc -l <<<"$stderr")" -eq 1 ]
	[ ! -e body.tsv.gz.ddx ]

	cp p.tsv plain.tsv.gz
	run --separate-stderr dx index plain.tsv.gz
	status_is 1
	equals "$stderr" "docdex index: not a gzip file (no gzip header at byte 0), though named so: 'plain.tsv.gz'"
	[ ! -e plain.tsv.gz.ddx ]

	# A member with a wrong CRC, then one cut short, both in one read of
	# the inflating thread: the CRC, checked by the other thread, is told
	# first, as the first fault in the file; right, the cut.
	head -n 100 p.tsv | gzip -c > one.gz
	tail -n +101 p.tsv | gzip -c > two.gz
	local one
	one=$(stat -c %s one.gz)
	{ cat one.gz; head -c 5000 two.gz; } > cut.tsv.gz
	run --separate-stderr dx index cut.tsv.gz
	status_is 1
	equals "$stderr" "docdex index: truncated gzip file, it ends inside a member at compressed byte $((one + 5000)): 'cut.tsv.gz'"
	flip_byte cut.tsv.gz $((one - 7))
	run --separate-stderr dx index cut.tsv.gz
	status_is 1
	equals "$stderr" "docdex index: gzip CRC mismatch at compressed byte $((one - 8)): 'cut.tsv.gz'"
	[ ! -e cut.tsv.gz.ddx ]

	# Garbage after the last member: a warning, as gzip gives, and the index.
	{ cat good.gz; echo "trailing junk"; } > junk.tsv.gz
	run --separate-stderr dx index junk.tsv.gz
	status_is 0
	equals "$stderr" "docdex index: garbage after the last gzip member at compressed byte $size, ignored: 'junk.tsv.gz'"
	run dx get junk.tsv.gz 19999
	equals "$output" "$(tail -n 1 p.tsv)"
}

@test "a source recompressed or changed since indexing is refused as stale" {
	"$DX_SYNTH" --count 5000 -o p.tsv
	gzip -6 -c p.tsv > p.tsv.gz
	dx index -q p.tsv.gz
	gzip -9 -c p.tsv > p.tsv.gz
	run --separate-stderr dx get p.tsv.gz 7
	status_is 1
	equals "$stderr" "docdex get: corpus changed since it was indexed (its size), run docdex index again: 'p.tsv.gz'"
	# Same bytes, other time: also refused.
	dx index -q p.tsv.gz
	touch -d '2001-01-01' p.tsv.gz
	run --separate-stderr dx get p.tsv.gz 7
	equals "$stderr" "docdex get: corpus changed since it was indexed (its modification time), run docdex index again: 'p.tsv.gz'"
}

@test "--span places the points; --batch changes nothing but speed" {
	"$DX_SYNTH" --count 40000 -o p.tsv
	gzip -c p.tsv > p.tsv.gz
	dx index -q --span 64K p.tsv.gz
	local many few
	many=$(dx index --stats p.tsv.gz | awk -F'\t' '$1 == "source" { print $9 }')
	dx index -q --span 4M p.tsv.gz
	few=$(dx index --stats p.tsv.gz | awk -F'\t' '$1 == "source" { print $9 }')
	[ "$many" -gt $((10 * few)) ]
	[ "$few" -ge 1 ]
	run --separate-stderr dx index --span 1000 p.tsv.gz
	status_is 2
	equals "$stderr" "docdex index: bad --span, give a size of at least 64K: '1000' (see docdex index --help)"
	shuf -n 500 --random-source=<(yes) <(seq 0 39999) > ids
	dx get --batch 1 p.tsv.gz < ids > a
	dx get --batch 7 p.tsv.gz < ids > b
	dx get p.tsv.gz < ids > c
	cmp a b && cmp a c
	run --separate-stderr dx get --batch 0 p.tsv.gz 1
	status_is 2
}

@test "points lie a span apart on average, whatever the blocks' size" {
	# gzip -6 makes blocks of about 190 KiB of these passages: a point
	# laid at the first boundary a span after the one before would lie 384
	# KiB from it at a span of 256K (36 points for these 14 MB); a span
	# after the one before was due, 256 KiB on average.
	"$DX_SYNTH" --count 40000 -o p.tsv
	gzip -6 -c p.tsv > p.tsv.gz
	dx index -q --span 256K p.tsv.gz
	local points size
	points=$(dx index --stats p.tsv.gz | awk -F'\t' '$1 == "source" { print $9 }')
	size=$(stat -c %s p.tsv)
	echo "$points points for $size bytes"
	[ "$points" -ge $((size / 262144)) ]
	[ "$points" -le $((size / 262144 + 1)) ]
}

@test "get answers ids as they come, without waiting for a full batch" {
	"$DX_SYNTH" --count 3000 -o p.tsv
	gzip -c p.tsv > p.tsv.gz
	dx index -q p.tsv.gz
	mkfifo in out
	dx get p.tsv.gz < in > out &
	local pid=$!
	exec 5> in 6< out
	echo 42 >&5
	local line
	# The answer comes while stdin stays open.
	read -r -t 10 line <&6
	equals "${line%%$'\t'*}" 42
	echo 7 >&5
	read -r -t 10 line <&6
	equals "${line%%$'\t'*}" 7
	exec 5>&- 6<&-
	wait "$pid"
}

@test "messages about a gzip file name lines of its content" {
	printf 'a\tone\nb\ttwo\na\tthree\n' | gzip > d.tsv.gz
	run --separate-stderr dx index d.tsv.gz
	status_is 1
	equals "$stderr" "docdex index: duplicate id at d.tsv.gz:1 and d.tsv.gz:3 (keep one with --duplicates first or last): 'a'"
	{ printf 'x\t1\n' | gzip; printf 'y\t2\n\tno id\n' | gzip; } > m.tsv.gz
	run --separate-stderr dx index m.tsv.gz
	equals "$stderr" "docdex index: record with an empty id (skip such records with --skip-bad): 'm.tsv.gz:3'"
}

@test "--stats counts the windows of every kind of gzip file" {
	"$DX_SYNTH" --count 30000 -o p.tsv
	head -n 15000 p.tsv | gzip > m.tsv.gz
	tail -n +15001 p.tsv | gzip >> m.tsv.gz
	dx index -q --span 64K m.tsv.gz
	local points windows
	points=$(dx index --stats m.tsv.gz | awk -F'\t' '$1 == "source" { print $9 }')
	windows=$(dx index --stats m.tsv.gz | awk -F'\t' '$1 == "source" { print $10 }')
	[ "$points" -gt 20 ]
	# Every point but the two member starts has a window of some hundreds of bytes at least.
	[ "$windows" -gt $(((points - 2) * 100)) ]
	bgzip -c p.tsv > b.tsv.gz
	dx index -q b.tsv.gz
	equals "$(dx index --stats b.tsv.gz | awk -F'\t' '$1 == "source" { print $7, $10 }')" "bgzf 0"
}
