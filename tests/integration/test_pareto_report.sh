#!/usr/bin/env bash
# `commsweep report`: on a file with dcin and math rows of the same designs (a refinement of 24
# designs) and on a file of one engine, the page opens with every image present: the HTML parses,
# every <img> names a file next to it that is a valid PNG (signature, IHDR, decodes), nothing
# refers to the network; its fronts are those of `commsweep pareto --json` (the C side's), one
# table row per front point; the engine-against-engine plot is there when two engines share
# designs and said to be missing when not.  Errors: no objectives, a missing file.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"
C2=$CS_SOURCE_DIR/sweeps/c2-topology-study.json

$PY - "$C2" small.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["name"] = "report-small"
d.pop("description")
d["matrix"] = [
    {"fields": ["spec.primitive", "spec.algorithm"], "values": [["allreduce", "ring"], ["allgather", "ring"]]},
    {"fields": ["adapter.topology", "adapter.num_dies", "adapter.dcin_layout", "adapter.num_initiators",
                "adapter.num_targets", "spec.participants"],
     "values": [["5x4", 1, "1die", 20, 20, [0, 5, 10, 15]], ["5x4", 2, "2die", 40, 40, [0, 10, 20, 30]],
                ["5x4", 2, "2die_spread", 40, 40, [0, 10, 20, 30]]]},
    {"fields": ["adapter.mst_rd_outstanding", "adapter.mst_wr_outstanding"], "values": [[8, 8], [32, 32]]},
    {"field": "adapter.burst_length", "values": [2, 4]}]
d["base"]["spec"]["msg_size_bytes"] = 16384
d["pareto"] = {"minimize": ["total_time_us", "mst_outstanding"], "maximize": ["bus_bw_gb_per_s"],
               "workload": ["primitive", "msg_size_bytes"]}
d["refine"] = {"engine": {"name": "math"}, "band": 0.5}
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
timeout 600 "$CS_BIN" sweep small.json --out two.h5 --refine --quiet --results-only > /dev/null
timeout 600 "$CS_BIN" sweep small.json --out one.h5 --quiet --results-only > /dev/null

check_page() { # DIR FILE.h5 PAIRS: the page, its images and its fronts
  $PY - "$1" "$2" "$3" <<'PY'
import html.parser, json, os, struct, subprocess, sys, zlib
import matplotlib.image
out, h5, pairs = sys.argv[1], sys.argv[2], int(sys.argv[3])
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.rows, self.tags = [], 0, []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if tag == "img":
            self.imgs.append(a["src"])
        for k in ("src", "href"):
            assert not (a.get(k) or "").startswith(("http:", "https:", "//")), (tag, a)
        if tag == "tr":
            self.rows += 1
page = open(os.path.join(out, "index.html")).read()
assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
assert "<script" not in page and "url(" not in page
p = Page()
p.feed(page)
p.close()
assert p.imgs, "no image"
for src in p.imgs:
    path = os.path.join(out, src)
    assert os.path.dirname(src) == "" and os.path.isfile(path), src
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", src
    n, kind = struct.unpack(">I4s", data[8:16])
    w, h = struct.unpack(">II", data[16:24])
    assert kind == b"IHDR" and n == 13 and w > 100 and h > 100, (src, kind, w, h)
    assert zlib.crc32(data[12:29]) == struct.unpack(">I", data[29:33])[0], src
    img = matplotlib.image.imread(path)
    assert img.shape[0] == h and img.shape[1] == w, src
# the fronts are the C side's, and each front point has its table row
mine = json.load(open(os.path.join(out, "fronts.json")))
theirs = json.loads(subprocess.run([os.environ["CS_BIN"], "pareto", h5, "--sweep", "small.json",
                                    "--json"], capture_output=True, check=True, text=True).stdout)
assert mine == theirs
fronts = sum(g["on_front"] for g in mine["groups"])
workloads = len({g["workload_text"] for g in mine["groups"]})
assert p.rows == fronts + workloads, (p.rows, fronts, workloads)  # a header row per table
assert sum(s.startswith("front_") for s in p.imgs) == workloads
assert sum(s.startswith("engines_") for s in p.imgs) == pairs, p.imgs
assert "busbw_vs_size.png" in p.imgs
if not pairs:
    assert "No design has rows on two engines." in page
print(f"{out}: {len(p.imgs)} images, {fronts} front points in {workloads} workloads")
PY
}

"$CS_BIN" report two.h5 --out two-report --sweep small.json | tee two.txt
grep -q "^report: two-report/index.html" two.txt
check_page two-report two.h5 1
"$CS_BIN" report one.h5 --out one-report --sweep small.json > /dev/null
check_page one-report one.h5 0

rc=0; "$CS_BIN" report one.h5 --out x 2> noobj.err || rc=$?
[ $rc = 2 ] && grep -q "which objectives?" noobj.err
rc=0; "$CS_BIN" report nothere.h5 --out x --minimize total_time_us 2> nofile.err || rc=$?
[ $rc = 1 ] && grep -q "nothere.h5" nofile.err
echo "test_pareto_report: OK"
