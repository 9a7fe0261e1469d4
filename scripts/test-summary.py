#!/usr/bin/env python3
"""Prints one line summing up JUnit XML reports (from lit and CTest).

usage: test-summary.py NAME=REPORT.xml ...
Exits 1 if any test failed or a report is missing.
"""
import sys
import xml.etree.ElementTree as ET


def count(path):
    passed = failed = skipped = 0
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None \
                or case.get("status") == "fail":
            failed += 1
        elif case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped


def main(args):
    parts, total, ok = [], [0, 0, 0], True
    for arg in args:
        name, _, path = arg.partition("=")
        try:
            p, f, s = count(path)
        except (OSError, ET.ParseError) as e:
            parts.append(f"{name}: no report ({e.__class__.__name__})")
            ok = False
            continue
        parts.append(f"{name}: {p} passed, {f} failed, {s} skipped")
        total = [total[0] + p, total[1] + f, total[2] + s]
    ok = ok and total[1] == 0
    print(f"nerve tests: {total[0]} passed, {total[1]} failed, {total[2]} skipped "
          f"({'; '.join(parts)})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
