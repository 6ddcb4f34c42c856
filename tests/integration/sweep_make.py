#!/usr/bin/python3
"""Writes a test sweep file: the base of sweeps/demo.json with another name, engine and matrix.

usage: sweep_make.py DEMO.json OUT.json NAME ENGINE MATRIX_JSON
  ENGINE: math | dcin;  MATRIX_JSON: the "matrix" array as JSON text
"""
import json
import sys


def main():
    demo, out, name, engine, matrix = sys.argv[1:6]
    with open(demo) as f:
        d = json.load(f)
    d["name"] = name
    d.pop("description", None)
    if engine != "math":
        d["base"]["engine"] = {"name": engine}
    d["matrix"] = json.loads(matrix)
    with open(out, "w") as f:
        json.dump(d, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
