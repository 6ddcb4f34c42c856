#!/usr/bin/python3
"""Checks on commsweep store files with h5py, for the integration scripts.

  sweep_check.py show FILE.h5 SHOW.csv     every dataset reads; `commsweep show --csv` matches
  sweep_check.py export FILE.h5 ROW OUT.jsonl   exported JSON lines equal the row's /txlog slice
  sweep_check.py counts FILE.h5 DONE FAILED PENDING   /results status counts are exactly these
  sweep_check.py failed FILE.h5 TEXT       exactly one failed row, its error contains TEXT
  sweep_check.py kept FILE.h5 BEFORE.csv   every row done in BEFORE.csv (show --csv taken
                                           earlier) is still done with identical values
  sweep_check.py summary FILE.h5           prints "done failed pending"
  sweep_check.py fliplog FILE.h5 ROW       changes one /txlog record of row ROW in place
  sweep_check.py flip FILE.h5 ROW          flips bytes of /results row ROW in place (raw file
                                           bytes, found by its checksum), as a disk fault would
"""
import csv
import json
import sys

import h5py
import numpy as np

STATUS = {0: "pending", 1: "done", 2: "failed"}


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def read_all(path):
    with h5py.File(path, "r") as f:
        assert f.attrs["format"] == "commsweep", "format attribute"
        assert int(f.attrs["schema_version"]) == 6, "schema version"
        data = {name: f[name][()] for name in ("jobs", "job_json", "results", "errors", "txlog",
                                               "steplog")}
        for name in data:
            assert "description" in f[name].attrs, f"/{name} has no description"
        units = dict(f["results"].attrs)
        assert units["total_time_us.unit"] == "us"
        assert units["bus_bw_gb_per_s.unit"] == "GB/s"
        status_enum = h5py.check_enum_dtype(f["results"].dtype["status"])
        assert status_enum == {"pending": 0, "done": 1, "failed": 2}, status_enum
    assert len(data["jobs"]) == len(data["results"]) == len(data["job_json"]) == len(data["errors"])
    return data


def check_show(path, csv_path):
    data = read_all(path)
    jobs, res = data["jobs"], data["results"]
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(jobs), f"show printed {len(rows)} rows, file has {len(jobs)}"
    checked = 0
    for r in rows:
        i = int(r["row"])
        for col, v in r.items():
            if col == "error":
                want = data["errors"][i] if res["status"][i] == 2 else b""
            elif col in jobs.dtype.names:
                want = jobs[col][i]
            elif col in res.dtype.names:
                want = res[col][i]
            else:
                continue
            if col == "status":
                assert STATUS[int(want)] == v, (i, col, want, v)
            elif isinstance(want, bytes) or want.dtype.kind == "S":
                assert text(want) == v, (i, col, text(want), v)
            elif want.dtype.kind == "f":
                assert float(v) == float(want), (i, col, repr(float(want)), v)
            else:
                assert int(v) == int(want), (i, col, int(want), v)
            checked += 1
        if r["status"] == "done" and res["total_time_us"][i] > 0:
            algbw = jobs["msg_size_bytes"][i] / (res["total_time_us"][i] * 1e3)
            assert abs(float(r["algbw_gb_per_s"]) - algbw) <= 1e-12 * algbw
    print(f"{path}: {len(rows)} rows, {checked} values match `commsweep show --csv`; "
          f"{len(data['txlog'])} txlog records read")


def check_export(path, row, jsonl):
    data = read_all(path)
    res, tx = data["results"], data["txlog"]
    off, cnt = int(res["txlog_offset"][row]), int(res["txlog_count"][row])
    lines = [json.loads(line) for line in open(jsonl)]
    assert len(lines) == cnt, f"export gave {len(lines)} records, the row has {cnt}"
    assert cnt > 0
    for k, rec in enumerate(lines):
        t = tx[off + k]
        assert int(t["job"]) == row
        for col, v in rec.items():
            if col in tx.dtype.names:
                assert int(t[col]) == int(v), (k, col, int(t[col]), v)
    print(f"{path}: export of row {row} equals its {cnt} /txlog records")


def counts(path, done, failed, pending):
    st = read_all(path)["results"]["status"]
    got = [int(np.sum(st == 1)), int(np.sum(st == 2)), int(np.sum(st == 0))]
    want = [int(done), int(failed), int(pending)]
    assert got == want, f"{path}: done/failed/pending = {got}, expected {want}"
    print(f"{path}: done {got[0]}, failed {got[1]}, pending {got[2]}")


def failed(path, needle):
    data = read_all(path)
    rows = np.nonzero(data["results"]["status"] == 2)[0]
    assert len(rows) == 1, f"{len(rows)} failed rows"
    msg = text(data["errors"][rows[0]])
    assert needle in msg, msg
    print(f"{path}: row {rows[0]} failed: {msg}")


def kept(path, before_csv):
    res = read_all(path)["results"]
    with open(before_csv, newline="") as f:
        done = [r for r in csv.DictReader(f) if r["status"] == "done"]
    for r in done:
        i = int(r["row"])
        assert int(res["status"][i]) == 1, f"row {i} was done, now {STATUS.get(int(res['status'][i]))}"
        # a row done without its log (txlog_detail 0: its records were still in the sweep's
        # spool) gets them, and so a new checksum, when the spool is merged; nothing else changes
        if int(r["txlog_detail"]) == int(res["txlog_detail"][i]):
            assert int(res["checksum"][i]) == int(r["checksum"]), f"row {i} changed"
        else:
            assert int(r["txlog_detail"]) == 0 and int(r["txlog_count"]) == 0, f"row {i} changed"
        assert float(res["total_time_us"][i]) == float(r["total_time_us"]), f"row {i} changed"
    print(f"{path}: all {len(done)} rows done before the kill are intact")


def summary(path):
    st = read_all(path)["results"]["status"]
    print(int(np.sum(st == 1)), int(np.sum(st == 2)), int(np.sum(st == 0)))


def fliplog(path, row):
    with h5py.File(path, "r+") as f:
        res = f["results"]
        off, cnt = int(res["txlog_offset"][row]), int(res["txlog_count"][row])
        assert cnt > 0
        rec = f["txlog"][off + cnt // 2]
        rec["rsp_complete_tick"] += 1
        f["txlog"][off + cnt // 2] = rec
    print(f"{path}: changed /txlog record {off + cnt // 2} of row {row}")


def flip(path, row):
    """Finds the row's bytes in the file by its unique checksum value and flips a result byte."""
    with h5py.File(path, "r") as f:
        res = f["results"]
        checksum = int(res["checksum"][row])
        fields = res.dtype.fields
        rel = fields["total_time_us"][1] - fields["checksum"][1]
    raw = bytearray(open(path, "rb").read())
    at = raw.find(np.uint64(checksum).tobytes())
    assert at >= 0 and raw.find(np.uint64(checksum).tobytes(), at + 1) < 0, "checksum not unique"
    for k in range(3):
        raw[at + rel + k] ^= 0xA5
    open(path, "r+b").write(raw)
    print(f"{path}: flipped 3 bytes of /results row {row} (total_time_us) at offset {at + rel}")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "show":
        check_show(*args)
    elif cmd == "export":
        check_export(args[0], int(args[1]), args[2])
    elif cmd == "counts":
        counts(*args)
    elif cmd == "failed":
        failed(*args)
    elif cmd == "kept":
        kept(*args)
    elif cmd == "summary":
        summary(*args)
    elif cmd == "fliplog":
        fliplog(args[0], int(args[1]))
    elif cmd == "flip":
        flip(args[0], int(args[1]))
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
