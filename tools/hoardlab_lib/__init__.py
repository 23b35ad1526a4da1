"""hoardlab_lib: the modules behind the `tools/hoardlab` command.

One module per concern, listed bottom up: a module imports only modules above it (no
cycle; cli, at the end, is the only one that imports selftest):
  common    paths, the build directory, allocator specs and how to run them, the one
            key=value parser, on/off values, log
  build     meson/ninja builds and tools/install-deps (for cli and selftest)
  sweep     sweep files (INI): parsing and expansion into runs
  runner    running one hlbench process and collecting its records
  tidy      runs.csv / rounds.csv: the tidy schema, writing and reading
  meta      meta.json: machine, topology, compiler, commit, configs
  paper     the papers' published claims (static data, for comparison only)
  verdicts  the taxonomy verdict rules (pure functions over tidy rows)
  plots     PNG plots (speedup, relative throughput, memory)
  cost      `hoardlab cost`: callgrind instructions per malloc+free pair
  report    report.md
  layers    `hoardlab layers`: the core's use graph against its layer order
  selftest  `hoardlab test`
  cli       the argparse front end
"""
