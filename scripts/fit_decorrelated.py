#!/usr/bin/env python3
"""Coefficients of the decorrelated-jitter curve f(t) = 2^t * tanh(sqrt(4t))
for src/core/retry.c (bw__dj_coef, bw__dj_center), and their check.

f is cut into pieces, each approximated by a degree-7 polynomial in
x = t - center, the Chebyshev fit (mpmath.chebyfit at 40 digits) rounded to
doubles:
  - t in [1, 16) (retries 2 to 16): sixteen pieces per unit, [k + j/16,
    k + (j+1)/16), centre k + (2j+1)/32; piece index (k-1)*16 + j;
  - t in [2^-8, 1) (the first retry): sixteen pieces per binade,
    2^e * [1 + j/16, 1 + (j+1)/16) for e = -1 .. -8, centre
    2^e * (1 + (2j+1)/32); piece index 240 + (-1-e)*16 + j.
The check evaluates every piece at random points exactly as the C code does
(Python floats are IEEE doubles; Estrin's scheme in the same order, the
constant term added last) and
compares with f at 40 digits: the worst error in units of 2^-52 relative is
printed on stderr.

  python3 scripts/fit_decorrelated.py > /tmp/dj_table.c   (needs mpmath)
"""
import random
import sys

import mpmath as mp

mp.mp.dps = 40
DEG = 7
SUB = 16


def f(t):
    return mp.power(2, t) * mp.tanh(mp.sqrt(4 * t))


def pieces():
    for k in range(1, 16):
        for j in range(SUB):
            a = mp.mpf(k) + mp.mpf(j) / SUB
            yield a, a + mp.mpf(1) / SUB
    for e in range(-1, -9, -1):
        s = mp.mpf(2) ** e
        for j in range(SUB):
            yield s * (1 + mp.mpf(j) / SUB), s * (1 + mp.mpf(j + 1) / SUB)


def estrin(c, x):
    x2 = x * x
    x4 = x2 * x2
    return c[0] + ((c[1] * x + x2 * (c[2] + c[3] * x)) + x4 * (
        (c[4] + c[5] * x) + x2 * (c[6] + c[7] * x)))


def main():
    rng = random.Random(20261130)
    coefs, centers, worst = [], [], 0.0
    for a, b in pieces():
        c = (a + b) / 2
        h = (b - a) / 2
        poly = mp.chebyfit(lambda x: f(c + x), [-h, h], DEG + 1)
        cd = [float(v) for v in reversed(poly)]  # lowest degree first
        center = float(c)
        assert mp.mpf(center) == c  # centres are exact doubles
        coefs.append(cd)
        centers.append(center)
        lo, hi = float(a), float(b)
        for i in range(40):
            t = lo + (hi - lo) * (i / 39.0 if i < 2 else rng.random())
            got = estrin(cd, t - center)
            ref = f(mp.mpf(t))
            err = abs((mp.mpf(got) - ref) / ref) * 2**52
            worst = max(worst, float(err))
    out = sys.stdout
    out.write("/* %d pieces x %d coefficients, lowest degree first */\n"
              % (len(coefs), DEG + 1))
    out.write("static const double bw__dj_coef[%d][%d] = {\n"
              % (len(coefs), DEG + 1))
    for cd in coefs:
        out.write("    {" + ", ".join(v.hex() for v in cd) + "},\n")
    out.write("};\n")
    out.write("static const double bw__dj_center[%d] = {\n" % len(centers))
    for i in range(0, len(centers), 4):
        out.write("    " + ", ".join(v.hex() for v in centers[i:i + 4])
                  + ",\n")
    out.write("};\n")
    sys.stderr.write("pieces %d, worst error %.3f units of 2^-52 relative\n"
                     % (len(coefs), worst))


if __name__ == "__main__":
    main()
