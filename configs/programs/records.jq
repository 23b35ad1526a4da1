# jq over generated records (configs/programs/gen.py json): parse the whole array, group,
# sort, reshape objects and build strings: many small JSON values, short- and long-lived.
. as $all
| {
    groups: (group_by(.group) | map({g: .[0].group, n: length,
                                     score: (map(.score) | add | floor),
                                     users: (map(.user) | unique | length)})
             | sort_by(-.n, .g) | .[0:25]),
    tags: ([.[].tags[]] | group_by(.) | map({t: .[0], n: length}) | sort_by(-.n, .t) | .[0:25]),
    by_user: (map(select(.meta.ok)) | group_by(.user) | map({u: .[0].user, ids: (map(.id) | length)})
              | sort_by(-.ids, .u) | .[0:10]),
    words: ([.[].text | split(" ")[]] | length),
    reshaped: (map({key: (.user + ":" + (.id | tostring)), value: (.tags | join(","))})
               | from_entries | length),
    total: length
  }
