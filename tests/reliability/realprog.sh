#!/usr/bin/env bash
# realprog.sh LIB STRATEGY PROGRAM — real work by one real Debian program (or a small pipeline
# around it), once without and once with LD_PRELOAD=LIB HOARD_STRATEGY=STRATEGY. Passes when
# both exit 0 with identical output (stdout and stderr). Every process of the run inherits the
# preload, so the shell, the program and its helpers (gzip under tar, cc1 under gcc, git's
# subprocesses) all allocate from hoardlab. Each run has a 120 s limit: a hang fails.
# `realprog.sh --list` prints the programs. The packages they need: packages.txt.
# Extra HOARD_* settings pass through the environment (e.g. HOARD_CHECKS=on).
set -u
if [ "${1:-}" = --list ]; then
  sed -n 's/^  \([a-z0-9]*\))  *# \(.*\)$/\1: \2/p' "$0"
  exit 0
fi
lib=$1 strategy=$2 prog=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
in=$tmp/in
mkdir -p "$in"

# Shared inputs, made without the preload.
make_text() {   # N lines of pseudo-random words, deterministic
  awk -v n="$1" 'BEGIN { s = 12345; split("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega", w, " ");
    for (i = 1; i <= n; i++) { line = ""; k = 3 + i % 9;
      for (j = 0; j < k; j++) { s = (s * 1103515245 + 12345) % 2147483648; line = line (j ? " " : "") w[1 + int(s / 65536) % 24] (s % 97) }
      print i ": " line } }'
}

need() {
  for p in "$@"; do
    command -v "$p" >/dev/null 2>&1 || {
      echo "realprog.sh: '$p' is not installed; CI installs tests/reliability/packages.txt" >&2
      exit 1
    }
  done
}

case $prog in
  perl)     # hashes, regular expressions, sort and sprintf over 30k lines
    need perl; make_text 30000 > "$in/text"
    cmd='perl -ne '\''for (/(\w+?)(\d+)/g) { $c{$_}++ } $t{$1} += $2 while /([a-z]+)(\d+)/g; push @l, $_ if /omega\d\b/;
         END { print map({ "$_ $c{$_}\n" } sort { $c{$b} <=> $c{$a} || $a cmp $b } keys %c);
               printf "%s %d\n", $_, $t{$_} for sort keys %t; print scalar(@l), "\n";
               my %h = map { ($_ => [$_ x 3, { k => $_ }]) } 1 .. 30000; print scalar(keys %h), "\n" }'\'' in/text | md5sum' ;;
  git)      # init, 120 files, commits, branches, merge, repack with threads, fsck, log
    need git
    cmd='export HOME=$PWD GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b
         export GIT_AUTHOR_DATE="2020-01-01T00:00:00Z" GIT_COMMITTER_DATE="2020-01-01T00:00:00Z"
         git init -q -b main repo && cd repo &&
         for i in $(seq 1 120); do sed -n "$((i * 50)),+40p" ../in/text > f$i.txt; done &&
         git add . && git commit -qm one && git checkout -qb side &&
         for i in $(seq 1 3 120); do echo "side $i" >> f$i.txt; done && git commit -qam two &&
         git checkout -q main && for i in $(seq 2 3 120); do echo "main $i" >> f$i.txt; done &&
         git commit -qam three && git merge -q --no-edit side && git -c pack.threads=2 gc -q &&
         git fsck --strict 2>&1 && git log --format="%H %s" && git ls-tree -r HEAD | md5sum &&
         git diff HEAD~2 --stat | tail -1 && git grep -c omega1 | md5sum'
    make_text 8000 > "$in/text" ;;
  sqlite3)  # recursive CTE inserts, an index, joins, aggregates, a string-heavy table
    need sqlite3
    cmd='sqlite3 :memory: "
      create table t(id integer primary key, k int, s text);
      with recursive c(x) as (select 1 union all select x + 1 from c where x < 30000)
        insert into t select x, (x * 7919) % 1000, printf(\"v%08d-%s\", x, hex(x * 31)) from c;
      create index tk on t(k);
      select count(*), sum(k), max(s) from t;
      select k, count(*), group_concat(id % 10, \"\") from t where k < 5 group by k;
      select a.k, count(*) from t a join t b on a.k = b.k and b.id < 2000 where a.id < 3000 group by a.k order by 2 desc, 1 limit 5;
      update t set s = s || s where id % 3 = 0; delete from t where id % 5 = 0; vacuum;
      select count(*), length(group_concat(s)) from t;" | md5sum' ;;
  gawk)     # associative arrays, split, sprintf, sorted traversal
    need gawk; make_text 30000 > "$in/text"
    cmd='gawk '\''{ for (i = 2; i <= NF; i++) { c[$i]++; len[length($i)]++ } s = s substr($0, 1, 3) }
         END { PROCINFO["sorted_in"] = "@val_num_desc"; n = 0; for (w in c) if (n++ < 50) print w, c[w];
               PROCINFO["sorted_in"] = "@ind_num_asc"; for (l in len) print l, len[l]; print length(s) }'\'' in/text | md5sum' ;;
  mawk)     # the other awk (Debian's default): the same kind of work
    need mawk; make_text 30000 > "$in/text"
    cmd='mawk '\''{ for (i = 2; i <= NF; i++) c[$i]++; a[NR % 1000] = a[NR % 1000] $2 }
         END { for (w in c) print w, c[w]; for (k in a) print k, length(a[k]) }'\'' in/text | sort | md5sum' ;;
  tar)      # a tree of files through tar and gzip, listed, extracted and compared
    need tar gzip
    make_text 30000 > "$in/text"
    cmd='mkdir -p tree && for d in a b c; do mkdir -p tree/$d/sub; for i in $(seq 1 25); do sed -n "$((i * 300)),+$((i * 40))p" in/text > tree/$d/sub/f$i; done; done &&
         tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - tree | gzip -n -6 > t.tgz &&
         md5sum < t.tgz && tar -tzvf t.tgz | md5sum && mkdir x && tar -xzf t.tgz -C x && diff -r tree x/tree && echo same' ;;
  xz)       # multithreaded compression (several blocks), decompression, integrity test
    need xz; make_text 30000 > "$in/text"
    cmd='xz -T2 --block-size=256KiB -3 -c in/text > t.xz && md5sum < t.xz && xz -t t.xz && xz -dc t.xz | md5sum && xz -l t.xz | tail -1 | md5sum' ;;
  bzip2)    # compression and decompression
    need bzip2; make_text 30000 > "$in/text"
    cmd='bzip2 -9 -c in/text > t.bz2 && md5sum < t.bz2 && bzip2 -dc t.bz2 | md5sum && bzip2 -t t.bz2 && echo good' ;;
  zstd)     # multithreaded compression at two levels, decompression
    need zstd; make_text 30000 > "$in/text"
    cmd='zstd -q -T2 -12 -c in/text > t.zst && md5sum < t.zst && zstd -q -T2 --long=24 -3 -c in/text | md5sum && zstd -dqc t.zst | md5sum' ;;
  make)     # make -j2 over 100 generated targets with pattern rules and functions
    need make
    cmd='mkdir src && for i in $(seq 1 100); do echo "$i $((i * i))" > src/n$i.in; done &&
         printf "%s\n" "IN := \$(wildcard src/*.in)" "OUT := \$(patsubst src/%.in,out/%.out,\$(IN))" \
           "all: out/total" "out/total: \$(OUT)" "	cat \$(sort \$^) | awk '\''{ s += \$\$2 } END { print s }'\'' > \$@" \
           "out/%.out: src/%.in | out" "	awk '\''{ print \$\$1, \$\$2 * 3 }'\'' \$< > \$@" "out:" "	mkdir -p out" > Makefile &&
         make -s -j2 && cat out/total && cat out/*.out | md5sum && make -q && echo up-to-date' ;;
  sed)      # substitutions with groups, hold space, line ranges
    need sed; make_text 30000 > "$in/text"
    cmd='sed -E "s/([a-z]+)([0-9]+)/\2\1/g; /omega/{h;d}; 1000,2000y/abc/ABC/; \$G" in/text | md5sum &&
         sed -n "/^[0-9]*5: /{s/ .*//;p}" in/text | md5sum' ;;
  grep)     # extended and Perl (PCRE2) expressions, counts, only-matching
    need grep; make_text 30000 > "$in/text"
    cmd='grep -cE "(alpha|beta)[0-9]+ .*omega" in/text && grep -oP "\b(\w)\w*\d{2}\b(?= \1)" in/text | md5sum &&
         grep -vF -e alpha -e beta in/text | grep -n "psi4" | md5sum' ;;
  diff)     # unified diff between two large files, and cmp
    need diff cmp; make_text 30000 > "$in/text"
    cmd='sed "s/5\([0-9]\)/X\1/; 0~97d" in/text > b && { diff -u --label a --label b in/text b; echo "diff: $?"; } | md5sum && { cmp in/text b; true; } | md5sum' ;;
  find)     # find over /usr/include, xargs batches, wc
    need find xargs
    cmd='find /usr/include -type f -name "*.h" -print0 | sort -z | xargs -0 -n 100 wc -c | md5sum &&
         find /usr/share/doc -maxdepth 2 -type d | sort | md5sum' ;;
  bc)       # arbitrary precision: 500 digits of pi and a factorial
    need bc
    cmd='echo "scale = 500; 4 * a(1)" | bc -l | md5sum &&
         echo "define f(n) { if (n < 2) return 1; return n * f(n - 1) }; f(800)" | bc | md5sum' ;;
  openssl)  # digests, AES encryption and decryption, base64
    need openssl; make_text 30000 > "$in/text"
    cmd='openssl dgst -sha256 -r in/text && openssl dgst -sha512 -r in/text &&
         openssl enc -aes-256-cbc -K 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f -iv 0f0e0d0c0b0a09080706050403020100 -in in/text -out t.enc &&
         md5sum < t.enc && openssl enc -d -aes-256-cbc -K 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f -iv 0f0e0d0c0b0a09080706050403020100 -in t.enc | md5sum &&
         openssl base64 -in t.enc | openssl base64 -d | md5sum' ;;
  jq)       # parse 10k JSON objects, group, sort, reshape
    need jq
    cmd='seq 1 10000 | awk '\''{ printf "{\"id\": %d, \"g\": \"g%d\", \"v\": [%d, %d], \"s\": \"%s\"}\n", $1, $1 % 37, $1 * 3, $1 % 11, "x" $1 }'\'' |
         jq -s -c "group_by(.g) | map({g: .[0].g, n: length, sum: (map(.v[0]) | add), ids: (map(.id) | .[0:5])}) | sort_by(-.sum)" | md5sum &&
         seq 1 2000 | jq -c -n "[inputs] | map(tostring * 3) | join(\",\") | length"' ;;
  file)     # libmagic over many files: loads and compiles its database
    need file
    cmd='find /usr/bin /usr/lib/x86_64-linux-gnu -maxdepth 1 -type f | sort | head -400 | file -b -f - | md5sum' ;;
  python3)  # sqlite3 and zlib modules, threads, a subprocess, a fork pool
    need python3
    cmd='python3 -c "
import sqlite3, zlib, threading, subprocess, multiprocessing as mp, re
db = sqlite3.connect(\":memory:\")
db.execute(\"create table t(k, v)\")
db.executemany(\"insert into t values (?, ?)\", ((i % 97, \"x\" * (i % 50)) for i in range(50000)))
print(db.execute(\"select k, count(*), sum(length(v)) from t group by k order by 3 desc limit 3\").fetchall())
blob = (\" \".join(str(i) for i in range(100000))).encode()
print(len(zlib.compress(blob, 9)), zlib.crc32(zlib.decompress(zlib.compress(blob))))
res = {}
def work(n): res[n] = len(re.findall(r\"\\d*7\\d*\", \" \".join(map(str, range(n * 10000)))))
ts = [threading.Thread(target=work, args=(k,)) for k in range(1, 5)]
[t.start() for t in ts]; [t.join() for t in ts]
print(sorted(res.items()))
print(subprocess.run([\"python3\", \"-c\", \"print(sum(range(10**6)))\"], capture_output=True, text=True).stdout.strip())
def sq(x): return sum(i * i for i in range(x))
if __name__ == \"__main__\":
    with mp.get_context(\"fork\").Pool(2) as p: print(sum(p.map(sq, range(200, 400))))
"' ;;
  coreutils) # a pipeline of small tools: tr, cut, paste, join, uniq, tac, split, comm, shuf
    make_text 30000 > "$in/text"
    cmd='tr a-z A-Z < in/text | cut -d" " -f2-4 | paste -d"|" - - | tac | head -20000 > p && md5sum < p &&
         cut -d" " -f2 in/text | sort | uniq -c | sort -k1,1nr -k2 | head -30 | md5sum &&
         cut -d: -f1 in/text | sort > k1 && cut -d: -f1 in/text | sed -n "0~3p" | sort > k2 && join k1 k2 | wc -l &&
         comm -3 k1 k2 | wc -l && split -l 7000 in/text part. && cat part.* | md5sum &&
         shuf --random-source=in/text -n 100 in/text | md5sum' ;;
  *) echo "realprog.sh: unknown program '$prog'" >&2; exit 2 ;;
esac

run() {   # run DIR [env...]: the command in a fresh directory that sees the inputs as in/
  mkdir -p "$tmp/$1" && ln -s "$in" "$tmp/$1/in"
  (cd "$tmp/$1" && shift && env "$@" timeout 120 bash -c "$cmd" 2>&1)
}
# The preload must really be active (an LD_PRELOAD that fails to load would leave the output
# unchanged): one process with HOARD_VERBOSE names the strategy.
if ! env LD_PRELOAD="$lib" HOARD_STRATEGY="$strategy" HOARD_VERBOSE=1 true 2>&1 | grep -q "strategy $strategy"; then
  echo "FAIL: LD_PRELOAD=$lib HOARD_STRATEGY=$strategy does not load hoardlab:"
  env LD_PRELOAD="$lib" HOARD_STRATEGY="$strategy" HOARD_VERBOSE=1 true 2>&1 | head -5
  exit 1
fi
want=$(run ref) || { echo "reference run of $prog failed (exit $?):"; echo "$want" | head -20; exit 1; }
got=$(run got HOARD_STRATEGY="$strategy" LD_PRELOAD="$lib")
rc=$?
if [ $rc -ne 0 ] || [ "$got" != "$want" ]; then
  echo "FAIL: $prog under $strategy (exit $rc$([ $rc = 124 ] && echo ': timed out'))"
  echo "--- without preload:"; echo "$want" | head -20
  echo "--- with $strategy:";   echo "$got" | head -20
  exit 1
fi
echo "ok: $prog under $strategy: $(echo "$got" | tail -1)"
