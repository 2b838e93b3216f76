#!/usr/bin/env python3
"""Runs the images' own renderers on cases.json and writes vectors-*.json.

This script contains none of their code: it runs the copies you point it at.

  make-vectors.py --dub-dir DIR         directory holding confluent-docker-utils' dub.py
                  --dub-template FILE   kafka-connect.properties.template of CP <= 8.0 (env_to_props)
                  --ub BIN              a `ub` binary built from common-docker's base-java/ub
                  --ub-template FILE    kafka-connect.properties.template of CP >= 8.1 (envToProps)
                  --debezium FILE       connect-base's docker-entrypoint.sh
                  --python PY           a python3 with jinja2 and requests (for dub)
"""
import argparse, json, os, shutil, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))

def run(argv, env, cwd=None):
    r = subprocess.run(argv, env=env, cwd=cwd, capture_output=True)
    return r.returncode, r.stdout, r.stderr

def dub(args, case):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.properties")
        env = dict(kv.split("=", 1) for kv in case["env"])
        code, _, err = run([args.python, "-c", "import sys; sys.path.insert(0, sys.argv[1]); sys.argv = sys.argv[1:]; import dub; dub.main()",
                            args.dub_dir, "template", os.path.abspath(args.dub_template), out], env)
        if code != 0:
            sys.exit("dub failed: " + err.decode())
        return open(out, "rb").read().decode("utf-8")

def ub(args, case):
    env = dict(kv.split("=", 1) for kv in case["env"])
    code, out, err = run([args.ub, "render-template", os.path.abspath(args.ub_template)], env)
    if code != 0:
        sys.exit("ub failed: " + err.decode())
    return out.decode("utf-8")

def debezium(args, case):
    with tempfile.TemporaryDirectory() as d:
        home = os.path.join(d, "kafka")
        for sub in ("config.orig", "config", "bin", "data"):
            os.makedirs(os.path.join(home, sub))
        shutil.copy(os.path.join(here, "debezium-base.properties"), os.path.join(home, "config.orig", "connect-distributed.properties"))
        result = os.path.join(d, "result.properties")
        stub = os.path.join(home, "bin", "connect-distributed.sh")
        with open(stub, "w") as f:
            f.write('#!/bin/sh\ncp "$1" "%s"\n' % result)
        os.chmod(stub, 0o755)
        env = dict(kv.split("=", 1) for kv in case["env"])
        env.update({"PATH": "/usr/bin:/bin", "KAFKA_HOME": home, "KAFKA_DATA": os.path.join(home, "data")})
        code, out, err = run(["bash", os.path.abspath(args.debezium), "start"], env, cwd=d)
        if not os.path.exists(result):
            return {"exit": code, "rendered": None}
        return {"exit": code, "rendered": open(result, "rb").read().decode("utf-8")}

def main():
    ap = argparse.ArgumentParser()
    for a in ("--dub-dir", "--dub-template", "--ub", "--ub-template", "--debezium", "--python"):
        ap.add_argument(a, required=True)
    args = ap.parse_args()
    cases = json.load(open(os.path.join(here, "cases.json")))
    out = {"confluent-dub": [], "confluent-ub": [], "debezium": []}
    for c in cases["confluent"]:
        out["confluent-dub"].append({"name": c["name"], "env": c["env"], "rendered": dub(args, c)})
        out["confluent-ub"].append({"name": c["name"], "env": c["env"], "rendered": ub(args, c)})
    for c in cases["debezium"]:
        r = debezium(args, c)
        out["debezium"].append({"name": c["name"], "env": c["env"], "exit": r["exit"], "rendered": r["rendered"]})
    for flavour, vs in out.items():
        with open(os.path.join(here, "vectors-%s.json" % flavour), "w") as f:
            json.dump(vs, f, indent=1, ensure_ascii=False)
            f.write("\n")

main()
