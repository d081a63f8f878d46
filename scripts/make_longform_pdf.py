"""Write data/longform/cluster_guide_en.pdf: the English, multi-page PDF of the long-form corpus.

The text below is the document; this script only lays it out (tests/fixtures_docs.make_pdf: a real text
layer in Helvetica, one page per "\\f"-separated part, lines wrapped at 88 characters). Run it after
editing the text:  .venv/bin/python scripts/make_longform_pdf.py
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures_docs import make_pdf  # noqa: E402

TITLE = "IR-302 Computing Cluster Guide"
TEXT = """IR-302 Computing Cluster Guide (Autumn 2026)

This guide explains how students of IR-302 use the course computing cluster for the labs and the two
projects. Read it before you submit your first job. Questions go to the course forum, not to the
cluster administrators.

1. Accounts

Every enrolled student gets a cluster account in week 2. The user name is the student number with the
prefix "ir". The first login must happen from the campus network or through the university VPN;
after that, logins from outside need a second factor. Accounts are closed two weeks after the final
project presentations, and home directories are deleted one month after that.

2. Storage quotas

Each student has 20 GB in the home directory and 200 GB of scratch space. Project teams share a
project directory of 500 GB. The home directory is backed up every night and keeps 14 daily copies.
Scratch space is never backed up, and files in scratch that have not been read for 30 days are
removed automatically without warning. Keep code and reports in the home directory, and large
intermediate files, such as embedding caches and indexes, in scratch.
\f
3. Running jobs

Interactive work on the login node is limited to 10 minutes of CPU time per process; longer jobs
must go through the scheduler. A job asks for cores, memory and a time limit. The default limit is
2 hours and the maximum is 24 hours. Jobs that use more memory than they asked for are stopped by the
scheduler, so ask for a little more than your program needs.

CPU jobs may ask for up to 16 cores each. A student may have at most 4 jobs running at the same time;
further jobs wait in the queue.

4. GPU allowance

GPUs are for the final project only. Each final-project team receives 40 GPU hours for the whole
semester; the lab assignments must run on CPUs. A GPU job asks for one GPU at a time and may run for
at most 8 hours. Unused hours do not carry over to another team, and extra hours are granted only for
a written request signed by the whole team and approved by the instructor.

Before the deadline week the queue is short. In the last week before the final deadline, GPU jobs may
wait for more than a day, so plan your experiments early.
\f
5. Models and data

The cluster has no access to the internet from compute nodes. Download models and data on the login
node into your scratch space before you submit a job. Course datasets are already stored under the
shared folder /data/ir302 and must not be copied to personal machines outside the cluster.

6. Fair use

Do not run crawlers, cryptocurrency miners or servers that listen on public ports. Do not share your
account. A first violation suspends the account for one week; a second closes it for the rest of the
semester, and the work that needed the cluster must then be finished on a personal machine.

7. Getting help

Check the cluster status page first: most failed jobs are explained there. Report problems on the
course forum with the job number, the command you ran and the last 20 lines of the job log. The
teaching assistants answer forum posts about the cluster within two working days.
"""


def main() -> int:
    pages = []
    for part in TEXT.split("\f"):
        lines = []
        for para in part.strip("\n").split("\n\n"):
            lines += textwrap.wrap(" ".join(para.split()), 88) + [""]
        pages.append("\n".join(lines).rstrip())
    out = ROOT / "data" / "longform" / "cluster_guide_en.pdf"
    out.write_bytes(make_pdf(pages, title=TITLE))
    print(f"{out.relative_to(ROOT)}: {len(pages)} pages, {out.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
