"""cli-libraries.py CLI: a CLI built without render/ and the app needs no
library beyond the C library, libm and zlib (and what glibc splits off),
so that it runs on a machine with only a compiler and the CUDA toolkit.
The GPU libraries are never linked: they are loaded at run time."""
import subprocess
import sys

ALLOWED = {"libc.so.6", "libm.so.6", "libz.so.1", "libdl.so.2", "libpthread.so.0",
           "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}

out = subprocess.run(["readelf", "-d", sys.argv[1]], check=True, capture_output=True,
                     text=True).stdout
needed = [line.split("[", 1)[1].split("]", 1)[0] for line in out.splitlines()
          if "(NEEDED)" in line]
extra = [n for n in needed if n not in ALLOWED]
print("needs: " + ", ".join(needed))
if extra:
    print("FAIL: the CLI-only build links " + ", ".join(extra))
    sys.exit(1)
