# gawk over generated text (configs/programs/gen.py text): associative arrays keyed by
# words, word pairs and positions, string building with sprintf and substr, gsub, and
# sorted traversal (PROCINFO["sorted_in"]). Output: summaries, deterministic.
{
    for (i = 1; i <= NF; i++) {
        c[$i]++
        if (i < NF) p[$i " " $(i + 1)]++
        f = substr($i, 1, 2)
        if (length(first[f]) < 4000) first[f] = first[f] sprintf("%s,", $i)
        else { chunks[f]++; first[f] = "" }
    }
    line = $0
    n += gsub(/[aeiou]r/, "R", line)
    acc[NR % 997] = acc[NR % 997] substr(line, 1, 8)
}
END {
    PROCINFO["sorted_in"] = "@val_num_desc"
    k = 0
    for (w in c) { if (k++ >= 30) break; printf "%-20s %d\n", w, c[w] }
    k = 0
    for (w in p) { if (k++ >= 20) break; printf "%-30s %d\n", w, p[w] }
    PROCINFO["sorted_in"] = "@ind_str_asc"
    for (f in first) { m = split(first[f], parts, ","); printf "%s %d %d %d\n", f, chunks[f], m, length(first[f]) }
    t = 0
    for (i in acc) t += length(acc[i])
    printf "words %d pairs %d subst %d acc %d\n", length(c), length(p), n, t
}
