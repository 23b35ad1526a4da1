"""hoardlab_lib: the modules behind the `tools/hoardlab` command.

One module per concern:
  common    paths, the build directory, allocator specs and how to run them
  sweep     sweep files (INI): parsing and expansion into runs
  runner    running one hlbench process and collecting its records
  tidy      runs.csv / rounds.csv: the tidy schema, writing and reading
  meta      meta.json: machine, topology, compiler, commit, configs
  plots     PNG plots (speedup, relative throughput, memory)
  paper     the papers' published claims (static data, for comparison only)
  verdicts  the taxonomy verdict rules (pure functions over tidy rows)
  report    report.md
  selftest  `hoardlab test`
  cli       the argparse front end
"""
