#!/usr/bin/env python3
"""PFHub benchmark 3 data files from a karma-rappel run of octoflow.

    python3 scripts/pfhub_bm3_export.py out/pfhub_bm3 [--output DIR]

Reads the run's dendrite.csv (written every [diagnostics] every steps) and writes, in the
benchmark's format (one CSV a quantity, time in the first column):

    tip_position.csv    time,tip_position    the psi = 0 (phi = 0.5) crossing on y = 0, from the seed's centre
    solid_fraction.csv  time,solid_fraction  the integral of (psi + 1) / 2 over the domain / its area
    free_energy.csv     time,free_energy     the benchmark's F

Units are the model's: W0 and tau0. Values are copied from dendrite.csv as written (no rounding).
Exit code 2 with one message when the file is missing or is not a karma-rappel run's.
"""
import argparse
import csv
import os
import sys

QUANTITIES = (("tip_position", "tip_x"), ("solid_fraction", "solid_fraction"), ("free_energy", "free_energy"))


def fail(message):
    print(f"pfhub_bm3_export: {message}", file=sys.stderr)
    sys.exit(2)


def main():
    parser = argparse.ArgumentParser(description="PFHub benchmark 3 data files from a karma-rappel run")
    parser.add_argument("run", help="the run's output directory (holding dendrite.csv)")
    parser.add_argument("--output", help="where to write the files (default: the run's directory)")
    arguments = parser.parse_args()
    source = os.path.join(arguments.run, "dendrite.csv")
    if not os.path.isfile(source):
        fail(f"{source}: no such file (run the case with [diagnostics] every = N first)")
    with open(source, newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        fail(f"{source}: empty")
    header = rows[0]
    wanted = ["time"] + [column for _, column in QUANTITIES]
    missing = [column for column in wanted if column not in header]
    if missing:
        fail(f"{source}: no column {', '.join(missing)} (a karma-rappel run's dendrite.csv has them)")
    output = arguments.output or arguments.run
    os.makedirs(output, exist_ok=True)
    time = header.index("time")
    for name, column in QUANTITIES:
        index = header.index(column)
        path = os.path.join(output, name + ".csv")
        with open(path + ".partial", "w", newline="") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(["time", name])
            for row in rows[1:]:
                if len(row) != len(header):
                    fail(f"{source}: a row with {len(row)} values under {len(header)} columns")
                writer.writerow([row[time], row[index]])
        os.replace(path + ".partial", path)
        print(f"pfhub_bm3_export: wrote {path} ({len(rows) - 1} rows)")


if __name__ == "__main__":
    main()
