#!/usr/bin/env python3
"""Writes the example obstacle surfaces next to this script (Python 3 standard library only):

  sphere_r8.stl   binary STL: an icosphere of radius 8 about the origin (an icosahedron
                  subdivided 3 times, 1280 triangles, vertices on the sphere, normals outward)
  cube_ascii.stl  ASCII STL: the unit cube from (0, 0, 0) to (1, 1, 1), 12 triangles

The output is deterministic (same bytes on every run). Rerun after changing this script:

  python3 data/geometry/make_geometry.py
"""

import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def icosphere(radius, levels):
    """Triangles (three (x, y, z) tuples each), counter-clockwise seen from outside.

    Midpoints are shared through a cache, so neighbouring triangles hold identical vertices and
    the surface is watertight (the octoflow STL rasteriser checks this)."""
    t = (1.0 + math.sqrt(5.0)) / 2.0
    points = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
              (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]

    def to_sphere(p):
        length = math.sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2])
        return (p[0] / length, p[1] / length, p[2] / length)

    points = [to_sphere(p) for p in points]
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11),
             (1, 5, 9), (5, 11, 4), (11, 10, 2), (10, 7, 6), (7, 1, 8),
             (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9),
             (4, 9, 5), (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    for _ in range(levels):
        midpoints = {}

        def midpoint(a, b):
            key = (min(a, b), max(a, b))
            if key not in midpoints:
                p, q = points[a], points[b]
                points.append(to_sphere(((p[0] + q[0]) / 2, (p[1] + q[1]) / 2, (p[2] + q[2]) / 2)))
                midpoints[key] = len(points) - 1
            return midpoints[key]

        finer = []
        for a, b, c in faces:
            ab, bc, ca = midpoint(a, b), midpoint(b, c), midpoint(c, a)
            finer += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = finer
    return [tuple(tuple(radius * x for x in points[i]) for i in face) for face in faces]


def unit_cube():
    """The twelve triangles of [0, 1]^3, counter-clockwise seen from outside."""
    def corner(bits):
        return (float(bits & 1), float((bits >> 1) & 1), float((bits >> 2) & 1))

    # Each face: four corners counter-clockwise from outside (corner bits: x = 1, y = 2, z = 4).
    faces = [(0, 4, 6, 2), (1, 3, 7, 5), (0, 1, 5, 4), (2, 6, 7, 3), (0, 2, 3, 1), (4, 5, 7, 6)]
    triangles = []
    for a, b, c, d in faces:
        triangles.append((corner(a), corner(b), corner(c)))
        triangles.append((corner(a), corner(c), corner(d)))
    return triangles


def normal(triangle):
    a, b, c = triangle
    u = [b[i] - a[i] for i in range(3)]
    v = [c[i] - a[i] for i in range(3)]
    n = (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
    length = math.sqrt(sum(x * x for x in n))
    return tuple(x / length for x in n) if length > 0 else (0.0, 0.0, 0.0)


def write_atomically(path, data):
    # Written under a temporary name and renamed when complete: no half-written file remains.
    temporary = path + ".partial"
    with open(temporary, "wb") as stream:
        stream.write(data)
    os.replace(temporary, path)


def binary_stl(triangles):
    # The header must not begin with "solid", or some readers take the file for ASCII.
    parts = [b"octoflow binary STL".ljust(80, b"\0"), struct.pack("<I", len(triangles))]
    for triangle in triangles:
        parts.append(struct.pack("<12fH", *normal(triangle), *(x for vertex in triangle for x in vertex), 0))
    return b"".join(parts)


def ascii_stl(name, triangles):
    lines = ["solid " + name]
    for triangle in triangles:
        lines.append("  facet normal %.9g %.9g %.9g" % normal(triangle))
        lines.append("    outer loop")
        for vertex in triangle:
            lines.append("      vertex %.17g %.17g %.17g" % vertex)
        lines.append("    endloop")
        lines.append("  endfacet")
    lines.append("endsolid " + name)
    return ("\n".join(lines) + "\n").encode("ascii")


def main():
    write_atomically(os.path.join(HERE, "sphere_r8.stl"), binary_stl(icosphere(8.0, 3)))
    write_atomically(os.path.join(HERE, "cube_ascii.stl"), ascii_stl("unit_cube", unit_cube()))


if __name__ == "__main__":
    main()
